package remote

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestRetryThenSuccessObserved(t *testing.T) {
	rec := &recorder{replies: []reply{{status: 503}, {status: 429}, {status: 200, body: `[{"id":1}]`}}}
	var obs observed
	c, _ := newTestClient(t, rec, func(c *Config) { c.Observe = obs.observe })
	reqs, err := c.ListRequests(context.Background())
	if err != nil || len(reqs) != 1 {
		t.Fatalf("ListRequests = %v, %v; want one request", reqs, err)
	}
	type info struct {
		Route, Class  string
		Status, Try   int
		HasErr, HasTm bool
	}
	var got []info
	for _, ci := range obs.all() {
		got = append(got, info{ci.Method + " " + ci.Route, ci.Class, ci.Status, ci.Attempt, ci.Err != nil, ci.Duration > 0})
	}
	want := []info{
		{"GET GET /requests", ClassTemporary, 503, 1, true, true},
		{"GET GET /requests", ClassTemporary, 429, 2, true, true},
		{"GET GET /requests", ClassOK, 200, 3, false, true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("observed (-want +got):\n%s", diff)
	}
}

// sleepRecorder replaces Client.sleep: it records each wait and returns at
// once.
type sleepRecorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleepRecorder) sleep(done <-chan struct{}, d time.Duration) bool {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	select {
	case <-done:
		return false
	default:
		return true
	}
}

func TestRetryAfterHonouredAndCapped(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	rec := &recorder{replies: []reply{
		{status: 429, header: map[string]string{"Retry-After": "1"}},
		{status: 503, header: map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}},
		{status: 503, header: map[string]string{"Retry-After": "7"}},
	}}
	c, _ := newTestClient(t, rec, func(c *Config) {
		c.BackoffInitial, c.BackoffMax = 100*time.Millisecond, 5*time.Second
		c.MaxAttempts = 3
	})
	var sr sleepRecorder
	c.sleep, c.now = sr.sleep, func() time.Time { return now }
	_, err := c.ListRequests(context.Background())
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrTemporary) {
		t.Fatalf("err = %v, want temporary *Error", err)
	}
	if e.RetryAfter != 7*time.Second || e.Attempts != 3 {
		t.Errorf("RetryAfter, Attempts = %s, %d; want 7s (uncapped), 3", e.RetryAfter, e.Attempts)
	}
	if want := []time.Duration{time.Second, 5 * time.Second}; !cmp.Equal(sr.waits, want) {
		t.Errorf("waits = %v, want %v (the HTTP date capped at BackoffMax)", sr.waits, want)
	}
}

// TestClientBackoff: the client waits by Backoff with its Config's bounds
// and its own chance.
func TestClientBackoff(t *testing.T) {
	c, err := New(Config{BaseURL: "http://x", BackoffInitial: 100 * time.Millisecond, BackoffMax: time.Second},
		StaticToken(testToken))
	if err != nil {
		t.Fatal(err)
	}
	c.rand = func() float64 { return 0.5 }
	var got []time.Duration
	for n := 1; n <= 6; n++ {
		got = append(got, c.backoff(n, 0))
	}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if !cmp.Equal(got, want) {
		t.Errorf("backoff at the middle of its spread = %v, want %v", got, want)
	}
	c.rand = func() float64 { return 0 }
	if got, want := c.backoff(3, 0), 320*time.Millisecond; got != want {
		t.Errorf("backoff at the short end = %s, want %s", got, want)
	}
	if got := c.backoff(1, 3*time.Second); got != time.Second {
		t.Errorf("backoff with Retry-After 3s = %s, want BackoffMax 1s", got)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := map[string]time.Duration{
		"":                     0,
		"0":                    0,
		"5":                    5 * time.Second,
		" 120 ":                2 * time.Minute,
		"-3":                   0,
		"1.5":                  0,
		"soon":                 0,
		"99999999999999999999": maxRetryAfter,
		"86400000":             maxRetryAfter,
		now.Add(30 * time.Second).Format(http.TimeFormat): 30 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat):       0,
		"Wednesday, 01-Jan-30 12:01:00 GMT":               time.Minute, // RFC 850
	}
	for in, want := range tests {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestPerAttemptTimeout(t *testing.T) {
	rec := &recorder{replies: []reply{{status: 200, body: "[]", delay: 5 * time.Second}, {status: 200, body: `[{"id":"x"}]`}}}
	c, _ := newTestClient(t, rec, func(c *Config) { c.Timeout = 100 * time.Millisecond })
	start := time.Now()
	reqs, err := c.ListRequests(context.Background())
	if err != nil || len(reqs) != 1 {
		t.Fatalf("ListRequests = %v, %v; want the second attempt's request", reqs, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s; the first attempt should have timed out after 100ms", d)
	}

	slow := &recorder{replies: []reply{{status: 200, delay: 5 * time.Second}}}
	c, _ = newTestClient(t, slow, func(c *Config) { c.Timeout = 50 * time.Millisecond; c.MaxAttempts = 2 })
	_, err = c.ListRequests(context.Background())
	if !errors.Is(err, ErrTemporary) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 50ms") {
		t.Errorf("err = %v, want a temporary timeout naming 50ms", err)
	}
}

func TestContextCancelStopsAtOnce(t *testing.T) {
	t.Run("DuringRequest", func(t *testing.T) {
		rec := &recorder{replies: []reply{{status: 200, delay: 10 * time.Second}}}
		c, _ := newTestClient(t, rec, func(c *Config) { c.Timeout = 10 * time.Second })
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := c.ListRequests(ctx)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("returned after %s, want at once after the cancel", d)
		}
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, context.DeadlineExceeded) || e.Attempts != 1 {
			t.Errorf("err = %v, want the caller's deadline after 1 attempt", err)
		}
	})
	t.Run("DuringBackoff", func(t *testing.T) {
		rec := &recorder{replies: []reply{{status: 503}}}
		c, _ := newTestClient(t, rec, func(c *Config) { c.BackoffInitial, c.BackoffMax = 10*time.Second, 10*time.Second })
		c.rand = func() float64 { return 0.5 }
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := c.ListRequests(ctx)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("returned after %s, want at once after the cancel", d)
		}
		if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrTemporary) || len(rec.requests()) != 1 {
			t.Errorf("err = %v after %d requests, want canceled + temporary after 1", err, len(rec.requests()))
		}
	})
}

func TestBodyCapAndGarbage(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantMsg string
	}{
		{"Oversize", `[` + strings.Repeat(`{"id":1},`, 100) + `{"id":2}]`, "exceeds 256 bytes"},
		{"Garbage", `<html>oops</html>`, "want a JSON array"},
		{"Truncated", `[{"id":1},`, "unexpected end"},
		{"Object", `{"requests":[]}`, "want a JSON array, got an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{replies: []reply{{status: 200, body: tt.body}}}
			c, _ := newTestClient(t, rec, func(c *Config) { c.MaxBodyBytes = 256; c.MaxAttempts = 2 })
			_, err := c.ListRequests(context.Background())
			checkOneSentinel(t, err, ErrTemporary)
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err = %v, want it to say %q", err, tt.wantMsg)
			}
			if n := len(rec.requests()); n != 2 {
				t.Errorf("%d attempts, want 2 (undecodable 2xx is retried)", n)
			}
		})
	}
	t.Run("ExactlyAtCap", func(t *testing.T) {
		body := `[{"id":"` + strings.Repeat("a", 100) + `"}]`
		rec := &recorder{replies: []reply{{status: 200, body: body}}}
		c, _ := newTestClient(t, rec, func(c *Config) { c.MaxBodyBytes = int64(len(body)) })
		if _, err := c.ListRequests(context.Background()); err != nil {
			t.Errorf("body of exactly MaxBodyBytes: %v", err)
		}
	})
}

func TestUnauthorizedRefreshesTokenOnce(t *testing.T) {
	t.Run("SecondTokenWorks", func(t *testing.T) {
		rec := &recorder{}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer tok-2" {
				w.WriteHeader(http.StatusUnauthorized)
			}
			rec.ServeHTTP(w, r)
		})
		tokens := &countingTokens{}
		srv, c := newServerClient(t, h, tokens)
		_ = srv
		if _, err := c.ListRequests(context.Background()); err != nil {
			t.Fatalf("ListRequests: %v", err)
		}
		var auths []string
		for _, r := range rec.requests() {
			auths = append(auths, r.Auth)
		}
		if want := []string{"Bearer tok-1", "Bearer tok-2"}; !cmp.Equal(auths, want) {
			t.Errorf("Authorization sent = %v, want %v", auths, want)
		}
		if n := tokens.invalidated.Load(); n != 1 {
			t.Errorf("Invalidate called %d times, want 1", n)
		}
	})
	t.Run("SecondRefusalIsFinal", func(t *testing.T) {
		rec := &recorder{replies: []reply{{status: 401}}}
		tokens := &countingTokens{}
		_, c := newServerClient(t, rec, tokens)
		_, err := c.ListRequests(context.Background())
		checkOneSentinel(t, err, ErrUnauthorized)
		if n, inv := len(rec.requests()), tokens.invalidated.Load(); n != 2 || inv != 1 {
			t.Errorf("%d requests, %d invalidations; want 2 and 1", n, inv)
		}
	})
	t.Run("ForbiddenNotRetried", func(t *testing.T) {
		rec := &recorder{replies: []reply{{status: 403}}}
		tokens := &countingTokens{}
		_, c := newServerClient(t, rec, tokens)
		_, err := c.ListRequests(context.Background())
		checkOneSentinel(t, err, ErrUnauthorized)
		if n, inv := len(rec.requests()), tokens.invalidated.Load(); n != 1 || inv != 0 {
			t.Errorf("%d requests, %d invalidations; want 1 and 0", n, inv)
		}
	})
	t.Run("TokenSourceErrors", func(t *testing.T) {
		rec := &recorder{}
		_, c := newServerClient(t, rec, EnvToken("QUOTESYNC_TEST_UNSET_TOKEN_VAR", nil))
		_, err := c.ListRequests(context.Background())
		checkOneSentinel(t, err, ErrUnauthorized)
		if !strings.Contains(err.Error(), "QUOTESYNC_TEST_UNSET_TOKEN_VAR") || len(rec.requests()) != 0 {
			t.Errorf("err = %v with %d requests; want the variable named and no request", err, len(rec.requests()))
		}
		_, c = newServerClient(t, rec, flakyTokens{})
		_, err = c.ListRequests(context.Background())
		checkOneSentinel(t, err, ErrTemporary)
	})
}

// flakyTokens always fails temporarily.
type flakyTokens struct{}

func (flakyTokens) Token(context.Context) (string, error) {
	return "", &tokenError{msg: "token endpoint answered status 503", class: ErrTemporary}
}
func (flakyTokens) Invalidate() {}

// newServerClient is newTestClient with a chosen token source.
func newServerClient(tb testing.TB, h http.Handler, tokens TokenSource) (string, *Client) {
	tb.Helper()
	c, srv := newTestClient(tb, h, nil)
	c2, err := New(c.cfg, tokens)
	if err != nil {
		tb.Fatal(err)
	}
	return srv.URL, c2
}

func TestRateLimitHonoured(t *testing.T) {
	rec := &recorder{}
	c, _ := newTestClient(t, rec, func(c *Config) { c.RateLimit, c.Burst = 50, 5 })
	const calls = 20
	start := time.Now()
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			if _, err := c.ListRequests(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// 5 calls from the burst, 15 more at 50/s: at least 300ms.
	if d := time.Since(start); d < 250*time.Millisecond || d > 10*time.Second {
		t.Errorf("%d calls at 50/s burst 5 took %s, want ≥ 300ms (±50ms)", calls, d)
	}
	if n := len(rec.requests()); n != calls {
		t.Errorf("server saw %d calls, want %d", n, calls)
	}
	t.Run("WaitRespectsContext", func(t *testing.T) {
		c, _ := newTestClient(t, rec, func(c *Config) { c.RateLimit, c.Burst = 0.1, 1 })
		if _, err := c.ListRequests(context.Background()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := c.ListRequests(ctx)
		if !errors.Is(err, ErrTemporary) || !strings.Contains(err.Error(), "rate limit") {
			t.Errorf("err = %v, want a temporary rate-limit wait error", err)
		}
	})
}

func TestObserveIgnoresNothing(t *testing.T) {
	// Every attempt is reported, the 401 refresh included.
	rec := &recorder{replies: []reply{{status: 401}, {status: 500}, {status: 200, body: "[]"}}}
	var obs observed
	c, _ := newTestClient(t, rec, func(c *Config) { c.Observe = obs.observe })
	if _, err := c.ListRequests(context.Background()); err != nil {
		t.Fatal(err)
	}
	var classes []string
	for _, ci := range obs.all() {
		classes = append(classes, ci.Class)
	}
	want := []string{ClassUnauthorized, ClassTemporary, ClassOK}
	if diff := cmp.Diff(want, classes, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("classes (-want +got):\n%s", diff)
	}
}
