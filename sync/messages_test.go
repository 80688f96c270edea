package sync

import (
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb/store"
)

// TestConflictRejectionCounts: with sync.max_conflicts 1, the rejection
// says "1 time", not "1 times".
func TestConflictRejectionCounts(t *testing.T) {
	cfg := DefaultConfig().withDefaults()
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	cur := store.Request{RequestID: "1", ClaimNumber: "C1", JobNumber: "RO-1", Phase: PhaseReserved, Version: 3,
		Expiry: now.Add(time.Hour), Intent: IntentAccept}
	for _, tt := range []struct {
		max  int
		want string
	}{{1, "as a conflict 1 time while"}, {3, "as a conflict 3 times while"}} {
		cur.Reason, cur.Attempts = ReasonAcceptConflict, tt.max-1
		cfg.MaxConflicts = tt.max
		ch, ok := decideAccept(cfg, cur, call{kind: callAccept, listed: true}, answer{now: now, err: remoteErr(409, "")})
		if !ok || ch.next.Phase != PhaseRejected {
			t.Fatalf("max_conflicts %d: %v %+v, want rejected", tt.max, ok, ch.next)
		}
		if !strings.Contains(ch.next.LastError, tt.want) {
			t.Errorf("max_conflicts %d: %q lacks %q", tt.max, ch.next.LastError, tt.want)
		}
	}
}
