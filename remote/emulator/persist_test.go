package emulator_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/quotesync/quotesync/remote/emulator"
)

// TestPersistence: the state saved to StatePath survives a new emulator,
// and the new one carries on from it (ids, item ids, conflicts).
func TestPersistence(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	h := newHarness(t, withStatePath(path))
	id := h.seed("CLM-1")
	pending := h.seed("CLM-2")
	h.accept(id, "RO-1")
	expectStatus(t, "draft", h.call("POST", "/jobs/RO-1/quotes", fmt.Sprintf(draftQuote, "RO-1")), http.StatusCreated)
	expectStatus(t, "submit", h.call("POST", "/jobs/RO-1/quote/status/Submitted", ""), http.StatusOK)
	before := h.emu.State()

	h2 := newHarness(t, withStatePath(path))
	after := h2.emu.State()
	if diff := cmp.Diff(before, after, cmpopts.IgnoreFields(emulator.State{}, "Now"), cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("state after restart (-before +after):\n%s", diff)
	}
	if got := listedIDs(t, h2); len(got) != 1 || got[0] != pending {
		t.Errorf("pending after restart %v, want [%s]", got, pending)
	}
	expectError(t, "reuse RO-1 after restart", h2.call("POST", "/requests/"+pending, `{"referenceId":"RO-1"}`),
		http.StatusConflict, emulator.CodeReferenceInUse)
	expectError(t, "submit after restart", h2.call("PUT", "/jobs/RO-1/quotes/Estimate/status", `{"status":"Submitted"}`),
		http.StatusConflict, emulator.CodeQuoteAlreadySubmitted)
	next := h2.emu.AddRequests(emulator.SeedRequest{})[0]
	if next == id || next == pending {
		t.Errorf("new request id %s repeats an old one", next)
	}
	h2.accept(next, "RO-2")
	r := h2.call("POST", "/jobs/RO-2/quotes", `{"type":"Estimate","status":"Draft","items":[{"type":"Parts","description":"d","quantity":1,"price":1,"total":1}]}`)
	expectStatus(t, "quote after restart", r, http.StatusCreated)

	h3 := newHarness(t, withStatePath(path))
	if got, want := len(h3.emu.State().History), len(before.History)+2; got != want {
		t.Errorf("history after second restart has %d entries, want %d", got, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("state directory holds %d files, want only state.json (temporary files left?)", len(entries))
	}
	h3.emu.Reset()
	if st := newHarness(t, withStatePath(path)).emu.State(); len(st.Requests)+len(st.Jobs)+len(st.History) != 0 {
		t.Errorf("state after Reset and restart is not empty: %+v", st)
	}
}

// TestPersistenceErrors: a corrupt file stops New; a failed save answers
// 500 state_save_failed.
func TestPersistenceErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"format":1,"state":{"requests":[{"id":"1"},{"id":"1"}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := emulator.New(emulator.Options{Token: testToken, StatePath: bad}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("New with a corrupt state: %v, want an error naming %s", err, bad)
	}
	if err := os.WriteFile(bad, []byte(`{"format":99}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := emulator.New(emulator.Options{Token: testToken, StatePath: bad}); err == nil {
		t.Errorf("New with an unknown format: no error")
	}

	h := newHarness(t, withStatePath(filepath.Join(dir, "missing", "state.json")))
	id := h.seed("CLM-1")
	expectError(t, "accept with an unwritable state", h.call("POST", "/requests/"+id, `{"referenceId":"RO-1"}`),
		http.StatusInternalServerError, emulator.CodeStateSaveFailed)
	if r, _ := h.emu.State().Request(id); r.ReferenceID != "RO-1" {
		t.Errorf("the change is not applied in memory: %+v", r)
	}
}
