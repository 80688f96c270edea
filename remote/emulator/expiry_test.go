package emulator_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
)

// listedIDs returns the ids GET /requests lists, as JSON text.
func listedIDs(t *testing.T, h *harness) []string {
	t.Helper()
	r := h.call("GET", "/requests", "")
	expectStatus(t, "list", r, http.StatusOK)
	var reqs []struct {
		ID json.RawMessage `json:"id"`
	}
	r.decode(t, &reqs)
	ids := make([]string, 0, len(reqs))
	for _, q := range reqs {
		ids = append(ids, string(q.ID))
	}
	return ids
}

// TestExpiry checks that a request stops being pending at its expiry (by
// Options.Now), cannot be accepted after it, and that an accepted request
// stays accepted after its expiry.
func TestExpiry(t *testing.T) {
	h := newHarness(t)
	start := h.clock.Now()
	ids := h.emu.AddRequests(
		emulator.SeedRequest{ClaimNumber: "CLM-SOON", Expiry: start.Add(time.Hour)},
		emulator.SeedRequest{ClaimNumber: "CLM-LATER", Expiry: start.Add(2 * time.Hour)},
		emulator.SeedRequest{ClaimNumber: "CLM-DEFAULT"},
	)
	soon, later, dflt := ids[0], ids[1], ids[2]
	if got := len(listedIDs(t, h)); got != 3 {
		t.Fatalf("listed %d, want 3", got)
	}
	h.accept(later, "RO-LATER")

	h.clock.Advance(time.Hour - time.Second)
	if got := listedIDs(t, h); len(got) != 2 || got[0] != soon {
		t.Errorf("one second before expiry: listed %v, want %s first", got, soon)
	}
	h.clock.Advance(time.Second)
	if got := listedIDs(t, h); len(got) != 1 || got[0] != dflt {
		t.Errorf("at expiry: listed %v, want only %s", got, dflt)
	}
	expectError(t, "accept expired", h.call("POST", "/requests/"+soon, `{"referenceId":"RO-SOON"}`),
		http.StatusGone, emulator.CodeRequestExpired)

	h.clock.Advance(2 * time.Hour)
	expectError(t, "accept the accepted request after its expiry", h.call("POST", "/requests/"+later, `{"referenceId":"RO-LATER"}`),
		http.StatusConflict, emulator.CodeRequestAlreadyAccepted)

	st := h.emu.State()
	for id, want := range map[string]string{soon: emulator.RequestExpired, later: emulator.RequestAccepted, dflt: emulator.RequestPending} {
		if r, _ := st.Request(id); r.Status != want {
			t.Errorf("request %s status %q, want %q", id, r.Status, want)
		}
	}
	if r, _ := st.Request(dflt); !r.Expiry.Equal(start.Add(emulator.DefaultRequestTTL)) {
		t.Errorf("default expiry %v, want %v", r.Expiry, start.Add(emulator.DefaultRequestTTL))
	}
	h.clock.Advance(emulator.DefaultRequestTTL)
	if got := listedIDs(t, h); len(got) != 0 {
		t.Errorf("after every expiry: listed %v, want none", got)
	}
}
