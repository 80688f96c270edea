package emulator_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quotesync/quotesync/remote/emulator"
)

// admin calls the admin API (no token).
func (h *harness) admin(method, path, body string) response {
	h.t.Helper()
	return h.send(method, h.srv.URL+"/_emulator/"+path, body, map[string]string{"Content-Type": "text/plain"})
}

// TestAdminSeed seeds requests over the admin API in its three forms.
func TestAdminSeed(t *testing.T) {
	h := newHarness(t)
	r := h.admin("POST", "requests", `[
	  {"id":5001,"claim_number":"CLM-A","expiry":"2025-06-09T12:00:00Z","vehicle":{"registration":"AB12 CDE"},
	   "accident":{"date":"2025-06-01"},"instructions":{"assessmentType":"Desktop"}},
	  {"id":"REQ-X","claim_number":"CLM-B"}]`)
	expectStatus(t, "seed array", r, http.StatusCreated)
	var ids struct{ IDs []string }
	r.decode(t, &ids)
	if diff := cmp.Diff([]string{"5001", "REQ-X"}, ids.IDs); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	r = h.admin("POST", "requests", `{"claim_number":"CLM-C"}`)
	expectStatus(t, "seed one", r, http.StatusCreated)
	r.decode(t, &ids)
	if diff := cmp.Diff([]string{"5002"}, ids.IDs); diff != "" {
		t.Errorf("next numeric id (-want +got):\n%s", diff)
	}
	r = h.admin("POST", "requests", `{"count":3}`)
	expectStatus(t, "seed random", r, http.StatusCreated)
	r.decode(t, &ids)
	if len(ids.IDs) != 3 {
		t.Fatalf("random ids %v, want 3", ids.IDs)
	}

	r = h.call("GET", "/requests", "")
	expectStatus(t, "list", r, http.StatusOK)
	var listed []map[string]json.RawMessage
	r.decode(t, &listed)
	if len(listed) != 6 {
		t.Fatalf("listed %d, want 6: %s", len(listed), r.body)
	}
	if got, want := string(listed[1]["id"]), `"REQ-X"`; got != want {
		t.Errorf("string id listed as %s, want %s", got, want)
	}
	if got, want := string(listed[0]["expiry"]), `"2025-06-09T12:00:00Z"`; got != want {
		t.Errorf("expiry %s, want %s", got, want)
	}
	for _, rq := range listed[3:] {
		var v struct {
			Registration, Make string
		}
		if err := json.Unmarshal(rq["vehicle"], &v); err != nil || v.Registration == "" || v.Make == "" {
			t.Errorf("random request without a realistic vehicle: %s", rq["vehicle"])
		}
		if !strings.HasPrefix(string(rq["claim_number"]), `"CLM-`) || rq["accident"] == nil {
			t.Errorf("random request %v lacks a claim number or an accident", rq)
		}
	}

	for _, c := range []struct{ name, body string }{
		{"VehicleNotObject", `[{"vehicle":"AB12"}]`},
		{"UnknownField", `[{"claimnumber":"x"}]`},
		{"CountTooBig", `{"count":100000}`},
		{"CountWithOthers", `{"count":1,"claim_number":"x"}`},
		{"NotJSON", `nope`},
		{"Empty", ``},
	} {
		expectStatus(t, c.name, h.admin("POST", "requests", c.body), http.StatusBadRequest)
	}
	expectVerified(t, h, "POST /requests 201", "POST /requests 400")
}

// TestAdminStateCallsFaultsReset drives the rest of the admin API.
func TestAdminStateCallsFaultsReset(t *testing.T) {
	h := newHarness(t)
	job := h.acceptedJob("RO-1")
	h.call("GET", "/requests", "")

	r := h.admin("GET", "state", "")
	expectStatus(t, "state", r, http.StatusOK)
	var st emulator.State
	r.decode(t, &st)
	if len(st.Jobs) != 1 || st.Jobs[0].ID != job || len(st.History) != 1 || st.History[0].Kind != emulator.HistoryAccept {
		t.Errorf("admin state %s: want job %s and one accept", r.body, job)
	}

	r = h.admin("GET", "calls", "")
	var calls map[string]int
	r.decode(t, &calls)
	if diff := cmp.Diff(map[string]int{emulator.RouteAccept: 1, emulator.RouteListRequests: 1}, calls); diff != "" {
		t.Errorf("admin calls (-want +got):\n%s", diff)
	}

	r = h.admin("POST", "faults", `{"route":"GET /requests","action":"status","status":503,"retryAfter":"2s","count":1}`)
	expectStatus(t, "add fault", r, http.StatusCreated)
	var added struct{ ID string }
	r.decode(t, &added)
	if added.ID == "" {
		t.Fatalf("add fault answered %s", r.body)
	}
	if r := h.call("GET", "/requests", ""); r.status != 503 || r.header.Get("Retry-After") != "2" {
		t.Errorf("faulted list: %d Retry-After %q", r.status, r.header.Get("Retry-After"))
	}
	r = h.admin("GET", "faults", "")
	var faults []map[string]any
	r.decode(t, &faults)
	if len(faults) != 1 || faults[0]["id"] != added.ID || faults[0]["retryAfter"] != "2s" ||
		faults[0]["active"] != false || faults[0]["fired"] != json.Number("1") {
		t.Errorf("faults %s: want %s fired once, used up", r.body, added.ID)
	}
	expectStatus(t, "delete fault", h.admin("DELETE", "faults/"+added.ID, ""), http.StatusNoContent)
	expectError(t, "delete it again", h.admin("DELETE", "faults/"+added.ID, ""), http.StatusNotFound, emulator.CodeFaultNotFound)
	for _, bad := range []string{
		`{"route":"GET /request","action":"status"}`,
		`{"route":"*","action":"latency","latency":"soon"}`,
		`{"route":"*","action":"drop","probability":2}`,
		`{"route":"*","action":"drop","colour":"red"}`,
	} {
		expectStatus(t, "bad fault "+bad, h.admin("POST", "faults", bad), http.StatusBadRequest)
	}
	expectStatus(t, "add another", h.admin("POST", "faults", `{"route":"*","action":"latency","latency":"10ms"}`), http.StatusCreated)
	expectStatus(t, "clear faults", h.admin("DELETE", "faults", ""), http.StatusNoContent)
	if len(h.emu.Faults()) != 0 {
		t.Errorf("faults left after DELETE /_emulator/faults: %+v", h.emu.Faults())
	}

	expectStatus(t, "seed", h.admin("POST", "seed", `{"seed":99}`), http.StatusNoContent)
	r = h.admin("GET", "routes", "")
	var routes []string
	r.decode(t, &routes)
	if !slices.Equal(routes, emulator.Routes()) || len(routes) != 12 {
		t.Errorf("routes %v, want the 12 of Routes()", routes)
	}

	expectStatus(t, "reset", h.admin("POST", "reset", ""), http.StatusNoContent)
	st = h.emu.State()
	if len(st.Requests)+len(st.Jobs)+len(st.History)+len(h.emu.Calls()) != 0 {
		t.Errorf("after reset: state %+v calls %v", st, h.emu.Calls())
	}
	expectError(t, "unknown admin route", h.admin("GET", "nope", ""), http.StatusNotFound, emulator.CodeRouteNotFound)
	expectVerified(t, h, "GET /state 200", "GET /calls 200", "POST /faults 201", "GET /faults 200", "DELETE /faults/{id} 204",
		"DELETE /faults/{id} 404", "POST /faults 400", "DELETE /faults 204", "POST /seed 204", "GET /routes 200", "POST /reset 204")
}

// expectVerified fails the test unless the harness's client validated an
// exchange of each "METHOD /template STATUS" against its contract.
func expectVerified(t *testing.T, h *harness, keys ...string) {
	t.Helper()
	v := h.client.Transport.(*validatingTransport)
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, k := range keys {
		if v.verified[k] == 0 {
			t.Errorf("no exchange %q validated against its contract (validated: %v)", k, v.verified)
		}
	}
}

// TestAdminLoopbackOnly: the admin API refuses non-loopback peers unless
// AllowRemoteAdmin is set; the integration API does not care.
func TestAdminLoopbackOnly(t *testing.T) {
	for _, allow := range []bool{false, true} {
		emu, err := emulator.New(emulator.Options{Token: testToken, AllowRemoteAdmin: allow})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest("GET", "/_emulator/state", nil)
		req.RemoteAddr = "192.0.2.7:40000"
		rec := httptest.NewRecorder()
		emu.ServeHTTP(rec, req)
		want := http.StatusForbidden
		if allow {
			want = http.StatusOK
		}
		if rec.Code != want {
			t.Errorf("AllowRemoteAdmin=%t: status %d, want %d", allow, rec.Code, want)
		}
		req = httptest.NewRequest("GET", emulator.APIPrefix+"/requests", nil)
		req.RemoteAddr = "192.0.2.7:40000"
		req.Header.Set("Authorization", "Bearer "+testToken)
		rec = httptest.NewRecorder()
		emu.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Errorf("API from a remote peer: status %d, want 200", rec.Code)
		}
	}
}
