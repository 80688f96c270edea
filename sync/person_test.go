package sync

import (
	"slices"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb/store"
)

// TestQuietReasonsMatchNeedsPerson: the status page filters "needs a
// person" in SQL with QuietReasons; it must select exactly the rows
// NeedsPerson picks, for every reason, with and without a supplement.
func TestQuietReasonsMatchNeedsPerson(t *testing.T) {
	quiet := QuietReasons()
	reasons := []store.Reason{ReasonNone, "a_reason_of_a_newer_quotesync"}
	for _, ri := range reasonTable {
		reasons = append(reasons, ri.Reason)
	}
	for _, r := range reasons {
		for _, supp := range []bool{false, true} {
			row := store.Request{Reason: r, SupplementNeeded: supp}
			sqlSays := !slices.Contains(quiet, r) || supp
			if got := NeedsPerson(row); got != sqlSays {
				t.Errorf("reason %q, supplement %t: NeedsPerson = %t, the SQL filter says %t", r, supp, got, sqlSays)
			}
		}
	}
}

// TestSubmittedEventNamesTheDraft: the submit's event carries the hash of
// the Draft the remote holds, so that a timeline says which was submitted.
func TestSubmittedEventNamesTheDraft(t *testing.T) {
	cur := store.Request{RequestID: "r1", JobNumber: "J1", Phase: PhaseDrafted, PushedHash: "abc123", Version: 3}
	ch, ok := decideSubmit(DefaultConfig(), cur, answer{now: time.Now()})
	if !ok {
		t.Fatal("decideSubmit settled nothing")
	}
	if got, want := (&Engine{}).stored(ch.ev).Hash, "abc123"; ch.ev.Kind != EventSubmitted || got != want {
		t.Errorf("event %s stored with hash %q, want submitted with %q", ch.ev.Kind, got, want)
	}
}
