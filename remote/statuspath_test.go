package remote

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSetStatusEveryFormAndMethod(t *testing.T) {
	want := map[string]string{
		StatusPathQuoteID:      "/jobs/RO-1/quote/Estimate/status",
		StatusPathQuotesID:     "/jobs/RO-1/quotes/Estimate/status",
		StatusPathQuoteStatus:  "/jobs/RO-1/quote/status/Submitted",
		StatusPathQuotesStatus: "/jobs/RO-1/quotes/status/Submitted",
	}
	for _, form := range statusForms {
		for _, method := range []string{"PUT", "post"} {
			t.Run(method+form, func(t *testing.T) {
				rec := &recorder{replies: []reply{{status: 200, body: `{"type":"Estimate","status":"Submitted","items":[]}`}}}
				c, _ := newTestClient(t, rec, func(c *Config) { c.StatusPath, c.StatusMethod = form, method })
				q, err := c.SetStatus(context.Background(), "RO-1", QuoteTypeEstimate, StatusSubmitted)
				if err != nil {
					t.Fatal(err)
				}
				if q.Status != StatusSubmitted || q.Type != QuoteTypeEstimate {
					t.Errorf("quote = %+v, want Estimate Submitted", q)
				}
				r := rec.requests()[0]
				got := r.Method + " " + strings.TrimPrefix(r.Path, APIRoot)
				if w := strings.ToUpper(method) + " " + want[form]; got != w {
					t.Errorf("sent %s, want %s", got, w)
				}
				if r.Body != `{"status":"Submitted"}` {
					t.Errorf("body = %s, want {\"status\":\"Submitted\"}", r.Body)
				}
			})
		}
	}
}

// oneFormServer answers only POST on the status-in-path singular form: 405
// for PUT there, 404 anywhere else.
func oneFormServer(rec *recorder) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/quote/Estimate/status") {
			rec.ServeHTTP(httptestDiscard{}, r)
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodPost {
			rec.ServeHTTP(httptestDiscard{}, r)
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		rec.ServeHTTP(w, r)
	})
}

// httptestDiscard is a ResponseWriter that drops what it is given, so the
// recorder can record a request another handler answered.
type httptestDiscard struct{}

func (httptestDiscard) Header() http.Header         { return http.Header{} }
func (httptestDiscard) Write(b []byte) (int, error) { return len(b), nil }
func (httptestDiscard) WriteHeader(int)             {}

func TestSetStatusAuto(t *testing.T) {
	rec := &recorder{replies: []reply{{status: 200, body: `{"type":"Estimate","status":"Submitted"}`}}}
	c, _ := newTestClient(t, oneFormServer(rec), func(c *Config) { c.StatusPath = StatusPathAuto })
	if _, err := c.SetStatus(context.Background(), "RO-1", "Estimate", StatusSubmitted); err != nil {
		t.Fatalf("first SetStatus: %v", err)
	}
	var got []string
	for _, r := range rec.requests() {
		got = append(got, r.Method+" "+strings.TrimPrefix(r.Path, APIRoot))
	}
	// The public documentation's example first, then its prose, then the
	// other method of each, then the forms with the quote type.
	want := []string{
		"POST /jobs/RO-1/quotes/status/Submitted", "PUT /jobs/RO-1/quote/status/Submitted",
		"PUT /jobs/RO-1/quotes/status/Submitted", "POST /jobs/RO-1/quote/status/Submitted",
		"PUT /jobs/RO-1/quotes/Estimate/status", "POST /jobs/RO-1/quotes/Estimate/status",
		"PUT /jobs/RO-1/quote/Estimate/status", "POST /jobs/RO-1/quote/Estimate/status",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("probe order (-want +got):\n%s", diff)
	}

	// Remembered: concurrent calls each go straight to the working pair.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := c.SetStatus(context.Background(), "RO-2", "Estimate", StatusSubmitted); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := len(rec.requests()); n != len(want)+8 {
		t.Errorf("%d requests after 8 more calls, want %d (one each)", n, len(want)+8)
	}
}

func TestSetStatusAutoConcurrentFirstCalls(t *testing.T) {
	rec := &recorder{replies: []reply{{status: 200, body: `{"type":"Estimate","status":"Submitted"}`}}}
	c, _ := newTestClient(t, oneFormServer(rec), func(c *Config) { c.StatusPath = StatusPathAuto })
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			if _, err := c.SetStatus(context.Background(), "RO-1", "Estimate", StatusSubmitted); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got, want := c.statusForm.Load(), int32(8); got != want {
		t.Errorf("remembered candidate %d, want %d (POST quote/{quoteId}/status)", got, want)
	}
}

func TestSetStatusAutoAllNotFound(t *testing.T) {
	rec := &recorder{replies: []reply{{status: 404, body: `{"error":{"code":"job_not_found"}}`}}}
	c, _ := newTestClient(t, rec, func(c *Config) { c.StatusPath = StatusPathAuto })
	_, err := c.SetStatus(context.Background(), "RO-404", "Estimate", StatusSubmitted)
	checkOneSentinel(t, err, ErrNotFound)
	if n := len(rec.requests()); n != 8 {
		t.Errorf("%d requests, want all 8 pairs tried", n)
	}
	if c.statusForm.Load() != 0 {
		t.Errorf("a pair was remembered after 404s only")
	}
}

func TestSetStatusAutoRemembersConflict(t *testing.T) {
	// A 409 (already Submitted) proves the route exists: it is remembered.
	rec := &recorder{replies: []reply{{status: 404}, {status: 409}}}
	c, _ := newTestClient(t, rec, func(c *Config) { c.StatusPath = StatusPathAuto; c.StatusMethod = "POST" })
	_, err := c.SetStatus(context.Background(), "RO-1", "Estimate", StatusSubmitted)
	checkOneSentinel(t, err, ErrConflict)
	if got, want := c.statusForm.Load(), int32(2); got != want {
		t.Errorf("remembered %d, want 2 (PUT, the other method, on the first form)", got)
	}
	reqs := rec.requests()
	if reqs[0].Method != "POST" || reqs[1].Method != "PUT" {
		t.Errorf("methods %s, %s; want POST (configured) then PUT", reqs[0].Method, reqs[1].Method)
	}
}

// TestStatusFormKeptAndGiven: auto mode says which pair it found, and takes
// one found by an earlier run (then sends only that); a fixed form is
// reported as configured and cannot be replaced.
func TestStatusFormKeptAndGiven(t *testing.T) {
	rec := &recorder{replies: []reply{{status: 200, body: `{"type":"Estimate","status":"Submitted"}`}}}
	c, _ := newTestClient(t, oneFormServer(rec), func(c *Config) { c.StatusPath = StatusPathAuto })
	if form, found := c.StatusForm(); found || form != "" {
		t.Errorf("StatusForm before any call = %q, %v; want none", form, found)
	}
	if _, err := c.SetStatus(context.Background(), "RO-1", "Estimate", StatusSubmitted); err != nil {
		t.Fatal(err)
	}
	form, found := c.StatusForm()
	if want := "POST " + StatusPathQuoteID; !found || form != want {
		t.Fatalf("StatusForm after the probe = %q, %v; want %q", form, found, want)
	}

	// A restart: a new client is given the form, and probes nothing.
	rec2 := &recorder{replies: []reply{{status: 200, body: `{"type":"Estimate","status":"Submitted"}`}}}
	c2, _ := newTestClient(t, oneFormServer(rec2), func(c *Config) { c.StatusPath = StatusPathAuto })
	if err := c2.UseStatusForm(form); err != nil {
		t.Fatalf("UseStatusForm(%q): %v", form, err)
	}
	if _, err := c2.SetStatus(context.Background(), "RO-2", "Estimate", StatusSubmitted); err != nil {
		t.Fatal(err)
	}
	if got := rec2.requests(); len(got) != 1 {
		t.Errorf("a client given the form sent %d requests, want 1", len(got))
	}
	if err := c2.UseStatusForm("PATCH /jobs/{jobId}/x"); err == nil {
		t.Error("UseStatusForm accepted a form auto mode never tries")
	}

	fixed, _ := newTestClient(t, rec, nil)
	if form, found := fixed.StatusForm(); found || form != "POST "+StatusPathQuotesStatus {
		t.Errorf("StatusForm of the default = %q, %v; want the documented POST form, not found", form, found)
	}
	if err := fixed.UseStatusForm("POST " + StatusPathQuoteID); err == nil {
		t.Error("UseStatusForm replaced a configured form")
	}
}
