package remote

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testToken is distinctive so a leak into any error text is easy to spot.
const testToken = "tok-S3CRET-9f2c41d7e8"

// testConfig is a Config for tests: quick backoff, no rate limit, short
// attempt timeout.
func testConfig(baseURL string) Config {
	return Config{
		BaseURL:        baseURL,
		Timeout:        2 * time.Second,
		BackoffInitial: time.Millisecond,
		BackoffMax:     5 * time.Millisecond,
		RateLimit:      -1,
	}
}

// newTestClient starts h behind httptest and returns a client for it with
// testToken; edit adjusts the config before New.
func newTestClient(tb testing.TB, h http.Handler, edit func(*Config)) (*Client, *httptest.Server) {
	tb.Helper()
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	cfg := testConfig(srv.URL)
	if edit != nil {
		edit(&cfg)
	}
	c, err := New(cfg, StaticToken(testToken))
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return c, srv
}

// recorded is one request a recorder saw.
type recorded struct {
	Method, Path, Auth, ContentType, Accept, UserAgent string
	Body                                               string
}

// recorder is a handler that records every request and answers with the
// next of its replies (the last one repeats).
type recorder struct {
	mu      sync.Mutex
	seen    []recorded
	replies []reply
}

// reply is one canned answer.
type reply struct {
	status int
	body   string
	header map[string]string
	delay  time.Duration
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.seen = append(rc.seen, recorded{
		Method: r.Method, Path: r.URL.EscapedPath(), Auth: r.Header.Get("Authorization"),
		ContentType: r.Header.Get("Content-Type"), Accept: r.Header.Get("Accept"),
		UserAgent: r.Header.Get("User-Agent"), Body: string(b),
	})
	rp := reply{status: http.StatusOK, body: "[]"}
	if n := len(rc.replies); n > 0 {
		rp = rc.replies[min(len(rc.seen)-1, n-1)]
	}
	rc.mu.Unlock()
	if rp.delay > 0 {
		select {
		case <-time.After(rp.delay):
		case <-r.Context().Done():
			return
		}
	}
	for k, v := range rp.header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(rp.status)
	_, _ = io.WriteString(w, rp.body)
}

// requests returns a copy of what the recorder saw.
func (rc *recorder) requests() []recorded {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]recorded(nil), rc.seen...)
}

// observed collects CallInfo from Config.Observe.
type observed struct {
	mu    sync.Mutex
	calls []CallInfo
}

func (o *observed) observe(ci CallInfo) {
	o.mu.Lock()
	o.calls = append(o.calls, ci)
	o.mu.Unlock()
}

func (o *observed) all() []CallInfo {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]CallInfo(nil), o.calls...)
}

// countingTokens is a TokenSource giving tok-1, tok-2, ... one per
// Invalidate.
type countingTokens struct {
	gen         atomic.Int32
	invalidated atomic.Int32
}

func (c *countingTokens) Token(context.Context) (string, error) {
	return "tok-" + string(rune('1'+c.gen.Load())), nil
}

func (c *countingTokens) Invalidate() {
	c.invalidated.Add(1)
	c.gen.Add(1)
}

// mustJSON marshals v or fails the test.
func mustJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("marshal: %v", err)
	}
	return string(b)
}

// assertNoToken fails when any rendering of err contains secret.
func assertNoToken(tb testing.TB, err error, secret string) {
	tb.Helper()
	if err == nil {
		tb.Fatalf("want an error")
	}
	for _, s := range []string{err.Error(), fmtAll(err)} {
		if strings.Contains(s, secret) {
			tb.Fatalf("error text contains the secret: %s", s)
		}
	}
}
