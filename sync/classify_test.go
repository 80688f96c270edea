package sync

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
)

func TestClassify(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	e := testEngine(t, DefaultConfig())
	p := &pass{e: e, now: now, phases: map[string]shopdb.Phase{}}
	pending := []remote.Request{
		{ID: "1", ClaimNumber: "C1", Expiry: now.Add(48 * time.Hour)}, // new
		{ID: "2", ClaimNumber: "C2"},                                  // new, no expiry: last
		{ID: "3", ClaimNumber: "C3", Expiry: now.Add(time.Hour)},      // new, soonest
		{ID: "4", ClaimNumber: "C4", Expiry: now.Add(-time.Minute)},   // new but expired: never accepted
		{ID: "5", ClaimNumber: "C5", Expiry: now.Add(2 * time.Hour)},  // waiting, still pending
		{ID: "6", ClaimNumber: "C6", Expiry: now.Add(3 * time.Hour)},  // reserved, still pending, due
		{ID: "7", ClaimNumber: "C7", Expiry: now.Add(4 * time.Hour)},  // reserved, backing off
		{ID: "8", ClaimNumber: "C8"},                                  // rejected: known, left alone
	}
	rows := []shopdb.Request{
		{RequestID: "5", Phase: shopdb.PhaseWaiting},
		{RequestID: "6", Phase: shopdb.PhaseReserved, JobNumber: "RO-6"},
		{RequestID: "7", Phase: shopdb.PhaseReserved, JobNumber: "RO-7", NextAttemptAt: now.Add(time.Minute)},
		{RequestID: "8", Phase: shopdb.PhaseRejected, JobNumber: "RO-8"},
		{RequestID: "9", Phase: shopdb.PhaseWaiting},                       // no longer pending: gone
		{RequestID: "10", Phase: shopdb.PhaseReserved, JobNumber: "RO-10"}, // no longer pending: probed
		{RequestID: "11", Phase: shopdb.PhaseDrafted, JobNumber: "RO-11"},  // push stage's business
	}
	c := e.classify(p, pendingList{requests: pending}, rows)
	var order []string
	for _, w := range c.work {
		id := w.req.ID
		if w.probe {
			id += "?"
		}
		order = append(order, id)
	}
	// Request 10 is reserved and no longer listed: probed ("10?"), sorted
	// last for it has no expiry.
	if diff := cmp.Diff([]string{"3", "5", "6", "1", "10?", "2"}, order); diff != "" {
		t.Errorf("accept work order (-want +got):\n%s", diff)
	}
	if got := ids(c.vanished); !cmp.Equal(got, []string{"9"}) {
		t.Errorf("vanished = %v, want [9]", got)
	}

	// Requests listed but undecodable are still pending: nothing about
	// them is concluded. An undecodable entry without an id may be any
	// request: nothing at all is.
	c = e.classify(p, pendingList{requests: pending, skipped: map[string]bool{"9": true, "10": true}}, rows)
	if len(c.vanished) != 0 || hasProbe(c.work) {
		t.Errorf("skipped ids treated as gone: vanished %v, probes %v", ids(c.vanished), hasProbe(c.work))
	}
	c = e.classify(p, pendingList{requests: pending, blind: true}, rows)
	if len(c.vanished) != 0 || hasProbe(c.work) {
		t.Errorf("a list with an unreadable entry still concluded: vanished %v, probes %v", ids(c.vanished), hasProbe(c.work))
	}
}

func hasProbe(work []acceptWork) bool {
	for _, w := range work {
		if w.probe {
			return true
		}
	}
	return false
}

func ids(rows []shopdb.Request) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.RequestID)
	}
	return out
}
