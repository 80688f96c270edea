package sync

import (
	"context"
	"errors"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// A pass decides, then acts. For each request a decision (planAccept,
// planJob, planSubmit) returns a plan: data that says what to do. The
// pass hands every plan to its performer: the executor (exec.go) writes
// and calls; a dry run's printer prints the plan as an Action and
// performs nothing. Which performer a pass has is chosen once, when it
// starts (Engine.pass); no step asks whether it is a dry run.

// plan is what one decision asks for one request, in the order the
// executor performs it: reserve a job number, write change, make call and
// write the change its answer decides.
type plan struct {
	row store.Request // the row as read (a new request's has Version 0 and no phase)
	// do and why are what a dry run prints ("" do: nothing to print).
	do, why string
	items   int // a push: its quote items
	// reserve: find or create the request's job and record it reserved,
	// in one shop transaction (Engine.reserve); a dry run looks the job up.
	reserve *remote.Request
	// change is written first: the whole plan when there is no call, else
	// the intent recorded before it.
	change *change
	// marker: only the job's change marker is remembered, written with
	// the others at the end of the push stage (commitNotes).
	marker *store.MarkerUpdate
	call   call
	// final: the job is ready to submit once the plan is performed.
	final bool
}

// callKind names a remote call a plan makes.
type callKind int

const (
	callNone        callKind = iota
	callAccept               // accept the request with our job number
	callCreateQuote          // push the first Draft
	callUpdateDraft          // push a Draft again
	callSubmit               // change the quote's status to Submitted
)

// call is a plan's remote call, with what the decision on its answer
// needs besides the answer.
type call struct {
	kind callKind
	// an accept: the remote lists the request as pending in this pass; an
	// earlier accept of ours may have landed.
	listed, maybeLanded bool
	// a push: the estimate state and the decision it was pushed on.
	st shopdb.JobState
	d  jobDecision
}

// answer is what came of a remote call, with the clock and the chance
// the decision on it takes as inputs: now is when the answer came, jitter
// a number in [0, 1) that spreads a backoff (the engine's Now and Rand).
type answer struct {
	now    time.Time
	jitter float64
	err    error
	d      time.Duration
}

// decide turns the answer to c into a change of cur (decideAccept,
// decidePush, decideSubmit); ok is false when it settles nothing.
func (c call) decide(cfg Config, cur store.Request, a answer) (change, bool) {
	switch c.kind {
	case callAccept:
		return decideAccept(cfg, cur, c, a)
	case callCreateQuote, callUpdateDraft:
		return decidePush(cfg, cur, c, a)
	case callSubmit:
		return decideSubmit(cfg, cur, a)
	}
	return change{}, false
}

// landed reports whether the change recorded after c is the outcome the
// pass goes on from: an accept stage's accepted row goes on to the push
// stage, a final job's readable Draft to its submit.
func (c call) landed(saved store.Request) bool {
	switch c.kind {
	case callAccept:
		return saved.Phase == PhaseAccepted || saved.Phase == PhaseAcceptUnknown
	case callCreateQuote, callUpdateDraft:
		return saved.Phase == PhaseDrafted && saved.Reason != ReasonUnreadable
	case callSubmit:
		return saved.Phase == PhaseSubmitted
	}
	return true
}

// action is how a dry run prints pl.
func (pl plan) action() Action {
	r := pl.row
	return Action{Request: r.RequestID, Claim: r.ClaimNumber, Job: r.JobNumber, Phase: r.Phase,
		Do: pl.do, Why: pl.why, Items: pl.items}
}

// performer carries out the plans of a pass: the Engine itself (the
// executor), or a dry run's printer.
type performer interface {
	// perform carries out pl; it returns the row after it, and whether the
	// pass goes on from it (see call.landed; true for a plan without a
	// call).
	perform(ctx context.Context, p *pass, pl plan) (store.Request, bool)
	// stillFinal keeps the ready jobs that may be submitted now.
	stillFinal(ctx context.Context, p *pass, ready []pushJob) []pushJob
	// finished reports the end of p (err is its outcome); rows are those
	// it worked on, nil when it stopped early.
	finished(p *pass, rows []store.Request, err error)
	// panicked reports the end of p, in which a panic was recovered (err),
	// unless its end was being reported already (see passPanicked).
	panicked(p *pass, err error)
	// untracked reports whether err, of the read of quotesync's rows,
	// means that nothing is tracked yet and the pass goes on as if so:
	// for a dry run on a database whose tables do not exist yet (the
	// first start creates them).
	untracked(err error) bool
}

// printer is a dry run's performer: it prints each plan as an Action and
// performs nothing. It reads what a plan needs to be printed (find_job,
// in a read-only transaction) and writes nowhere.
type printer struct{ e *Engine }

func (pr printer) perform(ctx context.Context, p *pass, pl plan) (store.Request, bool) {
	a := pl.action()
	a.Insurer = pr.e.cfg.Insurer
	if pl.reserve != nil {
		a = pr.e.reserveAction(ctx, a, *pl.reserve)
	}
	if a.Do != "" {
		p.mu.Lock()
		p.actions = append(p.actions, a)
		p.mu.Unlock()
	}
	// A dry run takes a push as landing, so that the submit it leads to
	// is printed too; what follows an accept depends on its answer, and
	// is left to the next pass.
	return pl.row, pl.call.kind != callAccept
}

// stillFinal keeps every ready job: a dry run submits nothing, so it
// reads nothing again.
func (printer) stillFinal(_ context.Context, _ *pass, ready []pushJob) []pushJob { return ready }

// finished reports nothing: a dry run changed nothing.
func (printer) finished(*pass, []store.Request, error) {}

// panicked reports nothing: a dry run's failure is its caller's error.
func (printer) panicked(*pass, error) {}

// untracked: a dry run plans on a database whose tables do not exist yet
// as on empty ones.
func (printer) untracked(err error) bool { return errors.Is(err, store.ErrNoStateTables) }
