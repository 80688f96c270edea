package remote

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/shopspring/decimal"
)

func TestNewValidatesConfig(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Config)
		field string
	}{
		{"NoBaseURL", func(c *Config) { c.BaseURL = "" }, "BaseURL"},
		{"RelativeBaseURL", func(c *Config) { c.BaseURL = "example.com/api" }, "BaseURL"},
		{"FTPBaseURL", func(c *Config) { c.BaseURL = "ftp://example.com" }, "BaseURL"},
		{"BaseURLWithQuery", func(c *Config) { c.BaseURL = "https://example.com/?a=1" }, "BaseURL"},
		{"NegativeTimeout", func(c *Config) { c.Timeout = -time.Second }, "Timeout"},
		{"BackoffMaxBelowInitial", func(c *Config) { c.BackoffInitial, c.BackoffMax = time.Second, time.Millisecond }, "BackoffMax"},
		{"NegativeAttempts", func(c *Config) { c.MaxAttempts = -1 }, "MaxAttempts"},
		{"NegativeBurst", func(c *Config) { c.Burst = -1 }, "Burst"},
		{"NegativeBody", func(c *Config) { c.MaxBodyBytes = -1 }, "MaxBodyBytes"},
		{"DraftUpdate", func(c *Config) { c.DraftUpdate = "patch" }, "DraftUpdate"},
		{"StatusMethod", func(c *Config) { c.StatusMethod = "PATCH" }, "StatusMethod"},
		{"StatusPath", func(c *Config) { c.StatusPath = "/jobs/{jobId}/submit" }, "StatusPath"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig("https://api.example.com")
			tt.edit(&cfg)
			_, err := New(cfg, StaticToken(testToken))
			if err == nil || !strings.Contains(err.Error(), tt.field+":") {
				t.Fatalf("New() error = %v, want one naming %s", err, tt.field)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != tt.field {
				t.Errorf("New() error = %#v, want a *ConfigError of field %s", err, tt.field)
			}
		})
	}
	t.Run("CredentialsNotEchoed", func(t *testing.T) {
		_, err := New(Config{BaseURL: "https://user:hunter2pass@example.com"}, StaticToken(testToken))
		if err == nil || strings.Contains(err.Error(), "hunter2pass") {
			t.Fatalf("New() error = %v, want an error without the password", err)
		}
	})
	t.Run("NilTokens", func(t *testing.T) {
		if _, err := New(testConfig("https://example.com"), nil); err == nil {
			t.Fatal("New(nil tokens) succeeded")
		}
	})
	t.Run("Defaults", func(t *testing.T) {
		c, err := New(Config{BaseURL: "https://example.com/base/"}, StaticToken(testToken))
		if err != nil {
			t.Fatal(err)
		}
		got := c.cfg
		want := Config{BaseURL: "https://example.com/base/", UserAgent: DefaultUserAgent, Timeout: DefaultTimeout,
			MaxAttempts: DefaultMaxAttempts, BackoffInitial: DefaultBackoffInitial, BackoffMax: DefaultBackoffMax,
			RateLimit: DefaultRateLimit, Burst: DefaultBurst, MaxBodyBytes: DefaultMaxBodyBytes,
			DraftUpdate: DraftUpdateRepost, StatusMethod: "POST", StatusPath: StatusPathQuotesStatus,
			BookingDateLayout: "2006-01-02"}
		if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Config{}, "Observe", "HTTPClient")); diff != "" {
			t.Errorf("defaults (-want +got):\n%s", diff)
		}
		if got, want := c.api, "https://example.com/base/integrations/repairer"; got != want {
			t.Errorf("api = %q, want %q", got, want)
		}
	})
}

func TestListRequests(t *testing.T) {
	body := `[
	 {"id": 12345678901234567890, "claim_number": "CLM-1", "expiry": "2030-05-01T10:00:00Z",
	  "instructions": {"note": "rear bumper"}, "vehicle": {"registration": "AB12CDE"}, "extra": 1},
	 {"id": "R-2", "claimNumber": "CLM-2", "expiry": "2030-05-02", "accident": {"date": "2030-04-01"}}
	]`
	rec := &recorder{replies: []reply{{status: 200, body: body}}}
	c, _ := newTestClient(t, rec, func(c *Config) { c.UserAgent = "quotesync/1.2.3" })

	got, err := c.ListRequests(context.Background())
	if err != nil {
		t.Fatalf("ListRequests: %v", err)
	}
	want := []Request{
		{ID: "12345678901234567890", ClaimNumber: "CLM-1", Expiry: time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC),
			Instructions: json.RawMessage(`{"note": "rear bumper"}`), Vehicle: json.RawMessage(`{"registration": "AB12CDE"}`)},
		{ID: "R-2", ClaimNumber: "CLM-2", Expiry: time.Date(2030, 5, 2, 0, 0, 0, 0, time.UTC),
			Accident: json.RawMessage(`{"date": "2030-04-01"}`)},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Request{}, "Raw")); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(got[0].Raw), `"extra": 1`) {
		t.Errorf("Raw = %s, want the whole object with unknown fields", got[0].Raw)
	}
	r := rec.requests()[0]
	wantReq := recorded{Method: "GET", Path: "/integrations/repairer/requests", Auth: "Bearer " + testToken,
		ContentType: "application/json", Accept: "application/json", UserAgent: "quotesync/1.2.3"}
	if diff := cmp.Diff(wantReq, r); diff != "" {
		t.Errorf("request sent (-want +got):\n%s", diff)
	}
}

func TestListRequestsKeepsGoodEntries(t *testing.T) {
	body := `[{"id": 1, "expiry": "2030-01-01T00:00:00Z"},
	          {"id": 2, "expiry": "next tuesday"},
	          {"claim_number": "no id"},
	          {"id": 4, "claim_number": "CLM-4"},
	          "not an object"]`
	c, _ := newTestClient(t, &recorder{replies: []reply{{status: 200, body: body}}}, nil)
	got, err := c.ListRequests(context.Background())
	if ids := requestIDs(got); !cmp.Equal(ids, []string{"1", "4"}) {
		t.Errorf("ids = %v, want [1 4]", ids)
	}
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v, want *DecodeError", err)
	}
	if !errors.Is(err, ErrRejected) || Class(err) != ClassRejected {
		t.Errorf("DecodeError class = %s, want rejected", Class(err))
	}
	type skip struct {
		Index     int
		ID, Field string
	}
	var skips []skip
	for _, s := range de.Skipped {
		skips = append(skips, skip{s.Index, s.ID, s.Field})
	}
	wantSkips := []skip{{1, "2", "expiry"}, {2, "", "id"}, {4, "", ""}}
	if diff := cmp.Diff(wantSkips, skips); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if de.Total != 5 {
		t.Errorf("Total = %d, want 5", de.Total)
	}
	for _, want := range []string{"request 2", "expiry", "next tuesday", "entry 2", "skipped 3 of 5"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func requestIDs(reqs []Request) []string {
	var ids []string
	for _, r := range reqs {
		ids = append(ids, r.ID)
	}
	return ids
}

func TestAccept(t *testing.T) {
	tests := []struct {
		name     string
		booking  time.Time
		reply    reply
		wantBody string
		wantJob  Job
	}{
		{
			name:     "Created",
			booking:  time.Date(2030, 5, 2, 0, 0, 0, 0, time.UTC),
			reply:    reply{status: 201, body: `{"id":"RO-50001","status":"open"}`, header: map[string]string{"Location": "http://x/integrations/repairer/jobs/RO-50001"}},
			wantBody: `{"referenceId":"RO-50001","bookingDate":"2030-05-02"}`,
			wantJob:  Job{ID: "RO-50001", Location: "http://x/integrations/repairer/jobs/RO-50001"},
		},
		{
			name:     "NoBookingDateNoBody",
			reply:    reply{status: 201, header: map[string]string{"Location": "/jobs/RO-50001"}},
			wantBody: `{"referenceId":"RO-50001"}`,
			wantJob:  Job{ID: "RO-50001", Location: "/jobs/RO-50001"},
		},
		{
			name:     "OKWithoutID",
			reply:    reply{status: 200, body: `{"state":"accepted"}`},
			wantBody: `{"referenceId":"RO-50001"}`,
			wantJob:  Job{ID: "RO-50001"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{replies: []reply{tt.reply}}
			c, _ := newTestClient(t, rec, nil)
			job, err := c.Accept(context.Background(), "17", "RO-50001", tt.booking)
			if err != nil {
				t.Fatalf("Accept: %v", err)
			}
			if diff := cmp.Diff(tt.wantJob, job, cmpopts.IgnoreFields(Job{}, "Raw")); diff != "" {
				t.Errorf("job (-want +got):\n%s", diff)
			}
			r := rec.requests()[0]
			if got, want := r.Method+" "+r.Path, "POST /integrations/repairer/requests/17"; got != want {
				t.Errorf("sent %s, want %s", got, want)
			}
			if r.Body != tt.wantBody {
				t.Errorf("body = %s, want %s", r.Body, tt.wantBody)
			}
		})
	}
}

func TestPathSegmentsEscaped(t *testing.T) {
	rec := &recorder{replies: []reply{{status: 201, body: `{}`}}}
	c, _ := newTestClient(t, rec, func(c *Config) { c.DraftUpdate = DraftUpdatePut })
	ctx := context.Background()
	if _, err := c.Accept(ctx, "a/b c?d", "RO-1", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateQuote(ctx, "RO/50001", Quote{Type: "Estimate"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateDraft(ctx, "..", Quote{Type: "Est/imate"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetStatus(ctx, "RO#1", "Estimate", "Submitted"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rec.requests() {
		got = append(got, r.Method+" "+strings.TrimPrefix(r.Path, APIRoot))
	}
	want := []string{
		"POST /requests/a%2Fb%20c%3Fd",
		"POST /jobs/RO%2F50001/quotes",
		"PUT /jobs/%2E%2E/quotes/Est%2Fimate",
		"POST /jobs/RO%231/quotes/status/Submitted",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
}

func TestEmptyIDsRejectedWithoutCall(t *testing.T) {
	rec := &recorder{}
	c, _ := newTestClient(t, rec, nil)
	ctx := context.Background()
	errs := map[string]error{}
	_, errs["accept"] = c.Accept(ctx, "", "RO-1", time.Time{})
	_, errs["accept ref"] = c.Accept(ctx, "17", "", time.Time{})
	_, errs["create"] = c.CreateQuote(ctx, "", Quote{})
	_, errs["status"] = c.SetStatus(ctx, "RO-1", "", StatusSubmitted)
	for name, err := range errs {
		if !errors.Is(err, ErrRejected) {
			t.Errorf("%s: err = %v, want ErrRejected", name, err)
		}
	}
	if n := len(rec.requests()); n != 0 {
		t.Errorf("%d requests sent, want 0", n)
	}
}

func TestCreateQuoteAndUpdateDraft(t *testing.T) {
	q := Quote{
		Type: QuoteTypeEstimate, Status: StatusDraft, ReferenceID: "RO-1",
		Rates: []Rate{{Type: "RepairLabour", Rate: decimal.RequireFromString("55.00")}},
		Items: []Item{{ID: "line-7", Order: 1, Type: "Parts", Description: "Bumper",
			Quantity: decimal.RequireFromString("1.5"), Price: decimal.RequireFromString("95.5000"),
			Total: decimal.RequireFromString("143.25"), Metadata: map[string]string{"sku": "B-1"}}},
		Extra: map[string]json.RawMessage{"notes": json.RawMessage(`"as seen"`)},
	}
	wantBody := `{"type":"Estimate","status":"Draft","referenceId":"RO-1",` +
		`"rates":[{"type":"RepairLabour","rate":55.00}],` +
		`"items":[{"id":"line-7","order":1,"type":"Parts","description":"Bumper","quantity":1.5,` +
		`"price":95.5000,"total":143.25,"metadata":{"sku":"B-1"}}],"notes":"as seen"}`
	answer := `{"type":"Estimate","status":"Draft","rates":[],"items":[{"id":901,"order":1,"type":"Parts",` +
		`"description":"Bumper","quantity":1.5,"price":95.5,"total":"143.25"}],"createdAt":"2030-01-01T00:00:00Z"}`

	for _, tt := range []struct {
		name     string
		strategy string
		call     func(*Client) (Quote, error)
		want     string
	}{
		{"Create", "", func(c *Client) (Quote, error) { return c.CreateQuote(context.Background(), "RO-1", q) }, "POST /jobs/RO-1/quotes"},
		{"UpdateRepost", DraftUpdateRepost, func(c *Client) (Quote, error) { return c.UpdateDraft(context.Background(), "RO-1", q) }, "POST /jobs/RO-1/quotes"},
		{"UpdatePut", DraftUpdatePut, func(c *Client) (Quote, error) { return c.UpdateDraft(context.Background(), "RO-1", q) }, "PUT /jobs/RO-1/quotes/Estimate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{replies: []reply{{status: 201, body: answer}}}
			c, _ := newTestClient(t, rec, func(c *Config) { c.DraftUpdate = tt.strategy })
			got, err := tt.call(c)
			if err != nil {
				t.Fatal(err)
			}
			r := rec.requests()[0]
			if got, want := r.Method+" "+strings.TrimPrefix(r.Path, APIRoot), tt.want; got != want {
				t.Errorf("sent %s, want %s", got, want)
			}
			if r.Body != wantBody {
				t.Errorf("body\n got %s\nwant %s", r.Body, wantBody)
			}
			if got.Items[0].ID != "901" || !got.Items[0].Total.Equal(decimal.RequireFromString("143.25")) {
				t.Errorf("item = %+v, want id 901 and total 143.25", got.Items[0])
			}
			if string(got.Extra["createdAt"]) != `"2030-01-01T00:00:00Z"` {
				t.Errorf("Extra = %v, want createdAt kept", got.Extra)
			}
		})
	}
}

func TestEmptyBodiesGiveWhatWasSent(t *testing.T) {
	rec := &recorder{replies: []reply{{status: http.StatusNoContent}}}
	c, _ := newTestClient(t, rec, nil)
	q := Quote{Type: "Estimate", Status: StatusDraft}
	got, err := c.CreateQuote(context.Background(), "RO-1", q)
	if err != nil || !cmp.Equal(got, q) {
		t.Errorf("CreateQuote = %+v, %v; want %+v", got, err, q)
	}
	got, err = c.SetStatus(context.Background(), "RO-1", "Estimate", StatusSubmitted)
	if want := (Quote{Type: "Estimate", Status: StatusSubmitted}); err != nil || !cmp.Equal(got, want) {
		t.Errorf("SetStatus = %+v, %v; want %+v", got, err, want)
	}
}
