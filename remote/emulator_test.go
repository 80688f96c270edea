package remote

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/remote/emulator"
)

// The client against the emulator over real HTTP: the emulator has its own
// wire types, so a field the client names wrongly shows up here.

// newEmulator starts an emulator behind httptest; wrap, when set, sits in
// front of it.
func newEmulator(tb testing.TB, wrap func(http.Handler) http.Handler) (*emulator.Emulator, *httptest.Server) {
	tb.Helper()
	emu, err := emulator.New(emulator.Options{Token: testToken, Seed: 1})
	if err != nil {
		tb.Fatal(err)
	}
	var h http.Handler = emu
	if wrap != nil {
		h = wrap(emu)
	}
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return emu, srv
}

// emuClient is a client of srv with testConfig and edit applied.
func emuClient(tb testing.TB, srv *httptest.Server, edit func(*Config)) *Client {
	tb.Helper()
	cfg := testConfig(srv.URL)
	if edit != nil {
		edit(&cfg)
	}
	c, err := New(cfg, StaticToken(testToken))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func draftQuote(ref string) Quote {
	yes := true
	markup := decimal.RequireFromString("0.15")
	return Quote{
		Type: QuoteTypeEstimate, Status: StatusDraft, ReferenceID: ref,
		Rates: []Rate{{Type: "RepairLabour", Rate: decimal.RequireFromString("55.00")}},
		Items: []Item{
			{ID: "line-1", Order: 1, Type: "Parts", Description: "Rear bumper",
				Quantity: decimal.RequireFromString("1"), Price: decimal.RequireFromString("95.5000"),
				Total: decimal.RequireFromString("95.50"), Metadata: map[string]string{"shopLine": "1"},
				PartNumber: "BMP-1", Markup: &markup, IsOnReport: &yes},
			{Order: 2, Type: "RepairLabour", Description: "Fit bumper",
				Quantity: decimal.RequireFromString("1.5"), Price: decimal.RequireFromString("55.00"),
				Total: decimal.RequireFromString("82.50")},
		},
	}
}

func TestWorkflowAgainstEmulator(t *testing.T) {
	emu, srv := newEmulator(t, nil)
	ctx := context.Background()
	expiry := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	ids := emu.AddRequests(
		emulator.SeedRequest{ClaimNumber: "CLM-1", Expiry: expiry, Vehicle: json.RawMessage(`{"registration":"AB12CDE"}`)},
		emulator.SeedRequest{ID: "REQ/2", ClaimNumber: "CLM-2", Expiry: expiry},
	)
	c := emuClient(t, srv, nil)

	reqs, err := c.ListRequests(ctx)
	if err != nil {
		t.Fatalf("ListRequests: %v", err)
	}
	if got := requestIDs(reqs); !cmp.Equal(got, ids) {
		t.Fatalf("listed %v, want %v", got, ids)
	}
	if reqs[0].ClaimNumber != "CLM-1" || !reqs[0].Expiry.Equal(expiry) || !strings.Contains(string(reqs[0].Vehicle), "AB12CDE") {
		t.Errorf("request = %+v, want CLM-1, expiry %s and the vehicle", reqs[0], expiry)
	}

	booking := time.Date(2030, 6, 5, 0, 0, 0, 0, time.UTC)
	job, err := c.Accept(ctx, ids[0], "RO-50001", booking)
	if err != nil {
		t.Fatalf("Accept: %v", err)
	}
	if job.ID != "RO-50001" || !strings.HasSuffix(job.Location, "/integrations/repairer/jobs/RO-50001") {
		t.Errorf("job = %+v, want id RO-50001 and its Location", job)
	}
	_, err = c.Accept(ctx, ids[1], "RO-50001", time.Time{})
	checkOneSentinel(t, err, ErrConflict) // referenceId in use
	if _, err := c.Accept(ctx, ids[1], "RO/50002", time.Time{}); err != nil {
		t.Fatalf("Accept with a / in the referenceId and the request id: %v", err)
	}
	if reqs, _ := c.ListRequests(ctx); len(reqs) != 0 {
		t.Errorf("%d requests still pending, want 0", len(reqs))
	}

	created, err := c.CreateQuote(ctx, "RO-50001", draftQuote("RO-50001"))
	if err != nil {
		t.Fatalf("CreateQuote: %v", err)
	}
	if created.Items[0].ID != "line-1" || created.Items[1].ID == "" || created.Status != StatusDraft {
		t.Errorf("created items %q, %q status %s; want line-1, a filled-in id, Draft",
			created.Items[0].ID, created.Items[1].ID, created.Status)
	}
	if got := formatDecimal(created.Items[0].Price); got != "95.5000" {
		t.Errorf("price came back as %s, want 95.5000", got)
	}

	// Update the Draft both ways.
	q := created
	q.Items[0].Price = decimal.RequireFromString("99.9900")
	if _, err := c.UpdateDraft(ctx, "RO-50001", q); err != nil {
		t.Fatalf("UpdateDraft (repost): %v", err)
	}
	put := emuClient(t, srv, func(c *Config) { c.DraftUpdate = DraftUpdatePut })
	q.Items[1].Quantity = decimal.RequireFromString("2.25")
	updated, err := put.UpdateDraft(ctx, "RO-50001", q)
	if err != nil {
		t.Fatalf("UpdateDraft (put): %v", err)
	}
	if !updated.Items[1].Quantity.Equal(decimal.RequireFromString("2.25")) || formatDecimal(updated.Items[0].Price) != "99.9900" {
		t.Errorf("updated items = %+v, want both changes", updated.Items)
	}

	submitted, err := c.SetStatus(ctx, "RO-50001", QuoteTypeEstimate, StatusSubmitted)
	if err != nil || submitted.Status != StatusSubmitted {
		t.Fatalf("SetStatus = %+v, %v; want Submitted", submitted, err)
	}
	_, err = c.SetStatus(ctx, "RO-50001", QuoteTypeEstimate, StatusSubmitted)
	checkOneSentinel(t, err, ErrConflict)
	_, err = c.UpdateDraft(ctx, "RO-50001", q)
	checkOneSentinel(t, err, ErrConflict)
	_, err = c.CreateQuote(ctx, "RO-404", draftQuote(""))
	checkOneSentinel(t, err, ErrNotFound)

	st := emu.State()
	var kinds []string
	for _, h := range st.History {
		kinds = append(kinds, h.Kind)
	}
	want := []string{emulator.HistoryAccept, emulator.HistoryAccept, emulator.HistoryQuoteCreate,
		emulator.HistoryQuoteReplace, emulator.HistoryQuoteUpdate, emulator.HistoryStatusChange}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	j, _ := st.Job("RO-50001")
	stored, _ := j.Quote(QuoteTypeEstimate)
	if stored.SubmitCount != 1 || !strings.Contains(string(stored.Body), `"price":99.9900`) {
		t.Errorf("stored quote: submitCount %d body %s; want 1 and price 99.9900 kept exactly", stored.SubmitCount, stored.Body)
	}
	if r, _ := st.Request(ids[0]); r.BookingDate != "2030-06-05" {
		t.Errorf("bookingDate stored = %q, want 2030-06-05", r.BookingDate)
	}
}

// TestSetStatusFormsAgainstEmulator submits one job per (form, method).
func TestSetStatusFormsAgainstEmulator(t *testing.T) {
	emu, srv := newEmulator(t, nil)
	ctx := context.Background()
	n := 0
	for _, form := range statusForms {
		for _, method := range []string{http.MethodPut, http.MethodPost} {
			n++
			ref := "RO-" + string(rune('A'+n))
			ids := emu.AddRequests(emulator.SeedRequest{})
			c := emuClient(t, srv, func(c *Config) { c.StatusPath, c.StatusMethod = form, method })
			if _, err := c.Accept(ctx, ids[0], ref, time.Time{}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.CreateQuote(ctx, ref, draftQuote(ref)); err != nil {
				t.Fatal(err)
			}
			q, err := c.SetStatus(ctx, ref, QuoteTypeEstimate, StatusSubmitted)
			if err != nil || q.Status != StatusSubmitted {
				t.Errorf("%s %s: SetStatus = %s, %v; want Submitted", method, form, q.Status, err)
			}
		}
	}
	calls := emu.Calls()
	for _, form := range statusForms {
		for _, method := range []string{http.MethodPut, http.MethodPost} {
			if got := calls[method+" "+form]; got != 1 {
				t.Errorf("emulator saw %d calls of %s %s, want 1", got, method, form)
			}
		}
	}
}

// statusFormOf names the status path form of an API path, "" for others.
func statusFormOf(path string) string {
	segs := strings.Split(strings.TrimPrefix(path, APIRoot), "/") // "", "jobs", id, "quote(s)", a, b
	if len(segs) != 6 || segs[1] != "jobs" {
		return ""
	}
	switch {
	case segs[5] == "status":
		return "/jobs/{jobId}/" + segs[3] + "/{quoteId}/status"
	case segs[4] == "status":
		return "/jobs/{jobId}/" + segs[3] + "/status/{status}"
	}
	return ""
}

// onlyForm lets through to the emulator only "method form" status calls;
// other status forms get 404, the form with the other method 405.
func onlyForm(method, form string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch f := statusFormOf(r.URL.Path); {
			case f == "":
				next.ServeHTTP(w, r)
			case f != form:
				http.NotFound(w, r)
			case r.Method != method:
				w.WriteHeader(http.StatusMethodNotAllowed)
			default:
				next.ServeHTTP(w, r)
			}
		})
	}
}

func TestSetStatusAutoAgainstEmulator(t *testing.T) {
	emu, srv := newEmulator(t, onlyForm(http.MethodPost, StatusPathQuoteID))
	ctx := context.Background()
	c := emuClient(t, srv, func(c *Config) { c.StatusPath = StatusPathAuto })
	for i, ref := range []string{"RO-1", "RO-2"} {
		ids := emu.AddRequests(emulator.SeedRequest{})
		if _, err := c.Accept(ctx, ids[0], ref, time.Time{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateQuote(ctx, ref, draftQuote(ref)); err != nil {
			t.Fatal(err)
		}
		q, err := c.SetStatus(ctx, ref, QuoteTypeEstimate, StatusSubmitted)
		if err != nil || q.Status != StatusSubmitted {
			t.Fatalf("call %d: SetStatus = %s, %v; want Submitted", i+1, q.Status, err)
		}
	}
	calls := emu.Calls()
	if got := calls["POST "+StatusPathQuoteID]; got != 2 {
		t.Errorf("emulator saw %d POST %s, want 2 (one per job)", got, StatusPathQuoteID)
	}
	if got, want := c.statusForm.Load(), int32(8); got != want {
		t.Errorf("remembered candidate %d, want %d (POST %s)", got, want, StatusPathQuoteID)
	}
	st := emu.State()
	for _, ref := range []string{"RO-1", "RO-2"} {
		j, _ := st.Job(ref)
		if q, _ := j.Quote(QuoteTypeEstimate); q.SubmitCount != 1 {
			t.Errorf("%s submitted %d times, want 1", ref, q.SubmitCount)
		}
	}
}

// TestAcceptLandedThenLostIsNotDuplicated: the accept lands but its answer
// is lost; the retry with the same referenceId gets 409 and the emulator
// holds exactly one acceptance.
func TestAcceptLandedThenLostIsNotDuplicated(t *testing.T) {
	for _, tt := range []struct {
		name  string
		fault emulator.Fault
	}{
		{"Drop", emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultLandThenDrop, Count: 1}},
		{"Hang", emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultLandThenHang, Latency: 2 * time.Second, Count: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			emu, srv := newEmulator(t, nil)
			ids := emu.AddRequests(emulator.SeedRequest{ClaimNumber: "CLM-9"})
			emu.AddFault(tt.fault)
			c := emuClient(t, srv, func(c *Config) { c.Timeout = 200 * time.Millisecond })

			_, err := c.Accept(context.Background(), ids[0], "RO-777", time.Time{})
			checkOneSentinel(t, err, ErrConflict)
			var e *Error
			if !errors.As(err, &e) || e.Attempts != 2 || e.Status != http.StatusConflict {
				t.Errorf("err = %v, want a 409 on the 2nd attempt", err)
			}
			if got := emu.Calls()[emulator.RouteAccept]; got != 2 {
				t.Errorf("emulator saw %d accepts, want 2", got)
			}
			st := emu.State()
			accepts := 0
			for _, h := range st.History {
				if h.Kind == emulator.HistoryAccept {
					accepts++
				}
			}
			r, _ := st.Request(ids[0])
			if accepts != 1 || len(st.Jobs) != 1 || r.ReferenceID != "RO-777" {
				t.Errorf("%d acceptances, %d jobs, request referenceId %q; want 1, 1, RO-777", accepts, len(st.Jobs), r.ReferenceID)
			}
		})
	}
}

// TestRetriesAgainstEmulatorFaults: transient faults are absorbed by the
// retries and the call succeeds once.
func TestRetriesAgainstEmulatorFaults(t *testing.T) {
	for _, f := range []emulator.Fault{
		{Route: emulator.RouteListRequests, Action: emulator.FaultStatus, Status: 503, RetryAfter: time.Second, Count: 2},
		{Route: emulator.RouteListRequests, Action: emulator.FaultStatus, Status: 429, RetryAfter: time.Second, Count: 1},
		{Route: emulator.RouteListRequests, Action: emulator.FaultGarbage, Count: 2},
		{Route: emulator.RouteListRequests, Action: emulator.FaultDrop, Count: 1},
		{Route: "*", Action: emulator.FaultLatency, Latency: 500 * time.Millisecond, Count: 1},
	} {
		t.Run(f.Action+"_"+http.StatusText(f.Status), func(t *testing.T) {
			emu, srv := newEmulator(t, nil)
			emu.AddRequests(emulator.SeedRequest{})
			emu.AddFault(f)
			var obs observed
			c := emuClient(t, srv, func(c *Config) { c.Observe = obs.observe; c.Timeout = 200 * time.Millisecond })
			var sr sleepRecorder
			c.sleep = sr.sleep
			reqs, err := c.ListRequests(context.Background())
			if err != nil || len(reqs) != 1 {
				t.Fatalf("ListRequests = %d requests, %v; want 1", len(reqs), err)
			}
			wantAttempts := max(f.Count, 1) + 1
			if got := len(obs.all()); got != wantAttempts {
				t.Errorf("%d attempts, want %d", got, wantAttempts)
			}
			if f.RetryAfter > 0 && (len(sr.waits) == 0 || sr.waits[0] != c.cfg.BackoffMax) {
				t.Errorf("waits %v, want the 1s Retry-After capped at BackoffMax %s", sr.waits, c.cfg.BackoffMax)
			}
		})
	}
}

func TestEmulatorRefusesBadToken(t *testing.T) {
	_, srv := newEmulator(t, nil)
	c, err := New(testConfig(srv.URL), StaticToken("wrong-token-value"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ListRequests(context.Background())
	checkOneSentinel(t, err, ErrUnauthorized)
	var e *Error
	if errors.As(err, &e); e.Attempts != 2 {
		t.Errorf("attempts = %d, want 2 (one refresh)", e.Attempts)
	}
}
