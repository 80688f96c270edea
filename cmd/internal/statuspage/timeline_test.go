package statuspage

import (
	"testing"

	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// TestTimelineWords: the steps come oldest first whatever the order read,
// a request's first event says it was listed, every kind the engine
// stores is said in words, and the reason's words are not repeated in the
// details.
func TestTimelineWords(t *testing.T) {
	held := qsync.Reason(qsync.ReasonShopData).Words
	evs := []store.Event{
		{ID: 3, Kind: string(qsync.EventHeld), From: qsync.PhaseAccepted, To: qsync.PhaseAccepted,
			Reason: qsync.ReasonShopData, Message: held + "; line 2: price is NULL"},
		{ID: 1, Kind: string(qsync.EventReserved), To: qsync.PhaseReserved, Job: "J7"},
		{ID: 2, Kind: string(qsync.EventAccepted), From: qsync.PhaseReserved, To: qsync.PhaseAccepted, Job: "J7"},
		{ID: 4, Kind: string(qsync.EventRedrafted), Items: 1, Hash: "0123456789abcdef"},
		{ID: 5, Kind: "a_kind_of_a_newer_quotesync"},
	}
	steps := Timeline(evs)
	want := []string{
		"listed by the insurer; job J7 reserved for it",
		"accepted with referenceId J7",
		"held: nothing is pushed until the cause is fixed",
		"Draft pushed again after a change: 1 line, hash 0123456789ab",
		"a_kind_of_a_newer_quotesync",
	}
	for i, w := range want {
		if steps[i].What != w {
			t.Errorf("step %d = %q, want %q", i+1, steps[i].What, w)
		}
	}
	if got, want := steps[2].Details, "line 2: price is NULL"; got != want {
		t.Errorf("held step details = %q, want %q (the words once, as Words)", got, want)
	}
	if steps[2].Words != held {
		t.Errorf("held step words = %q, want the reason table's %q", steps[2].Words, held)
	}

	kinds := []qsync.EventKind{qsync.EventWaiting, qsync.EventReserveFailed, qsync.EventReserved, qsync.EventAccepted,
		qsync.EventAcceptUnknown, qsync.EventAcceptConflict, qsync.EventTakenElsewhere, qsync.EventDrafted,
		qsync.EventRedrafted, qsync.EventSubmitted, qsync.EventSupplement, qsync.EventRejected, qsync.EventGone,
		qsync.EventHeld, qsync.EventReleased, qsync.EventRetrying, qsync.EventUnreadable, qsync.EventRetry}
	for _, k := range kinds {
		if got := what(store.Event{Kind: string(k), From: qsync.PhaseAccepted, To: qsync.PhaseAccepted}); got == string(k) {
			t.Errorf("event kind %s has no words", k)
		}
	}
}
