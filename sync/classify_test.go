package sync

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb/store"
)

func TestClassify(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	pending := []remote.Request{
		{ID: "1", ClaimNumber: "C1", Expiry: now.Add(48 * time.Hour)},  // new
		{ID: "2", ClaimNumber: "C2"},                                   // new, no expiry: last
		{ID: "3", ClaimNumber: "C3", Expiry: now.Add(time.Hour)},       // new, soonest
		{ID: "4", ClaimNumber: "C4", Expiry: now.Add(-time.Minute)},    // new but expired: never accepted, recorded gone
		{ID: "5", ClaimNumber: "C5", Expiry: now.Add(2 * time.Hour)},   // waiting, still pending
		{ID: "6", ClaimNumber: "C6", Expiry: now.Add(3 * time.Hour)},   // reserved, still pending, due
		{ID: "7", ClaimNumber: "C7", Expiry: now.Add(4 * time.Hour)},   // reserved, backing off
		{ID: "8", ClaimNumber: "C8"},                                   // rejected: known, left alone
		{ID: "12", ClaimNumber: "C12", Expiry: now.Add(5 * time.Hour)}, // accept_unknown, listed again
	}
	rows := []store.Request{
		{RequestID: "5", Phase: PhaseWaiting},
		{RequestID: "6", Phase: PhaseReserved, JobNumber: "RO-6"},
		{RequestID: "7", Phase: PhaseReserved, JobNumber: "RO-7", NextAttemptAt: now.Add(time.Minute)},
		{RequestID: "8", Phase: PhaseRejected, JobNumber: "RO-8"},
		{RequestID: "9", Phase: PhaseWaiting},                       // no longer pending: gone
		{RequestID: "10", Phase: PhaseReserved, JobNumber: "RO-10"}, // no longer pending: probed
		{RequestID: "11", Phase: PhaseDrafted, JobNumber: "RO-11"},  // push stage's business
		{RequestID: "12", Phase: PhaseAcceptUnknown, JobNumber: "RO-12"},
		{RequestID: "13", Phase: PhaseAcceptUnknown, JobNumber: "RO-13"}, // not listed: push stage's business
		{RequestID: "14", Phase: PhaseTakenElsewhere},
	}
	steps := classify(now, pendingList{requests: pending}, rows)
	// Soonest expiry first; those without one last, by id.
	want := []string{"4 expired", "3 reserve", "5 reserve", "6 accept", "12 relist", "1 reserve", "10 probe",
		"2 reserve", "9 vanished"}
	if diff := cmp.Diff(want, describeSteps(steps)); diff != "" {
		t.Errorf("accept steps (-want +got):\n%s", diff)
	}

	// Requests listed but undecodable are still pending: nothing about
	// them is concluded. An undecodable entry without an id may be any
	// request: nothing at all is.
	for name, l := range map[string]pendingList{
		"skipped": {requests: pending, skipped: map[string]bool{"9": true, "10": true}},
		"blind":   {requests: pending, blind: true},
	} {
		for _, st := range classify(now, l, rows) {
			if st.kind == stepProbe || st.kind == stepVanished {
				t.Errorf("%s: concluded from an undecodable list: %v", name, describeSteps([]acceptStep{st}))
			}
		}
	}
}

// describeSteps renders steps as "id kind".
func describeSteps(steps []acceptStep) []string {
	names := map[acceptKind]string{stepReserve: "reserve", stepAccept: "accept", stepProbe: "probe",
		stepRelist: "relist", stepVanished: "vanished", stepExpired: "expired"}
	var out []string
	for _, st := range steps {
		out = append(out, st.req.ID+" "+names[st.kind])
	}
	return out
}
