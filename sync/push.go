package sync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
)

// Route names of the quote calls in events and logs.
const (
	routeCreateQuote = "POST /jobs/{id}/quotes"
	routeUpdateDraft = "update draft"
	routeSetStatus   = "status Submitted"
)

// pushJob is one job the push stage looks at.
type pushJob struct {
	row      shopdb.Request
	state    shopdb.JobState
	stateErr error // estimate_state's row for the job is invalid
}

// lineItems reads the lines of jobs, none when jobs is empty.
func (e *Engine) lineItems(ctx context.Context, jobs []string) (map[string][]shopdb.Line, map[string]error, error) {
	if len(jobs) == 0 {
		return nil, nil, nil
	}
	return e.store.LineItems(ctx, jobs)
}

// pushAll brings the remote up to date for every accepted job: a Draft
// whenever the shop's lines changed, Submitted once the estimate is final;
// and watches submitted jobs for changes that need a supplement. It costs
// one JobStates round trip, plus one LineItems round trip when some job
// changed, plus the writes.
func (e *Engine) pushAll(ctx context.Context, p *pass, rows []shopdb.Request) {
	var candidates []shopdb.Request
	var jobs []string
	for _, r := range rows {
		switch r.Phase {
		case shopdb.PhaseAccepted, shopdb.PhaseDrafted:
		case shopdb.PhaseSubmitted:
			if r.SupplementNeeded {
				continue
			}
		default:
			continue
		}
		candidates = append(candidates, r)
		jobs = append(jobs, r.JobNumber)
	}
	if len(jobs) == 0 {
		return
	}
	states, badStates, err := e.store.JobStates(ctx, jobs)
	if err != nil {
		e.Metrics.Error(ErrKindState)
		if ctx.Err() == nil {
			p.fail(fmt.Errorf("read estimate states: %w", err))
		}
		return
	}
	var work []pushJob
	var need []string
	for _, r := range candidates {
		if berr, bad := badStates[r.JobNumber]; bad {
			if r.Phase != shopdb.PhaseSubmitted {
				// Held with no marker remembered, so that the job is read
				// again as soon as its estimate state is valid.
				work = append(work, pushJob{row: r, state: shopdb.JobState{Job: r.JobNumber}, stateErr: berr})
			}
			continue
		}
		st, ok := states[r.JobNumber]
		if !ok {
			continue // no estimate in the shop yet
		}
		changed := st.Marker == "" || st.Marker != r.PushedMarker
		held := isHeld(r)
		finalDue := st.Final && r.Phase != shopdb.PhaseSubmitted && !held
		if (changed || finalDue) && p.due(r) {
			work = append(work, pushJob{row: r, state: st})
			need = append(need, r.JobNumber)
		}
	}
	if len(work) == 0 {
		return
	}
	lines, bad, err := e.lineItems(ctx, need)
	if err != nil {
		e.Metrics.Error(ErrKindState)
		if ctx.Err() == nil {
			p.fail(fmt.Errorf("read estimate lines: %w", err))
		}
		return
	}
	ready := make([]*pushJob, len(work))
	p.each(ctx, len(work), func(ctx context.Context, i int) {
		w := work[i]
		if w.stateErr != nil {
			e.hold(ctx, p, w.row, w.state, w.stateErr)
			return
		}
		if r, ok := e.reconcileJob(ctx, p, w.row, w.state, lines[w.row.JobNumber], bad[w.row.JobNumber]); ok {
			ready[i] = &pushJob{row: r, state: w.state}
		}
	})
	e.submitAll(ctx, p, ready)
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
		if w != nil {
			todo = append(todo, *w)
		}
	}
	if len(todo) == 0 || ctx.Err() != nil {
		return
	}
	if !p.dry {
		var err error
		if todo, err = e.stillFinal(ctx, todo); err != nil {
			e.Metrics.Error(ErrKindState)
			if ctx.Err() == nil {
				p.fail(fmt.Errorf("re-read estimates before submitting: %w", err))
			}
			return
		}
	}
	p.each(ctx, len(todo), func(ctx context.Context, i int) { e.submit(ctx, p, todo[i].row) })
}

// stillFinal keeps the jobs whose estimate is still final and unchanged
// since the pass read it.
func (e *Engine) stillFinal(ctx context.Context, todo []pushJob) ([]pushJob, error) {
	jobs := make([]string, 0, len(todo))
	var unmarked []string
	for _, w := range todo {
		jobs = append(jobs, w.row.JobNumber)
		if w.state.Marker == "" {
			unmarked = append(unmarked, w.row.JobNumber)
		}
	}
	now, badNow, err := e.store.JobStates(ctx, jobs)
	if err != nil {
		return nil, err
	}
	lines, badLines, err := e.lineItems(ctx, unmarked)
	if err != nil {
		return nil, err
	}
	kept := todo[:0]
	for _, w := range todo {
		job := w.row.JobNumber
		cur, ok := now[job]
		same := ok && badNow[job] == nil && cur.Final && cur.Marker == w.state.Marker
		if same && w.state.Marker == "" {
			same = badLines[job] == nil && hashQuote(e.buildQuote(job, lines[job])) == w.row.PushedHash
		}
		if same {
			kept = append(kept, w)
			continue
		}
		e.log.Info(MsgSubmitDeferred, requestFields(w.row)...)
	}
	return kept, nil
}

// reconcileJob makes the remote hold the job's current lines. It returns
// the row, and true when the estimate is final and the remote holds its
// content: the job is ready to submit.
func (e *Engine) reconcileJob(ctx context.Context, p *pass, r shopdb.Request, st shopdb.JobState, lines []shopdb.Line, badErr error) (shopdb.Request, bool) {
	if badErr == nil && st.Final && len(lines) == 0 && r.Phase != shopdb.PhaseSubmitted {
		badErr = fmt.Errorf("job %s: the estimate is final but has no lines; add lines or take it back to draft", r.JobNumber)
	}
	if badErr != nil {
		e.hold(ctx, p, r, st, badErr)
		return r, false
	}
	q := e.buildQuote(r.JobNumber, lines)
	hash := hashQuote(q)
	if r.Phase == shopdb.PhaseSubmitted {
		e.watchSubmitted(ctx, p, r, st, hash)
		return r, false
	}
	if r.Phase == shopdb.PhaseAccepted && len(lines) == 0 && r.PushedAt.IsZero() {
		// Nothing to push until the shop writes lines. (With PushedAt set,
		// a first push was sent and may have landed: the empty quote is
		// pushed over whatever the remote holds.)
		e.noteExamined(ctx, p, r, st)
		return r, false
	}
	var ok bool
	if r.Phase == shopdb.PhaseAccepted || hash != r.PushedHash {
		r, ok = e.pushDraft(ctx, p, r, st, q, hash)
	} else {
		r, ok = e.noteExamined(ctx, p, r, st)
	}
	return r, ok && st.Final
}

// pushDraft pushes the job's quote as a Draft: created on the first push,
// updated (per remote.Config.DraftUpdate) after that.
func (e *Engine) pushDraft(ctx context.Context, p *pass, r shopdb.Request, st shopdb.JobState, q remote.Quote, hash string) (shopdb.Request, bool) {
	first := r.Phase == shopdb.PhaseAccepted
	released := isHeld(r) // the shop fixed the data this job was held for
	if p.dry {
		why := "lines changed since the last push"
		if first {
			why = "first draft of the job's lines"
		}
		p.plan(Action{Request: r.RequestID, Claim: r.ClaimNumber, Job: r.JobNumber, Phase: r.Phase, Do: DoPushDraft, Why: why, Items: len(q.Items)})
		return r, true
	}
	if r.PushedHash != "" || r.PushedAt.IsZero() {
		// Intent before effect: from here until the answer is recorded, what
		// the remote holds is unknown. A push whose answer is lost (a kill,
		// a dropped connection) leaves PushedHash empty, so the next pass
		// pushes the shop's lines again even if the shop meanwhile went
		// back to what was pushed before, or deleted every line (PushedAt
		// set on an accepted row says a first Draft may exist).
		next := r
		next.PushedHash, next.PushedAt = "", p.now
		var ok bool
		if r, ok = e.save(ctx, p, r, next, shopdb.Event{}); !ok {
			return r, false
		}
	}
	if !p.acquire(ctx) {
		return r, false
	}
	route := routeCreateQuote
	start := time.Now()
	var err error
	if first {
		_, err = e.remote.CreateQuote(ctx, r.JobNumber, q)
	} else {
		route = routeUpdateDraft
		_, err = e.remote.UpdateDraft(ctx, r.JobNumber, q)
	}
	d := time.Since(start)
	p.release()
	switch {
	case err == nil:
		next := r
		next.Phase = shopdb.PhaseDrafted
		next.PushedHash, next.PushedMarker, next.PushedAt = hash, st.Marker, p.now
		next.SubmittedAt = time.Time{} // the remote's quote is a Draft: no submit of ours landed
		next.Attempts, next.LastError, next.NextAttemptAt = 0, "", time.Time{}
		ev := callEvent(route, nil, r.Attempts+1, d)
		ev.Message = fmt.Sprintf("draft with %d items, hash %.12s", len(q.Items), hash)
		if first {
			ev.Kind = shopdb.EventPhase
		}
		saved, ok := e.save(ctx, p, r, next, ev)
		if ok {
			msg := MsgRedrafted
			if first {
				msg = MsgDrafted
				p.count(func(s *Summary) { s.Drafted++ })
			} else {
				p.count(func(s *Summary) { s.Redrafted++ })
			}
			fields := append(requestFields(saved), zap.Int(FieldItems, len(q.Items)),
				zap.Int(FieldAttempt, r.Attempts+1), zap.Duration(FieldDuration, d))
			if released {
				fields = append(fields, zap.Bool(FieldReleased, true))
			}
			e.log.Info(msg, fields...)
		}
		return saved, ok
	case ctx.Err() != nil:
	case errors.Is(err, remote.ErrUnauthorized):
		e.unauthorized(p, err)
	case errors.Is(err, remote.ErrConflict) && !r.SubmittedAt.IsZero():
		// A submit of ours was sent and its answer lost: it landed, the
		// remote holds a Submitted quote, and the new lines need a
		// supplement.
		e.submittedElsewhere(ctx, p, r, st, err)
	case errors.Is(err, remote.ErrConflict):
		e.reject(ctx, p, r, route, fmt.Errorf("push draft of job %s: the remote refused it as a conflict and no submit of ours was sent; if the service does not let a new POST replace a Draft, set remote.draft_update: put, then run quotesync retry %s: %w",
			r.JobNumber, r.RequestID, err), d)
	case errors.Is(err, remote.ErrNotFound) && first:
		e.markGone(ctx, p, r, fmt.Sprintf("the remote does not know job %s: the request was withdrawn or expired before our accept landed (%v)", r.JobNumber, err))
	case errors.Is(err, remote.ErrNotFound), errors.Is(err, remote.ErrRejected):
		e.reject(ctx, p, r, route, fmt.Errorf("push draft of job %s: %w", r.JobNumber, err), d)
	default:
		e.retryLater(ctx, p, r, route, err, d)
	}
	return r, false
}

// submit changes the quote's status to Submitted. A 409 means it already
// is: an earlier submit of ours landed without its answer.
func (e *Engine) submit(ctx context.Context, p *pass, r shopdb.Request) {
	if p.dry {
		p.plan(Action{Request: r.RequestID, Claim: r.ClaimNumber, Job: r.JobNumber, Phase: r.Phase, Do: DoSubmit,
			Why: "the estimate is final and the remote holds its content"})
		return
	}
	if r.SubmittedAt.IsZero() {
		// Intent before effect: only a row that says a submit was sent may
		// read a later 409 to a Draft push as "already Submitted".
		next := r
		next.SubmittedAt = p.now
		var ok bool
		if r, ok = e.save(ctx, p, r, next, shopdb.Event{}); !ok {
			return
		}
	}
	if !p.acquire(ctx) {
		return
	}
	start := time.Now()
	_, err := e.remote.SetStatus(ctx, r.JobNumber, e.cfg.Quote.Type, remote.StatusSubmitted)
	d := time.Since(start)
	p.release()
	switch {
	case err == nil, errors.Is(err, remote.ErrConflict):
		next := r
		next.Phase = shopdb.PhaseSubmitted
		next.SubmittedAt = p.now
		next.Attempts, next.LastError, next.NextAttemptAt = 0, "", time.Time{}
		ev := callEvent(routeSetStatus, err, r.Attempts+1, d)
		ev.Kind = shopdb.EventPhase
		if err == nil {
			ev.Status = 200
		} else {
			ev.Message = "already Submitted on the remote: " + err.Error()
		}
		if saved, ok := e.save(ctx, p, r, next, ev); ok {
			p.count(func(s *Summary) { s.Submitted++ })
			e.log.Info(MsgSubmitted, append(requestFields(saved), zap.Int(FieldAttempt, r.Attempts+1),
				zap.Int(FieldStatus, ev.Status), zap.Duration(FieldDuration, d))...)
		}
	case ctx.Err() != nil:
	case errors.Is(err, remote.ErrUnauthorized):
		e.unauthorized(p, err)
	case errors.Is(err, remote.ErrNotFound), errors.Is(err, remote.ErrRejected):
		e.reject(ctx, p, r, routeSetStatus, fmt.Errorf("submit quote of job %s: %w", r.JobNumber, err), d)
	default:
		e.retryLater(ctx, p, r, routeSetStatus, err, d)
	}
}

// submittedElsewhere records that the remote's quote is already Submitted
// while the shop's lines differ from what was pushed.
func (e *Engine) submittedElsewhere(ctx context.Context, p *pass, r shopdb.Request, st shopdb.JobState, err error) {
	next := r
	next.Phase = shopdb.PhaseSubmitted
	next.SubmittedAt = p.now
	next.SupplementNeeded = true
	next.PushedMarker = st.Marker
	next.Attempts, next.LastError, next.NextAttemptAt = 0, "", time.Time{}
	ev := callEvent(routeUpdateDraft, err, r.Attempts+1, 0)
	ev.Kind = shopdb.EventPhase
	ev.Message = "the remote quote is already Submitted; the shop's newer lines need a supplement: " + err.Error()
	if saved, ok := e.save(ctx, p, r, next, ev); ok {
		p.count(func(s *Summary) { s.Submitted++; s.Supplements++ })
		e.log.Warn(MsgSupplement, append(requestFields(saved), zap.String(FieldFrom, string(r.Phase)), zap.Error(err))...)
	}
}

// watchSubmitted flags a submitted job whose lines changed: a supplement
// is needed, and is never pushed.
func (e *Engine) watchSubmitted(ctx context.Context, p *pass, r shopdb.Request, st shopdb.JobState, hash string) {
	if hash == r.PushedHash {
		e.noteExamined(ctx, p, r, st)
		return
	}
	if p.dry {
		p.plan(Action{Request: r.RequestID, Claim: r.ClaimNumber, Job: r.JobNumber, Phase: r.Phase, Do: DoFlagSupplement,
			Why: "the shop's lines changed after the quote was submitted"})
		return
	}
	next := r
	next.SupplementNeeded = true
	next.PushedMarker = st.Marker
	ev := shopdb.Event{Kind: shopdb.EventWarning, Message: "lines changed after submission; a supplement is needed and was not pushed"}
	if saved, ok := e.save(ctx, p, r, next, ev); ok {
		p.count(func(s *Summary) { s.Supplements++ })
		e.log.Warn(MsgSupplement, requestFields(saved)...)
	}
}

// hold records invalid shop data on a job: the job keeps its phase, the
// reason is shown by status and logged once, and the job is looked at again
// when the shop's change marker moves.
func (e *Engine) hold(ctx context.Context, p *pass, r shopdb.Request, st shopdb.JobState, reason error) {
	e.Metrics.Error(ErrKindShopData)
	p.count(func(s *Summary) { s.Held++ })
	if p.dry {
		p.plan(Action{Request: r.RequestID, Claim: r.ClaimNumber, Job: r.JobNumber, Phase: r.Phase, Do: DoHold, Why: reason.Error()})
		return
	}
	msg := capText(heldPrefix + reason.Error())
	if r.LastError == msg && r.PushedMarker == st.Marker {
		return
	}
	next := r
	next.LastError = msg
	next.PushedMarker = st.Marker
	var ev shopdb.Event
	if r.LastError != msg {
		ev = shopdb.Event{Kind: shopdb.EventWarning, Message: msg}
	}
	if saved, ok := e.save(ctx, p, r, next, ev); ok && r.LastError != msg {
		e.log.Warn(MsgHeld, append(requestFields(saved), zap.Error(reason))...)
	}
}

// noteExamined records that the job's current lines were looked at and
// need no push (their hash equals what the remote holds), so that the next
// pass skips them until the shop's change marker moves; a job that was
// held is released.
func (e *Engine) noteExamined(ctx context.Context, p *pass, r shopdb.Request, st shopdb.JobState) (shopdb.Request, bool) {
	recovered := isHeld(r)
	if (r.PushedMarker == st.Marker && !recovered) || p.dry {
		return r, true
	}
	next := r
	next.PushedMarker = st.Marker
	var ev shopdb.Event
	if recovered {
		next.LastError = ""
		ev = shopdb.Event{Kind: shopdb.EventWarning, Message: "shop data valid again"}
	}
	saved, ok := e.save(ctx, p, r, next, ev)
	if ok && recovered {
		e.log.Info(MsgRecovered, requestFields(saved)...)
	}
	return saved, ok
}
