package sync

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"go.uber.org/zap"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/redact"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func sampleLines() []shopdb.Line {
	return []shopdb.Line{
		{Job: "RO-1", LineID: "11", Order: 1, Code: "R&R", WorkType: "RemoveReplaceLabour", Description: "Front bumper R&R",
			Quantity: dec("1.5"), Price: dec("95.5000"), Total: dec("143.25")},
		{Job: "RO-1", LineID: "12", Order: 2, Code: "PART", WorkType: "Parts", Description: "Bumper cover", PartNumber: "52119-0K929",
			Quantity: dec("1"), Price: dec("412.3375"), Total: dec("412.34")},
	}
}

func testEngine(t *testing.T, cfg Config) *Engine {
	t.Helper()
	e, err := New(cfg, &fakeRemote{}, fakeShop{}, fakeStore{}, zap.NewNop())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

func TestBuildQuote(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Quote.Rates = map[string]decimal.Decimal{"RepairLabour": dec("88"), "RemoveReplaceLabour": dec("95.50")}
	q := testEngine(t, cfg).buildQuote("RO-1", sampleLines(), nil)
	if got, want := q.Type, "Estimate"; got != want {
		t.Errorf("Type = %q, want %q", got, want)
	}
	if got, want := q.Status, remote.StatusDraft; got != want {
		t.Errorf("Status = %q, want %q", got, want)
	}
	if got, want := q.ReferenceID, "RO-1"; got != want {
		t.Errorf("ReferenceID = %q, want %q", got, want)
	}
	if got, want := len(q.Rates), 2; got != want {
		t.Fatalf("len(Rates) = %d, want %d", got, want)
	}
	if got, want := q.Rates[0].Type, "RemoveReplaceLabour"; got != want {
		t.Errorf("Rates[0].Type = %q, want %q (sorted by type)", got, want)
	}
	if got, want := len(q.Items), 2; got != want {
		t.Fatalf("len(Items) = %d, want %d", got, want)
	}
	it := q.Items[1]
	if it.ID != "12" || it.Order != 2 || it.Type != "Parts" || it.PartNumber != "52119-0K929" || it.Price.String() != "412.3375" || it.Total.String() != "412.34" {
		t.Errorf("Items[1] = %+v, want the PART line with its shop values", it)
	}

	cfg.Quote.OmitReferenceID = true
	if got := testEngine(t, cfg).buildQuote("RO-1", sampleLines(), nil).ReferenceID; got != "" {
		t.Errorf("ReferenceID with OmitReferenceID = %q, want empty", got)
	}
}

func TestHashQuote(t *testing.T) {
	e := testEngine(t, DefaultConfig())
	base := e.buildQuote("RO-1", sampleLines(), nil)
	h := hashQuote(base)
	if len(h) != 64 {
		t.Fatalf("hash %q is not hex SHA-256", h)
	}
	// The same amounts written differently hash alike.
	lines := sampleLines()
	lines[0].Price = dec("95.5")
	lines[0].Quantity = dec("1.500")
	if got := hashQuote(e.buildQuote("RO-1", lines, nil)); got != h {
		t.Errorf("hash changed for 95.5 vs 95.5000: %s vs %s", got, h)
	}

	changes := map[string]func(q *remote.Quote){
		"price":         func(q *remote.Quote) { q.Items[0].Price = dec("95.51") },
		"quantity":      func(q *remote.Quote) { q.Items[0].Quantity = dec("2") },
		"total":         func(q *remote.Quote) { q.Items[1].Total = dec("412.33") },
		"description":   func(q *remote.Quote) { q.Items[0].Description += "." },
		"type":          func(q *remote.Quote) { q.Items[0].Type = "RepairLabour" },
		"order":         func(q *remote.Quote) { q.Items[0].Order = 3 },
		"id":            func(q *remote.Quote) { q.Items[0].ID = "13" },
		"part number":   func(q *remote.Quote) { q.Items[1].PartNumber = "X" },
		"item removed":  func(q *remote.Quote) { q.Items = q.Items[:1] },
		"reference":     func(q *remote.Quote) { q.ReferenceID = "RO-2" },
		"rate added":    func(q *remote.Quote) { q.Rates = append(q.Rates, remote.Rate{Type: "Parts", Rate: dec("1")}) },
		"metadata":      func(q *remote.Quote) { q.Items[0].Metadata = map[string]string{"k": "v"} },
		"markup":        func(q *remote.Quote) { m := dec("10"); q.Items[1].Markup = &m },
		"on report":     func(q *remote.Quote) { b := true; q.Items[1].IsOnReport = &b },
		"field shuffle": func(q *remote.Quote) { q.Items[0].Description, q.Items[0].PartNumber = "", q.Items[0].Description },
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			q := e.buildQuote("RO-1", sampleLines(), nil)
			change(&q)
			if got := hashQuote(q); got == h {
				t.Errorf("hash unchanged after changing the %s", name)
			}
		})
	}
}

// TestDecisionsBackoff: a request's next attempt waits by the Config's
// retry backoff (the policy itself is pinned in remote), counting its
// consecutive failures, spread by the chance the caller gives, and at
// least the server's Retry-After. The decisions are pure: the same inputs
// give the same wait.
func TestDecisionsBackoff(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RetryBackoffMin, cfg.RetryBackoffMax = time.Minute, time.Hour
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	req := remote.Request{ID: "1", ClaimNumber: "C1"}
	cur := store.Request{RequestID: "1", Phase: PhaseReserved, Attempts: 2, Version: 3}
	call := Event{Kind: EventAccepted, Err: &remote.Error{Method: "POST", Path: "/requests/1", Status: 503, Err: remote.ErrTemporary}}
	wait := func(ch change) time.Duration { return ch.next.NextAttemptAt.Sub(now) }
	for range 50 {
		jitter := rand.Float64()
		if got := wait(decideRetrying(cfg, now, jitter, cur, call)); got < 192*time.Second || got > 288*time.Second {
			t.Fatalf("third failure of a call waits %s, want 4m ±20%%", got)
		}
		if got := wait(decideReserveFailed(cfg, now, jitter, cur, req, errors.New("create_job failed"))); got < 192*time.Second || got > 288*time.Second {
			t.Fatalf("third failure to reserve waits %s, want 4m ±20%%", got)
		}
	}
	for _, tt := range []struct {
		jitter float64
		want   time.Duration
	}{{0, 192 * time.Second}, {0.5, 4 * time.Minute}, {0.75, 264 * time.Second}} {
		for i := range 2 {
			if got := wait(decideRetrying(cfg, now, tt.jitter, cur, call)); got != tt.want {
				t.Errorf("third failure of a call with jitter %g waits %s (decision %d), want %s", tt.jitter, got, i, tt.want)
			}
			if got := wait(decideReserveFailed(cfg, now, tt.jitter, cur, req, errors.New("create_job failed"))); got != tt.want {
				t.Errorf("third failure to reserve with jitter %g waits %s (decision %d), want %s", tt.jitter, got, i, tt.want)
			}
		}
	}
	call.Err.(*remote.Error).RetryAfter = 30 * time.Minute
	if got := wait(decideRetrying(cfg, now, rand.Float64(), cur, call)); got != 30*time.Minute {
		t.Errorf("a failure with Retry-After 30m waits %s, want 30m", got)
	}
	call.Err.(*remote.Error).RetryAfter = 5 * time.Hour
	if got := wait(decideRetrying(cfg, now, rand.Float64(), cur, call)); got != time.Hour {
		t.Errorf("a failure with Retry-After 5h waits %s, want retry_backoff_max, 1h", got)
	}
}

func TestBoundText(t *testing.T) {
	id := strings.Repeat("9", 3<<20)
	got := boundText(nil, id, 80)
	if len(got) > 120 || !strings.Contains(got, "(3145728 bytes)") || !strings.HasPrefix(got, "999") {
		t.Errorf("boundText of a 3 MB id = %q (%d bytes), want an 80-byte prefix and the length", got[:min(len(got), 200)], len(got))
	}
	if got := boundText(nil, "short", 80); got != "short" {
		t.Errorf("boundText(short) = %q", got)
	}
	// A secret that straddles the bound is redacted whole: none of it
	// is kept.
	const secret = "straddling-s3cret-0123456789"
	got = boundText(redact.New(secret), strings.Repeat("x", 70)+secret+strings.Repeat("y", 100), 80)
	if strings.Contains(got, secret[:8]) || !strings.Contains(got, redact.Mark) {
		t.Errorf("boundText of a straddling secret = %q, want it redacted whole", got)
	}
}

// TestCanonDecimalIsString: the hash writes a decimal exactly as
// decimal's String, for every amount shape (so that stored hashes stay
// valid): signs, zeros, trailing zeros, leading fraction zeros, large
// coefficients and positive exponents.
func TestCanonDecimalIsString(t *testing.T) {
	vals := []string{"0", "0.000", "-0.5", "95.5000", "95.5", "100", "1e3", "-1e2", "0.0001", "-0.0100",
		"123456789012345678", "1234567890123456789", "-999999999999999999.99", "12.3456", "0.000000000000000000001",
		"-9223372036854775808", "9223372036854775807", "1.10", "-10.0"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		c := rng.Int64N(2_000_000_000_000) - 1_000_000_000_000
		vals = append(vals, decimal.New(c, int32(rng.IntN(24)-20)).String())
		vals = append(vals, decimal.New(c, -int32(rng.IntN(8))).StringFixed(int32(rng.IntN(6))))
	}
	for _, v := range vals {
		d, err := decimal.NewFromString(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range []decimal.Decimal{d, decimal.New(d.CoefficientInt64(), d.Exponent())} {
			got, want := &canonWriter{}, &canonWriter{}
			got.dec(x)
			want.str(x.String())
			if string(got.buf) != string(want.buf) {
				t.Fatalf("dec(%s, exp %d) writes %q, want %q", v, x.Exponent(), got.buf, want.buf)
			}
		}
	}
}
