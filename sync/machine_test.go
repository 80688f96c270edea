package sync

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
	"go.uber.org/zap"
)

// transition is one edge of the state machine.
type transition struct{ from, to store.Phase }

func (t transition) String() string {
	from := string(t.from)
	if from == "" {
		from = "new"
	}
	return from + " -> " + string(t.to)
}

// allTransitions lists every edge the table allows, staying in an open
// phase included.
func allTransitions() map[transition]bool {
	out := map[transition]bool{}
	for _, p := range phaseTable {
		for _, q := range phaseTable {
			if q.Phase != phaseNew && allowed(p.Phase, q.Phase) {
				out[transition{p.Phase, q.Phase}] = true
			}
		}
	}
	return out
}

// remoteErr is what the client returns for an HTTP answer.
func remoteErr(status int, body string) error {
	var sentinel error
	switch {
	case status == 401 || status == 403:
		sentinel = remote.ErrUnauthorized
	case status == 404 || status == 410:
		sentinel = remote.ErrNotFound
	case status == 409:
		sentinel = remote.ErrConflict
	case status >= 500:
		sentinel = remote.ErrTemporary
	default:
		sentinel = remote.ErrRejected
	}
	return &remote.Error{Method: http.MethodPost, Path: "/x", Status: status, Body: body, Attempts: 1, Err: sentinel}
}

// TestEveryTransitionReachable walks the whole table: each transition it
// allows is produced by some decision, each decision's change is one the
// table allows, and every other transition is refused before anything is
// written.
func TestEveryTransitionReachable(t *testing.T) {
	cfg := DefaultConfig().withDefaults()
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	req := remote.Request{ID: "1", ClaimNumber: "C1", Expiry: now.Add(time.Hour)}
	row := func(ph store.Phase) store.Request {
		return store.Request{RequestID: "1", ClaimNumber: "C1", JobNumber: "RO-1", Phase: ph, Version: 3,
			Expiry: now.Add(time.Hour), Intent: IntentAccept}
	}
	st := shopdb.JobState{Job: "RO-1", Marker: "m2"}
	pushed := jobDecision{hash: "h2"}
	// The answers are decided as the executor decides them (call.decide),
	// the clock and the chance given.
	decided := func(c call, cur store.Request, err error) change {
		ch, ok := c.decide(cfg, cur, answer{now: now, jitter: 0.5, err: err})
		if !ok {
			t.Fatalf("the answer %v to call %d on %s settled nothing", err, c.kind, cur.Phase)
		}
		return ch
	}
	accept := func(cur store.Request, listed, maybe bool, err error) change {
		return decided(call{kind: callAccept, listed: listed, maybeLanded: maybe}, cur, err)
	}
	push := func(cur store.Request, err error) change {
		return decided(call{kind: callCreateQuote, st: st, d: pushed}, cur, err)
	}
	submit := func(cur store.Request, err error) change {
		return decided(call{kind: callSubmit}, cur, err)
	}
	// The changes a plan writes before any call, or without one.
	planned := func(pl plan) change {
		if pl.change == nil {
			t.Fatalf("plan %q of %s writes nothing", pl.do, pl.row.Phase)
		}
		return *pl.change
	}
	retry := func(cur store.Request) change {
		ch, err := decideRetry(cur, "test")
		if err != nil {
			t.Fatalf("decideRetry(%s): %v", cur.Phase, err)
		}
		return ch
	}
	end := func(cur store.Request) change {
		ch, err := decideEnd(cur)
		if err != nil {
			t.Fatalf("decideEnd(%s): %v", cur.Phase, err)
		}
		return ch
	}
	rejectedFrom := func(resume store.Phase) store.Request {
		r := row(PhaseRejected)
		r.ResumePhase, r.Reason = resume, ReasonRefused
		return r
	}
	withReason := func(r store.Request, reason store.Reason) store.Request {
		r.Reason = reason
		return r
	}
	waiting, _ := decideWaiting(store.Request{}, req)
	held := planned(planHold(row(PhaseAccepted), st, ReasonShopData, errors.New("bad line")))
	unknownHeld := planned(planHold(row(PhaseAcceptUnknown), st, ReasonShopData, errors.New("bad line")))
	draftedHeld := planned(planHold(row(PhaseDrafted), st, ReasonUnmappedCode, errors.New("bad code")))
	waitingRow, unknownRow := row(PhaseWaiting), row(PhaseAcceptUnknown)
	changes := []change{
		waiting,
		decideReserveFailed(cfg, now, 0.5, store.Request{}, req, errors.New("create_job failed")),
		decideReserved(store.Request{}, req, "RO-1", false, time.Time{}),
		planned(planAccept(now, acceptStep{kind: stepExpired, req: req})),
		decideReserveFailed(cfg, now, 0.5, row(PhaseWaiting), req, errors.New("create_job failed")),
		decideReserved(row(PhaseWaiting), req, "RO-1", true, time.Time{}),
		planned(planAccept(now, acceptStep{kind: stepVanished, req: req, row: &waitingRow})),
		decideTooLong(store.Request{}, req, errors.New("Error 1406: Data too long for column 'claim_number'")),
		decideTooLong(row(PhaseWaiting), req, errors.New("Error 1406: Data too long for column 'claim_number'")),
		accept(row(PhaseReserved), true, false, remoteErr(503, "")),
		accept(row(PhaseReserved), true, false, remoteErr(409, "")),
		accept(row(PhaseReserved), true, false, nil),
		accept(row(PhaseReserved), false, true, remoteErr(400, "request already accepted")),
		accept(row(PhaseReserved), true, false, remoteErr(400, "bad referenceId")),
		accept(row(PhaseReserved), false, false, remoteErr(404, "")),
		accept(row(PhaseReserved), false, false, remoteErr(409, `{"referenceId":"PORTAL-77"}`)),
		push(row(PhaseAcceptUnknown), remoteErr(503, "")),
		unknownHeld,
		push(row(PhaseAcceptUnknown), nil),
		push(row(PhaseAcceptUnknown), remoteErr(404, "job not found")),
		push(row(PhaseAcceptUnknown), remoteErr(400, "bad item")),
		planned(planAccept(now, acceptStep{kind: stepRelist, req: req, row: &unknownRow})),
		planned(planPush(now, row(PhaseAcceptUnknown), st, pushed)),
		held,
		push(row(PhaseAccepted), nil),
		push(row(PhaseAccepted), remoteErr(400, "bad item")),
		draftedHeld,
		push(row(PhaseDrafted), nil),
		planned(planPush(now, row(PhaseDrafted), st, pushed)),
		planned(planSubmit(now, row(PhaseDrafted))),
		submit(row(PhaseDrafted), nil),
		submit(row(PhaseDrafted), remoteErr(405, "")),
		planned(planJob(now, row(PhaseSubmitted), st, sampleLines(), nil, remote.Quote{}, "h2")),
		retry(rejectedFrom(PhaseWaiting)),
		retry(rejectedFrom(PhaseReserved)),
		retry(rejectedFrom(PhaseAcceptUnknown)),
		retry(rejectedFrom(PhaseAccepted)),
		retry(rejectedFrom(PhaseDrafted)),

		retry(withReason(row(PhaseGone), ReasonExpired)),
		retry(withReason(row(PhaseTakenElsewhere), ReasonOtherReference)),
		retry(withReason(row(PhaseAcceptUnknown), ReasonAcceptLost)),
		retry(withReason(row(PhaseWaiting), ReasonReserveFailed)),
		end(row(PhaseWaiting)), end(row(PhaseReserved)), end(row(PhaseAcceptUnknown)),
		end(row(PhaseAccepted)), end(row(PhaseDrafted)),
	}
	want := allTransitions()
	got := map[transition]bool{}
	for _, ch := range changes {
		tr := transition{ch.cur.Phase, ch.next.Phase}
		if !want[tr] {
			t.Errorf("a decision produced %s, which the table refuses", tr)
		}
		if _, err := prepare(ch); err != nil {
			t.Errorf("prepare(%s): %v", tr, err)
		}
		got[tr] = true
	}
	var missing []string
	for tr := range want {
		if !got[tr] {
			missing = append(missing, tr.String())
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("the table allows %s, but no decision produces it", m)
	}

	// Every other transition is refused, and says which.
	for _, p := range phaseTable {
		for _, q := range phaseTable {
			tr := transition{p.Phase, q.Phase}
			if q.Phase == phaseNew || want[tr] {
				continue
			}
			cur := row(p.Phase)
			if p.Phase == phaseNew {
				cur = store.Request{}
			}
			next := cur
			next.Phase = q.Phase
			var te *ErrTransition
			if _, err := prepare(change{cur: cur, next: next}); !errors.As(err, &te) {
				t.Errorf("prepare(%s) = %v, want it refused", tr, err)
			}
		}
	}
	// A request the insurer accepted with our job number is gone only
	// when its insurer is ended: a pass's decision that moved it there
	// would make its job look free to other requests.
	for _, ph := range []store.Phase{PhaseAcceptUnknown, PhaseAccepted, PhaseDrafted} {
		for _, reason := range []store.Reason{ReasonNone, ReasonLeftList, ReasonExpired, ReasonUnknownRequest} {
			ch := giveUp(row(ph), PhaseGone, reason, "test", Event{})
			var te *ErrTransition
			if _, err := prepare(ch); !errors.As(err, &te) || !strings.Contains(err.Error(), "only for insurer_ended") {
				t.Errorf("prepare(%s -> gone, reason %q) = %v, want it refused, naming insurer_ended", ph, reason, err)
			}
		}
		if _, err := prepare(end(row(ph))); err != nil {
			t.Errorf("prepare(%s -> gone, reason insurer_ended) = %v", ph, err)
		}
	}
	// Nor does a retry free the job an ended request keeps.
	if _, err := decideRetry(end(row(PhaseAccepted)).next, "test"); !errors.Is(err, ErrNotRetryable) || !strings.Contains(err.Error(), "RO-1") {
		t.Errorf("retry of an ended accepted request holding its job: %v, want ErrNotRetryable naming the job", err)
	}
	if _, err := decideRetry(end(row(PhaseWaiting)).next, "test"); err != nil {
		t.Errorf("retry of an ended waiting request: %v", err)
	}
	// A phase this quotesync does not know goes nowhere.
	if allowed("archived", PhaseWaiting) || IsOpen("archived") {
		t.Error("an unknown phase is allowed to move")
	}
}

// TestTablesDescribeEverything: every phase has words and, but for the
// origin of new rows, a way out; every reason has words and a fix; every
// reason the decisions write is in the table.
func TestTablesDescribeEverything(t *testing.T) {
	for _, p := range Phases() {
		if p.Words == "" || p.WayOut == "" {
			t.Errorf("phase %s lacks words or a way out: %+v", p.Phase, p)
		}
	}
	seen := map[store.Reason]bool{}
	for _, r := range reasonTable {
		if r.Words == "" || r.Fix == "" {
			t.Errorf("reason %s lacks words or a fix", r.Reason)
		}
		if seen[r.Reason] {
			t.Errorf("reason %s is listed twice", r.Reason)
		}
		seen[r.Reason] = true
		if r.Config && !r.Hold {
			t.Errorf("reason %s is lifted by the configuration but holds nothing", r.Reason)
		}
	}
	for _, r := range []store.Reason{ReasonNoJob, ReasonReserveFailed, ReasonShopLock, ReasonRetrying, ReasonAcceptConflict,
		ReasonShopData, ReasonUnmappedCode, ReasonCredits, ReasonOutOfBounds, ReasonEstimateState, ReasonFinalNoLines,
		ReasonRefused, ReasonJobConflict, ReasonPushConflict, ReasonStatusPath, ReasonExpired, ReasonLeftList,
		ReasonUnknownRequest, ReasonInsurerEnded, ReasonAcceptLost, ReasonOtherReference, ReasonNotOurs, ReasonUnreadable,
		ReasonBadEntry, ReasonTooLong} {
		if !seen[r] {
			t.Errorf("reason %s is not in the table", r)
		}
	}
	if got := fmt.Sprint(Reason("made_up").Words); got != "made_up" {
		t.Errorf("an unknown reason is described as %q", got)
	}
}

// TestMovesKeepThePhase: a move to another insurer (decideMove, a
// rename or an adoption) passes the executor's check in every phase, one this
// quotesync does not know included, and only as a move that keeps the
// phase: one that would also change it, or move a request with no row,
// is refused, and nothing is written.
func TestMovesKeepThePhase(t *testing.T) {
	var phases []store.Phase
	for _, p := range phaseTable {
		if p.Phase != phaseNew {
			phases = append(phases, p.Phase)
		}
	}
	for _, ph := range append(phases, "archived") {
		cur := store.Request{Insurer: "old", RequestID: "7", Phase: ph, Version: 3}
		for _, ch := range []change{decideMove(cur, EventMoved, "aa"), decideMove(cur, EventAdopted, "aa")} {
			got, err := prepare(ch)
			if err != nil {
				t.Errorf("prepare(%s of a %s request) = %v, want it allowed", ch.ev.Kind, ph, err)
				continue
			}
			if got.ev.From != ph || got.ev.To != ph || got.ev.Request != "7" {
				t.Errorf("%s of a %s request: event %+v, want from and to %s", ch.ev.Kind, ph, got.ev, ph)
			}
		}
	}
	var te *ErrTransition
	changed := decideMove(store.Request{RequestID: "7", Phase: PhaseDrafted, Version: 3}, EventMoved, "aa")
	changed.next.Phase = PhaseSubmitted
	if _, err := prepare(changed); !errors.As(err, &te) || !te.Move || !strings.Contains(err.Error(), "another insurer") {
		t.Errorf("a move that changes the phase: %v, want ErrTransition of a move", err)
	}
	if _, err := prepare(decideMove(store.Request{RequestID: "7", Phase: PhaseWaiting}, EventMoved, "aa")); !errors.As(err, &te) {
		t.Errorf("a move of a request with no row: %v, want ErrTransition", err)
	}
}

// TestNotesKeepThePhase: the executor remembers a job's marker only for a
// row the machine lets stay in its phase, and only the row as read; any
// other note is a bug, refused as a failure of the pass.
func TestNotesKeepThePhase(t *testing.T) {
	e, err := New(DefaultConfig(), fakeRemote{}, fakeShop{}, fakeStore{}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		row  store.Request
		u    store.MarkerUpdate
		want bool
	}{
		{store.Request{RequestID: "1", Phase: PhaseDrafted, Version: 4}, store.MarkerUpdate{RequestID: "1", Version: 4, Marker: "m"}, true},
		{store.Request{RequestID: "2", Phase: PhaseSubmitted, Version: 4}, store.MarkerUpdate{RequestID: "2", Version: 4, Marker: "m"}, true},
		{store.Request{RequestID: "3", Phase: PhaseGone, Version: 4}, store.MarkerUpdate{RequestID: "3", Version: 4, Marker: "m"}, false},
		{store.Request{RequestID: "4", Phase: "archived", Version: 4}, store.MarkerUpdate{RequestID: "4", Version: 4, Marker: "m"}, false},
		{store.Request{RequestID: "5", Phase: PhaseDrafted, Version: 4}, store.MarkerUpdate{RequestID: "5", Version: 3, Marker: "m"}, false},
	} {
		p := &pass{e: e}
		e.note(p, tc.row, tc.u)
		var te *ErrTransition
		switch noted := len(p.notes) == 1; {
		case noted != tc.want:
			t.Errorf("note of a %s row (version %d) for version %d: noted %v, want %v", tc.row.Phase, tc.row.Version, tc.u.Version, noted, tc.want)
		case !tc.want && (len(p.errs) != 1 || !errors.As(p.errs[0], &te)):
			t.Errorf("a refused note of a %s row: pass errors %v, want one ErrTransition", tc.row.Phase, p.errs)
		}
	}
}
