package sync

import (
	"context"
	"fmt"
	"slices"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// lineItems reads the lines of jobs, none when jobs is empty.
func (e *Engine) lineItems(ctx context.Context, jobs []string) (map[string][]shopdb.Line, map[string]error, error) {
	if len(jobs) == 0 {
		return nil, nil, nil
	}
	return e.shop.LineItems(ctx, jobs)
}

// examineHeld reports whether this pass examines every held job again: the
// first successful pass of an engine (built at a start or a reload) does,
// so that a hold the configuration lifts is lifted.
func (e *Engine) examineHeld() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return !e.heldExamined
}

// lineChunk is how many jobs' lines one LineItems statement reads: lines
// are read, hashed and dropped chunk by chunk, so that a pass over many
// changed jobs holds only one chunk's lines at a time. digestChunk is the
// same for the jobs whose lines are only hashed (LineTexts: a few bytes
// of text per line, no decimals). linePrefetch is how many chunks are read
// ahead of the one being hashed: one. With two, the two statements
// contend on the database's page latches: the database spends about twice
// the CPU, the pass takes longer and its peak is higher (BenchmarkIdlePass10k,
// case marker-moved; the figures are in docs/benchmarks.md); and a smaller
// digestChunk costs the database more per line.
const (
	lineChunk    = 500
	digestChunk  = 1250
	linePrefetch = 1
)

// pushAll brings the remote up to date for every accepted job: a Draft
// whenever the shop's lines changed, Submitted once the estimate is final;
// and watches submitted jobs for changes that need a supplement. It costs
// the estimate states (one round trip, none when the shop did not change
// since the last pass), plus, per chunk of jobs whose marker moved (or
// that have none), one LineTexts round trip that hashes the lines of the
// jobs that may be unchanged and one LineItems round trip for the jobs
// that did change (or must be pushed whatever their lines), plus the
// writes; the change markers of jobs examined with nothing to push are
// written together at the end.
func (e *Engine) pushAll(ctx context.Context, p *pass, rows []store.Request) {
	cands, jobs := pushCandidates(rows)
	e.rememberJobs(p, jobs)
	if len(jobs) == 0 {
		return
	}
	states, badStates, err := e.readStates(ctx, p, jobs)
	if err != nil {
		if ctx.Err() == nil {
			p.fail(fmt.Errorf("read estimate states: %w", err))
		}
		return
	}
	work, _ := choosePush(p.now, cands, states, badStates, e.examineHeld())
	chunks := chunkWork(work)
	// linePrefetch chunks' lines are read at once, and the next is asked
	// for as soon as one is taken: the database runs one chunk's query
	// while quotesync parses and hashes another's rows, and at most
	// linePrefetch+1 chunks' lines are in memory.
	fetch := func(c lineWork) <-chan fetchedLines {
		ch := make(chan fetchedLines, 1)
		go func() {
			defer func() {
				if v := recover(); v != nil {
					ch <- fetchedLines{err: e.recovered(v)}
				}
			}()
			ch <- e.readLines(ctx, c)
		}()
		return ch
	}
	var ready []*pushJob
	pending := make([]<-chan fetchedLines, 0, len(chunks))
	for _, c := range chunks[:min(linePrefetch, len(chunks))] {
		pending = append(pending, fetch(c))
	}
	for i, c := range chunks {
		f := <-pending[i]
		if f.err != nil {
			if ctx.Err() == nil {
				p.fail(fmt.Errorf("read estimate lines: %w", f.err))
			}
			break
		}
		if ctx.Err() != nil {
			break
		}
		if j := i + linePrefetch; j < len(chunks) {
			pending = append(pending, fetch(chunks[j]))
		}
		got := make([]*pushJob, len(c.jobs))
		p.each(ctx, len(c.jobs), func(ctx context.Context, i int) {
			w := c.jobs[i]
			job := w.row.JobNumber
			var pl plan
			switch {
			case w.stateErr != nil:
				pl = planHold(w.row, w.state, ReasonEstimateState, w.stateErr)
			case f.same[job]:
				pl = planNote(w.row, w.state, submitDue(w.row, w.state))
			default:
				q := e.buildQuote(job, f.lines[job], f.fields[job])
				pl = planJob(p.now, w.row, w.state, f.lines[job], f.bad[job], q, hashQuote(q))
			}
			if pl.do == DoHold {
				p.countHeld()
			}
			if r, ok := p.perform(ctx, pl); ok && pl.final {
				got[i] = &pushJob{row: r, state: w.state}
			}
		})
		ready = append(ready, got...)
	}
	e.commitNotes(ctx, p)
	e.submitAll(ctx, p, ready)
}

// lineWork is one chunk of the push stage: its jobs, the job numbers
// whose lines are only hashed first (digest: at most digestChunk), and
// those whose lines are read in full (full: at most lineChunk).
type lineWork struct {
	jobs         []pushJob
	digest, full []string
}

// fetchedLines is one chunk's lines: the jobs whose lines hash to what
// the remote holds (same), and the lines of the others; the quote-level
// fields of every job of the chunk (shop.queries.quote_fields). bad holds
// the jobs whose lines or fields are invalid.
type fetchedLines struct {
	same   map[string]bool
	lines  map[string][]shopdb.Line
	fields map[string]map[string]string
	bad    map[string]error
	err    error
}

// digestable reports whether r's lines may be hashed only: it has an
// acknowledged Draft, no push in flight and no hold, so that lines that
// hash to what was pushed leave nothing to do but remember the marker.
func digestable(w pushJob) bool {
	r := w.row
	return w.stateErr == nil && !first(r) && r.Intent != IntentPush && !held(r) && r.PushedHash != ""
}

// unchanged reports whether a digestable job whose n lines hash to hash
// has nothing to push: decideJob would answer jobNote.
func unchanged(r store.Request, st shopdb.JobState, n int, hash string) bool {
	if st.Final && n == 0 && r.Phase != PhaseSubmitted {
		return false // held: final without lines
	}
	return hash == r.PushedHash
}

// chunkWork splits the push work into chunks of at most lineChunk jobs
// whose lines are read and digestChunk jobs whose lines are hashed (jobs
// with an invalid estimate state read none).
func chunkWork(work []pushJob) []lineWork {
	var out []lineWork
	for start := 0; start < len(work); {
		end := start
		var c lineWork
		for end < len(work) && len(c.full) < lineChunk && len(c.digest) < digestChunk {
			switch w := work[end]; {
			case w.stateErr != nil:
			case digestable(w):
				c.digest = append(c.digest, w.row.JobNumber)
			default:
				c.full = append(c.full, w.row.JobNumber)
			}
			end++
		}
		c.jobs = work[start:end]
		out = append(out, c)
		start = end
	}
	return out
}

// readLines reads one chunk's lines: the digest jobs' as text, hashed as
// they come; those that changed (or that the text reading cannot vouch
// for) are read in full with the full jobs, in one more statement.
func (e *Engine) readLines(ctx context.Context, c lineWork) fetchedLines {
	f := fetchedLines{same: map[string]bool{}}
	var badFields map[string]error
	if f.fields, badFields, f.err = e.shop.QuoteFields(ctx, append(slices.Clone(c.digest), c.full...)); f.err != nil {
		return f
	}
	full := c.full
	if len(c.digest) > 0 {
		rows := make(map[string]pushJob, len(c.digest))
		for _, w := range c.jobs {
			if digestable(w) {
				rows[w.row.JobNumber] = w
			}
		}
		cw := &canonWriter{}
		seen := make(map[string]bool, len(c.digest))
		unsure, err := e.shop.LineTexts(ctx, c.digest, func(job string, lines []shopdb.LineText) {
			seen[job] = true
			w := rows[job]
			if badFields[job] == nil && unchanged(w.row, w.state, len(lines), e.hashLines(cw, job, lines, f.fields[job])) {
				f.same[job] = true
			}
		})
		if err != nil {
			f.err = err
			return f
		}
		skip := make(map[string]bool, len(unsure))
		for _, job := range unsure {
			skip[job] = true
		}
		full = slices.Clone(full)
		for _, job := range c.digest {
			if !seen[job] && !skip[job] && badFields[job] == nil {
				w := rows[job] // no lines in the shop
				f.same[job] = unchanged(w.row, w.state, 0, e.hashLines(cw, job, nil, f.fields[job]))
			}
			if !f.same[job] {
				full = append(full, job)
			}
		}
	}
	f.lines, f.bad, f.err = e.lineItems(ctx, full)
	for job, err := range badFields {
		if f.bad == nil {
			f.bad = map[string]error{}
		}
		if f.bad[job] == nil {
			f.bad[job] = err
		}
	}
	return f
}

// submitAll submits the final estimates whose content the remote now
// holds. The lines were read in a later statement than the estimate
// states, so the states are read again first, for all of them in one
// statement: a shop that edited or reopened an estimate in between must
// not get a quote submitted that was never its final content (the next
// pass sees the change and pushes it). Without a change marker in
// estimate_state, the lines of those jobs are read again too and must hash
// to what was pushed.
func (e *Engine) submitAll(ctx context.Context, p *pass, ready []*pushJob) {
	var todo []pushJob
	for _, w := range ready {
		if w != nil && submitDue(w.row, w.state) {
			todo = append(todo, *w)
		}
	}
	if len(todo) == 0 || ctx.Err() != nil {
		return
	}
	todo = p.act.stillFinal(ctx, p, todo)
	p.each(ctx, len(todo), func(ctx context.Context, i int) { p.perform(ctx, planSubmit(p.now, todo[i].row)) })
}

// stillFinal keeps the jobs whose estimate is still final and unchanged
// since the pass read it, read again in one statement; none when the read
// fails (a failure of the pass).
func (e *Engine) stillFinal(ctx context.Context, p *pass, todo []pushJob) []pushJob {
	kept, err := e.readStillFinal(ctx, todo)
	if err != nil {
		if ctx.Err() == nil {
			p.fail(fmt.Errorf("re-read estimates before submitting: %w", err))
		}
		return nil
	}
	return kept
}

// readStillFinal reads the estimates of todo again and keeps those still
// final with the marker (or, without one, the lines) the pass pushed.
func (e *Engine) readStillFinal(ctx context.Context, todo []pushJob) ([]pushJob, error) {
	jobs := make([]string, 0, len(todo))
	var unmarked []string
	for _, w := range todo {
		jobs = append(jobs, w.row.JobNumber)
		if w.state.Marker == "" {
			unmarked = append(unmarked, w.row.JobNumber)
		}
	}
	now, badNow, err := e.shop.JobStates(ctx, jobs)
	if err != nil {
		return nil, err
	}
	lines, badLines, err := e.lineItems(ctx, unmarked)
	if err != nil {
		return nil, err
	}
	var fields map[string]map[string]string
	var badFields map[string]error
	if len(unmarked) > 0 {
		if fields, badFields, err = e.shop.QuoteFields(ctx, unmarked); err != nil {
			return nil, err
		}
	}
	kept := todo[:0]
	for _, w := range todo {
		job := w.row.JobNumber
		cur, ok := now[job]
		same := ok && badNow[job] == nil && cur.Final && cur.Marker == w.state.Marker
		if same && w.state.Marker == "" {
			same = badLines[job] == nil && badFields[job] == nil && hashQuote(e.buildQuote(job, lines[job], fields[job])) == w.row.PushedHash
		}
		if same {
			kept = append(kept, w)
			continue
		}
		e.emit(Event{Kind: EventSubmitDeferred, Request: w.row.RequestID, Claim: w.row.ClaimNumber, Job: job,
			From: w.row.Phase, To: w.row.Phase})
	}
	return kept, nil
}
