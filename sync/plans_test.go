package sync

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// TestPlansAsPrinted walks every step of both stages: the plan each
// decision returns is what a dry run prints (its Action) and what the
// executor performs (its change, checked against the state machine, and
// its remote call). The decisions are pure: the pass's start is their
// clock.
func TestPlansAsPrinted(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	later, earlier := now.Add(time.Hour), now.Add(-time.Minute)
	req := remote.Request{ID: "7", ClaimNumber: "C7", Expiry: later}
	row := func(ph store.Phase, expiry time.Time) *store.Request {
		return &store.Request{RequestID: "7", ClaimNumber: "C7", JobNumber: "RO-7", Phase: ph, Version: 2, Expiry: expiry,
			Intent: IntentAccept}
	}
	waiting := row(PhaseWaiting, later)
	waiting.JobNumber = ""
	st := shopdb.JobState{Job: "RO-7", Marker: "m2", Final: true}
	lines := []shopdb.Line{{LineID: "1"}}
	drafted := *row(PhaseDrafted, later)
	drafted.Intent, drafted.PushedHash, drafted.PushedMarker = IntentNone, "h1", "m1"
	accepted := drafted
	accepted.Phase, accepted.PushedHash = PhaseAccepted, ""
	unknown := accepted
	unknown.Phase = PhaseAcceptUnknown
	submitted := drafted
	submitted.Phase = PhaseSubmitted
	q := remote.Quote{Items: make([]remote.Item, 3)}

	type want struct {
		action  Action
		call    callKind
		changes bool // writes a change before (or without) the call
		final   bool
	}
	act := func(r store.Request, do, why string) Action {
		return Action{Request: r.RequestID, Claim: r.ClaimNumber, Job: r.JobNumber, Phase: r.Phase, Do: do, Why: why}
	}
	pushed := func(r store.Request, why string) Action {
		a := act(r, DoPushDraft, why)
		a.Items = 3
		return a
	}
	for _, tt := range []struct {
		name string
		pl   plan
		want want
	}{
		{"Expired", planAccept(now, acceptStep{kind: stepExpired, req: remote.Request{ID: "7", ClaimNumber: "C7", Expiry: earlier}}),
			want{action: Action{Request: "7", Claim: "C7", Do: DoMarkGone, Why: "the request expired at 2026-11-24T09:59:00Z, before quotesync could accept it"}, changes: true}},
		{"Vanished", planAccept(now, acceptStep{kind: stepVanished, req: req, row: waiting}),
			want{action: act(*waiting, DoMarkGone, "the request left the pending list before the shop had a job for it: declined or withdrawn by the insurer, or accepted by someone else"), changes: true}},
		{"Relist", planAccept(now, acceptStep{kind: stepRelist, req: req, row: row(PhaseAcceptUnknown, later)}),
			want{action: act(*row(PhaseAcceptUnknown, later), DoAccept, "the remote lists the request as pending again: our accept did not land"), call: callAccept, changes: true}},
		{"RelistExpired", planAccept(now, acceptStep{kind: stepRelist, req: req, row: row(PhaseAcceptUnknown, earlier)}),
			want{action: act(*row(PhaseAcceptUnknown, earlier), DoAccept, "the remote lists the request as pending again: our accept did not land"), changes: true}},
		{"Reserve", planAccept(now, acceptStep{kind: stepReserve, req: req, row: waiting}),
			want{action: Action{Request: "7", Claim: "C7", Phase: PhaseWaiting}, call: callAccept}},
		{"Accept", planAccept(now, acceptStep{kind: stepAccept, req: req, row: row(PhaseReserved, later)}),
			want{action: act(*row(PhaseReserved, later), DoAccept, "reserved job RO-7; the request is still pending"), call: callAccept}},
		{"AcceptExpired", planAccept(now, acceptStep{kind: stepAccept, req: req, row: row(PhaseReserved, earlier)}),
			want{action: act(*row(PhaseReserved, earlier), "", "")}},
		{"Probe", planAccept(now, acceptStep{kind: stepProbe, req: req, row: row(PhaseReserved, earlier)}),
			want{action: act(*row(PhaseReserved, earlier), DoConfirm, "reserved and no longer pending: a repeated accept tells whether ours landed"), call: callAccept}},

		{"FirstDraft", planJob(now, accepted, st, lines, nil, q, "h2"),
			want{action: pushed(accepted, "first draft of the job's lines"), call: callCreateQuote, changes: true, final: true}},
		{"ConfirmingDraft", planJob(now, unknown, st, lines, nil, q, "h2"),
			want{action: pushed(unknown, "first draft of the job's lines; it confirms that our accept landed"), call: callCreateQuote, changes: true, final: true}},
		{"Redraft", planJob(now, drafted, st, lines, nil, q, "h2"),
			want{action: pushed(drafted, "lines changed since the last push"), call: callUpdateDraft, changes: true, final: true}},
		{"Unchanged", planJob(now, drafted, st, lines, nil, q, "h1"),
			want{action: act(drafted, "", ""), changes: true, final: true}},
		{"Hold", planJob(now, drafted, st, lines, errors.New("line 1: price is NULL"), q, "h2"),
			want{action: act(drafted, DoHold, "a line of the job's estimate is invalid: line 1: price is NULL"), changes: true}},
		{"FinalNoLines", planJob(now, drafted, st, nil, nil, q, "h2"),
			want{action: act(drafted, DoHold, "the estimate is final but has no lines: job RO-7: the estimate is final but has no lines; add lines or take it back to draft"), changes: true}},
		{"Supplement", planJob(now, submitted, st, lines, nil, q, "h2"),
			want{action: act(submitted, DoFlagSupplement, "the shop's lines changed after the quote was submitted"), changes: true}},
		{"Submit", planSubmit(now, drafted),
			want{action: act(drafted, DoSubmit, "the estimate is final and the remote holds its content"), call: callSubmit, changes: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := want{action: tt.pl.action(), call: tt.pl.call.kind, changes: tt.pl.change != nil, final: tt.pl.final}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if tt.pl.change != nil {
				if _, err := prepare(*tt.pl.change); err != nil {
					t.Errorf("the plan's change: %v", err)
				}
			}
		})
	}
}
