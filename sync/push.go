package sync

import (
	"context"
	"fmt"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// lineChunk is how many jobs' lines one statement of line_items reads:
// lines are read chunk by chunk, and each job's hashed and dropped as
// soon as its rows are read (planChunk), so that a pass over many changed
// jobs holds a job's lines at a time, not a chunk's. linePrefetch is how
// many chunks are read ahead of the one being performed: one. With two,
// the two statements contend on the database's page latches: the database
// spends about twice the CPU, the pass takes longer and its peak is
// higher; and a smaller chunk costs the database more per line
// (BenchmarkIdlePass10k, case marker-moved).
const (
	lineChunk    = 1250
	linePrefetch = 1
)

// pushAll brings the remote up to date for every accepted job: a Draft
// whenever the shop's lines changed, Submitted once the estimate is final;
// and watches submitted jobs for changes that need a supplement. It costs
// the estimate states (one round trip, none when the shop did not change
// since the last pass), plus one round trip per chunk of jobs whose
// marker moved (or that have none), whose lines are read and hashed
// (and built into their quote for a push), plus the writes; the change
// markers of jobs examined with nothing to push are written together at
// the end.
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
	work, _ := choosePush(p.now, cands, states, badStates, !e.heldExamined.Load())
	chunks := chunkWork(work)
	// linePrefetch chunks' lines are read at once, and the next is asked
	// for as soon as one is taken: the database runs one chunk's query
	// while quotesync performs another's plans, and at most
	// linePrefetch+1 chunks' plans are in memory.
	fetch := func(c lineWork) <-chan plannedChunk {
		ch := make(chan plannedChunk, 1)
		go func() {
			defer func() {
				if v := recover(); v != nil {
					ch <- plannedChunk{err: e.recovered(v)}
				}
			}()
			ch <- e.planChunk(ctx, p.now, c)
		}()
		return ch
	}
	var ready []*pushJob
	pending := make([]<-chan plannedChunk, 0, len(chunks))
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
			if err := f.failed[i]; err != nil {
				p.fail(err)
				return
			}
			pl := f.plans[i]
			if pl.do == DoHold {
				p.add(&p.summary.Held, 1)
			}
			if r, ok := p.act.perform(ctx, p, pl); ok && pl.final {
				got[i] = &pushJob{row: r, state: c.jobs[i].state}
			}
		})
		ready = append(ready, got...)
	}
	e.commitNotes(ctx, p)
	e.submitAll(ctx, p, ready)
}

// lineWork is one chunk of the push stage: its jobs, and the job numbers
// whose lines are read (at most lineChunk: jobs with an invalid estimate
// state read none).
type lineWork struct {
	jobs []pushJob
	read []string
}

// plannedChunk is the plan of each job of a chunk, in its order.
type plannedChunk struct {
	plans []plan
	// failed holds, at a job's index, the panic its planning raised: its
	// plan does nothing, and the pass fails, as when planning panicked on
	// the job's own goroutine.
	failed []error
	err    error
}

// planChunk plans the jobs of c on their lines: each job's lines are
// hashed when shopdb hands them over (a job whose rows came apart is
// planned again on its complete lines), and kept only in the quote
// of a job to push (a pass pushes few of the jobs whose lines it hashes),
// so that the pass holds no chunk's lines (BenchmarkIdlePass10k, case
// marker-moved; BenchmarkOnceIdle10k, idle-daemon-after-full-read).
func (e *Engine) planChunk(ctx context.Context, now time.Time, c lineWork) (f plannedChunk) {
	f.plans = make([]plan, len(c.jobs))
	at := make(map[string][]int, len(c.read))
	for i, w := range c.jobs {
		if w.stateErr != nil {
			f.plans[i] = planHold(w.row, w.state, ReasonEstimateState, w.stateErr)
		} else {
			at[w.row.JobNumber] = append(at[w.row.JobNumber], i)
		}
	}
	f.failed = make([]error, len(c.jobs))
	f.err = e.eachLines(ctx, c.read, func(job string, lines []shopdb.Line, fields map[string]string, bad error) {
		defer func() {
			if v := recover(); v != nil {
				err := e.recovered(v)
				for _, i := range at[job] {
					f.plans[i], f.failed[i] = plan{row: c.jobs[i].row}, err
				}
			}
		}()
		h := hashLines(e.cfg.Quote, job, lines, fields)
		for _, i := range at[job] {
			w := c.jobs[i]
			f.failed[i] = nil
			if f.plans[i] = planJob(now, w.row, w.state, lines, bad, remote.Quote{}, h); f.plans[i].do == DoPushDraft {
				f.plans[i] = planJob(now, w.row, w.state, lines, bad, e.buildQuote(job, lines, fields), h)
			}
		}
	})
	return f
}

// chunkWork splits the push work into chunks of at most lineChunk jobs
// whose lines are read.
func chunkWork(work []pushJob) []lineWork {
	var out []lineWork
	for start := 0; start < len(work); {
		end := start
		var c lineWork
		for ; end < len(work) && len(c.read) < lineChunk; end++ {
			if w := work[end]; w.stateErr == nil {
				c.read = append(c.read, w.row.JobNumber)
			}
		}
		c.jobs = work[start:end]
		out = append(out, c)
		start = end
	}
	return out
}

// eachLines reads the quote fields, then the lines of jobs (none when
// jobs is empty), and calls f for each job with its lines, its fields and
// what holds it back: its first bad line, else its bad field (a bad line
// before a bad field, as the pass always said). A job whose rows the
// shop's query returned apart gets a second call, which counts
// (shopdb.DB.EachLines).
func (e *Engine) eachLines(ctx context.Context, jobs []string, f func(job string, lines []shopdb.Line, fields map[string]string, bad error)) error {
	if len(jobs) == 0 {
		return nil
	}
	fields, badFields, err := e.shop.QuoteFields(ctx, jobs)
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(jobs))
	call := func(job string, jl shopdb.JobLines) {
		bad := jl.Err()
		if bad == nil {
			bad = badFields[job]
		}
		seen[job] = true
		f(job, jl.Lines, fields[job], bad)
	}
	if err := e.shop.EachLines(ctx, jobs, call); err != nil {
		return err
	}
	for _, job := range jobs {
		if !seen[job] {
			call(job, shopdb.JobLines{}) // no lines in the shop
		}
	}
	return nil
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
	p.each(ctx, len(todo), func(ctx context.Context, i int) { p.act.perform(ctx, p, planSubmit(p.now, todo[i].row)) })
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
	hashes := make(map[string]string, len(unmarked))
	err = e.eachLines(ctx, unmarked, func(job string, lines []shopdb.Line, fields map[string]string, bad error) {
		hashes[job] = "" // held back: its hash is none pushed
		if bad == nil {
			hashes[job] = hashLines(e.cfg.Quote, job, lines, fields)
		}
	})
	if err != nil {
		return nil, err
	}
	kept := todo[:0]
	for _, w := range todo {
		job := w.row.JobNumber
		cur, ok := now[job]
		same := ok && badNow[job] == nil && cur.Final && cur.Marker == w.state.Marker
		if same && w.state.Marker == "" {
			same = hashes[job] != "" && hashes[job] == w.row.PushedHash
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
