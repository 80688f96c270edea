package emulator_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quotesync/quotesync/remote/emulator"
)

// TestWorkflow walks the whole seed workflow over HTTP: list, accept,
// create a Draft, replace it, update it, submit it, and the refusals that
// follow, then checks the history the emulator kept.
func TestWorkflow(t *testing.T) {
	h := newHarness(t)
	id := h.seed("CLM-2025-000123")
	other := h.seed("CLM-2025-000124")

	// 1. List pending requests.
	r := h.call("GET", "/requests", "")
	expectStatus(t, "list", r, http.StatusOK)
	var listed []map[string]json.RawMessage
	r.decode(t, &listed)
	if got, want := len(listed), 2; got != want {
		t.Fatalf("listed %d requests, want %d: %s", got, want, r.body)
	}
	if got, want := string(listed[0]["id"]), id; got != want {
		t.Errorf("first id %s, want %s (a JSON number)", got, want)
	}
	if got, want := string(listed[0]["claim_number"]), `"CLM-2025-000123"`; got != want {
		t.Errorf("claim_number %s, want %s", got, want)
	}
	if got, want := string(listed[0]["expiry"]), `"2025-06-03T09:00:00Z"`; got != want {
		t.Errorf("expiry %s, want %s", got, want)
	}
	if got, want := string(listed[0]["vehicle"]), `{"registration":"AB12 CDE","make":"Ford","model":"Focus"}`; got != want {
		t.Errorf("vehicle %s, want %s", got, want)
	}
	for _, k := range []string{"instructions", "accident"} {
		if listed[0][k] == nil {
			t.Errorf("listed request lacks %s: %s", k, r.body)
		}
	}

	// 2. Accept it.
	r = h.call("POST", "/requests/"+id, `{"referenceId":"RO-50001","bookingDate":"2025-06-05"}`)
	expectStatus(t, "accept", r, http.StatusCreated)
	if got, want := r.header.Get("Location"), h.api+"/jobs/RO-50001"; got != want {
		t.Errorf("Location %q, want %q", got, want)
	}
	wantJob := fmt.Sprintf(`{"id":"RO-50001","requestId":%s,"claim_number":"CLM-2025-000123","bookingDate":"2025-06-05"}`, id)
	if got := strings.TrimSpace(string(r.body)); got != wantJob {
		t.Errorf("job body %s, want %s", got, wantJob)
	}
	r = h.call("GET", "/requests", "")
	r.decode(t, &listed)
	if len(listed) != 1 || string(listed[0]["id"]) != other {
		t.Errorf("after accept the list is %s, want only request %s", r.body, other)
	}

	// 3. Create a Draft: ids filled in, numbers and unknown fields kept.
	r = h.call("POST", "/jobs/RO-50001/quotes", fmt.Sprintf(draftQuote, "RO-50001"))
	expectStatus(t, "create draft", r, http.StatusCreated)
	wantQuote := `{"type":"Estimate","status":"Draft","referenceId":"RO-50001",` +
		`"rates":[{"type":"RepairLabour","rate":95.5000},{"type":"Parts","rate":0}],` +
		`"items":[{"id":"L-1","order":1,"type":"Parts","description":"Front bumper","quantity":1,"price":412.3750,"total":412.38,"partNumber":"52119-02A90","markup":10.5,"isOnReport":true},` +
		`{"id":1,"order":2,"type":"RepairLabour","description":"Fit bumper","quantity":1.5,"price":95.5000,"total":143.25,"metadata":{"operation":"R&R"}}],` +
		`"assessorNotes":{"kept":true}}`
	if diff := cmp.Diff(wantQuote, strings.TrimSpace(string(r.body))); diff != "" {
		t.Errorf("created quote (-want +got):\n%s", diff)
	}

	// 4. Re-POST replaces the Draft (200); the line without id gets a new id.
	h.clock.Advance(time.Minute)
	r = h.call("POST", "/jobs/RO-50001/quotes", strings.Replace(fmt.Sprintf(draftQuote, "RO-50001"), "412.3750", "399.9900", 1))
	expectStatus(t, "replace draft", r, http.StatusOK)
	if !strings.Contains(string(r.body), `"price":399.9900`) || !strings.Contains(string(r.body), `{"id":2,"order":2`) {
		t.Errorf("replaced quote %s lacks the new price or the next item id 2", r.body)
	}

	// 5. PUT updates the Draft; type comes from the path.
	r = h.call("PUT", "/jobs/RO-50001/quotes/Estimate",
		`{"status":"Draft","items":[{"id":"L-1","type":"Parts","description":"Front bumper","quantity":2,"price":399.99,"total":799.98}]}`)
	expectStatus(t, "update draft", r, http.StatusOK)

	// 6. Submit.
	r = h.call("PUT", "/jobs/RO-50001/quotes/Estimate/status", `{"status":"Submitted"}`)
	expectStatus(t, "submit", r, http.StatusOK)
	var submitted map[string]json.RawMessage
	r.decode(t, &submitted)
	if got, want := string(submitted["status"]), `"Submitted"`; got != want {
		t.Errorf("status after submit %s, want %s", got, want)
	}
	if got, want := string(submitted["items"]), `[{"id":"L-1","type":"Parts","description":"Front bumper","quantity":2,"price":399.99,"total":799.98}]`; got != want {
		t.Errorf("submitted items %s, want %s", got, want)
	}

	// 7. A Submitted quote cannot be modified or submitted again.
	expectError(t, "re-POST after submit", h.call("POST", "/jobs/RO-50001/quotes", fmt.Sprintf(draftQuote, "RO-50001")),
		http.StatusConflict, emulator.CodeQuoteSubmitted)
	expectError(t, "PUT after submit", h.call("PUT", "/jobs/RO-50001/quotes/Estimate", `{"items":[]}`),
		http.StatusConflict, emulator.CodeQuoteSubmitted)
	expectError(t, "submit again", h.call("POST", "/jobs/RO-50001/quotes/Estimate/status", `{"status":"Submitted"}`),
		http.StatusConflict, emulator.CodeQuoteAlreadySubmitted)

	// The history holds exactly the successful changes, in order.
	st := h.emu.State()
	var kinds []string
	for i, e := range st.History {
		kinds = append(kinds, e.Kind)
		if e.Seq != int64(i+1) {
			t.Errorf("history[%d].Seq = %d, want %d", i, e.Seq, i+1)
		}
		if e.JobID != "RO-50001" || e.RequestID != id {
			t.Errorf("history[%d] job %q request %q, want RO-50001 %s", i, e.JobID, e.RequestID, id)
		}
	}
	wantKinds := []string{emulator.HistoryAccept, emulator.HistoryQuoteCreate, emulator.HistoryQuoteReplace,
		emulator.HistoryQuoteUpdate, emulator.HistoryStatusChange}
	if diff := cmp.Diff(wantKinds, kinds); diff != "" {
		t.Errorf("history kinds (-want +got):\n%s", diff)
	}
	if got, want := st.History[1].Body, json.RawMessage(wantQuote); string(got) != string(want) {
		t.Errorf("history body of the create %s, want %s", got, want)
	}
	if got, want := st.History[4].Route, "PUT /jobs/{jobId}/quotes/{quoteId}/status"; got != want {
		t.Errorf("status change route %q, want %q", got, want)
	}
	req, _ := st.Request(id)
	if req.Status != emulator.RequestAccepted || req.ReferenceID != "RO-50001" || req.BookingDate != "2025-06-05" {
		t.Errorf("request state %+v, want accepted as RO-50001 for 2025-06-05", req)
	}
	job, ok := st.Job("RO-50001")
	if !ok {
		t.Fatalf("state has no job RO-50001")
	}
	q, ok := job.Quote("Estimate")
	if !ok {
		t.Fatalf("job has no Estimate")
	}
	if q.SubmitCount != 1 || q.Status != emulator.StatusSubmitted || q.Writes != 4 {
		t.Errorf("quote state: submitCount %d status %s writes %d, want 1 Submitted 4", q.SubmitCount, q.Status, q.Writes)
	}
	wantCalls := map[string]int{
		emulator.RouteListRequests: 2, emulator.RouteAccept: 1, emulator.RouteCreateQuote: 3, emulator.RouteUpdateQuote: 2,
		"PUT /jobs/{jobId}/quotes/{quoteId}/status": 1, "POST /jobs/{jobId}/quotes/{quoteId}/status": 1,
	}
	if diff := cmp.Diff(wantCalls, h.emu.Calls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// TestCreateSubmittedAtOnce creates a quote with status Submitted: it is
// submitted in one step and a later status change is a conflict.
func TestCreateSubmittedAtOnce(t *testing.T) {
	h := newHarness(t)
	job := h.acceptedJob("RO-7")
	r := h.call("POST", "/jobs/"+job+"/quotes", `{"type":"Estimate","status":"Submitted","items":[]}`)
	expectStatus(t, "create submitted", r, http.StatusCreated)
	if got, want := strings.TrimSpace(string(r.body)), `{"type":"Estimate","status":"Submitted","rates":[],"items":[]}`; got != want {
		t.Errorf("body %s, want %s", got, want)
	}
	expectError(t, "submit a quote created Submitted",
		h.call("PUT", "/jobs/"+job+"/quotes/status/Submitted", `{"status":"Submitted"}`),
		http.StatusConflict, emulator.CodeQuoteAlreadySubmitted)
	st := h.emu.State()
	j, _ := st.Job(job)
	if q, _ := j.Quote("Estimate"); q.SubmitCount != 1 {
		t.Errorf("SubmitCount %d, want 1", q.SubmitCount)
	}
}

// TestItemIDsUniqueWithinJob checks that assigned item ids never repeat in
// a job, skip ids the client used, and restart per job.
func TestItemIDsUniqueWithinJob(t *testing.T) {
	h := newHarness(t)
	job := h.acceptedJob("RO-8")
	line := `{"type":"Parts","description":"x","quantity":1,"price":1,"total":1}`
	withID := func(id string) string {
		return `{"id":` + id + `,"type":"Parts","description":"x","quantity":1,"price":1,"total":1}`
	}
	r := h.call("POST", "/jobs/"+job+"/quotes", `{"type":"Estimate","status":"Draft","items":[`+withID(`2`)+`,`+line+`,`+withID(`"3"`)+`,`+line+`]}`)
	expectStatus(t, "create", r, http.StatusCreated)
	var q struct {
		Items []struct {
			ID json.RawMessage `json:"id"`
		} `json:"items"`
	}
	r.decode(t, &q)
	var ids []string
	for _, it := range q.Items {
		ids = append(ids, string(it.ID))
	}
	if diff := cmp.Diff([]string{`2`, `1`, `"3"`, `4`}, ids); diff != "" {
		t.Errorf("item ids (-want +got):\n%s", diff)
	}
	r = h.call("POST", "/jobs/"+job+"/quotes", `{"type":"Supplement","status":"Draft","items":[`+line+`]}`)
	expectStatus(t, "second quote", r, http.StatusCreated)
	if !strings.Contains(string(r.body), `"id":5`) {
		t.Errorf("second quote of the job %s: want item id 5", r.body)
	}
	other := h.acceptedJob("RO-9")
	r = h.call("POST", "/jobs/"+other+"/quotes", `{"type":"Estimate","status":"Draft","items":[`+line+`]}`)
	if !strings.Contains(string(r.body), `"id":1`) {
		t.Errorf("first quote of another job %s: want item id 1", r.body)
	}
}
