package remote

import (
	"github.com/quotesync/quotesync/remote/redact"

	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// fmtAll renders err every way a logger might.
func fmtAll(err error) string {
	return fmt.Sprintf("%v|%+v|%#v|%s|%q", err, err, err, err, err)
}

// sentinels in a fixed order, for checks that exactly one matches.
func sentinels() []error {
	return []error{ErrUnauthorized, ErrNotFound, ErrConflict, ErrRejected, ErrTemporary}
}

func TestErrorClassesOverHTTP(t *testing.T) {
	tests := []struct {
		status       int
		want         error
		wantAttempts int
	}{
		{400, ErrRejected, 1},
		{401, ErrUnauthorized, 2}, // one refresh retry
		{403, ErrUnauthorized, 1},
		{404, ErrNotFound, 1},
		{405, ErrRejected, 1},
		{408, ErrTemporary, 3},
		{409, ErrConflict, 1},
		{410, ErrNotFound, 1},
		{422, ErrRejected, 1},
		{425, ErrTemporary, 3},
		{429, ErrTemporary, 3},
		{500, ErrTemporary, 3},
		{502, ErrTemporary, 3},
		{503, ErrTemporary, 3},
		{302, ErrRejected, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			rec := &recorder{replies: []reply{{status: tt.status, body: `{"error":{"code":"x","message":"nope"}}`,
				header: map[string]string{"Location": "/elsewhere"}}}}
			c, _ := newTestClient(t, rec, func(c *Config) { c.MaxAttempts = 3 })
			_, err := c.Accept(context.Background(), "17", "RO-1", time.Time{})
			checkOneSentinel(t, err, tt.want)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err %T is not *Error", err)
			}
			if e.Status != tt.status || e.Attempts != tt.wantAttempts || e.Method != "POST" || e.Path != "/requests/17" {
				t.Errorf("Error = %+v, want status %d, %d attempts, POST /requests/17", e, tt.status, tt.wantAttempts)
			}
			if got := len(rec.requests()); got != tt.wantAttempts {
				t.Errorf("server saw %d requests, want %d", got, tt.wantAttempts)
			}
			if !strings.Contains(e.Body, `"nope"`) || !strings.Contains(err.Error(), `"nope"`) {
				t.Errorf("body excerpt %q / error %q lack the body", e.Body, err)
			}
		})
	}
	t.Run("NetworkError", func(t *testing.T) {
		c, srv := newTestClient(t, &recorder{}, nil)
		srv.Close()
		_, err := c.ListRequests(context.Background())
		checkOneSentinel(t, err, ErrTemporary)
		var e *Error
		if errors.As(err, &e); e.Status != 0 || e.Attempts != DefaultMaxAttempts {
			t.Errorf("Error = %+v, want no status and %d attempts", e, DefaultMaxAttempts)
		}
	})
}

// checkOneSentinel fails unless err matches want and no other sentinel, and
// Class agrees.
func checkOneSentinel(tb testing.TB, err, want error) {
	tb.Helper()
	for _, s := range sentinels() {
		if got := errors.Is(err, s); got != (s == want) {
			tb.Errorf("errors.Is(%v, %v) = %v, want %v", err, s, got, s == want)
		}
	}
	if got, want := Class(err), Class(want); got != want {
		tb.Errorf("Class = %q, want %q", got, want)
	}
}

func TestClassOfStatusTable(t *testing.T) {
	tests := map[int]string{
		200: ClassOK, 201: ClassOK, 204: ClassOK, 100: ClassRejected, 301: ClassRejected,
		400: ClassRejected, 401: ClassUnauthorized, 403: ClassUnauthorized, 404: ClassNotFound,
		408: ClassTemporary, 409: ClassConflict, 410: ClassNotFound, 413: ClassRejected,
		425: ClassTemporary, 429: ClassTemporary, 500: ClassTemporary, 599: ClassTemporary,
	}
	for status, want := range tests {
		if got := Class(statusSentinel(status)); got != want {
			t.Errorf("statusSentinel(%d) is of class %q, want %q", status, got, want)
		}
	}
}

func TestClass(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"Nil", nil, ClassOK},
		{"Wrapped", fmt.Errorf("accept request 17: %w", &Error{Status: 409, Err: ErrConflict}), ClassConflict},
		{"StatusOnly", &Error{Status: 404}, ClassNotFound},
		{"StatusOnly410", &Error{Status: 410}, ClassNotFound},
		{"NoStatus", &Error{}, ClassTemporary},
		{"CauseWithoutSentinel", &Error{Status: 403, Err: errors.New("custom")}, ClassUnauthorized},
		{"Canceled", context.Canceled, ClassTemporary},
		{"Foreign", errors.New("disk full"), ClassTemporary},
		{"DecodeError", &DecodeError{Total: 1, Skipped: []SkippedRequest{{Err: errors.New("x")}}}, ClassRejected},
		{"Sentinel", ErrUnauthorized, ClassUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Class(tt.err); got != tt.want {
				t.Errorf("Class(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

func TestErrorText(t *testing.T) {
	e := &Error{Method: "POST", Path: "/requests/17", Status: 503, Body: "down", RetryAfter: 2 * time.Second,
		Attempts: 4, Err: ErrTemporary}
	want := "POST /requests/17: temporary failure: status 503 Service Unavailable (4 attempts, retry after 2s): down"
	if got := e.Error(); got != want {
		t.Errorf("Error() =\n %q\nwant\n %q", got, want)
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("é", 400) // 800 bytes
	got := excerpt(nil, []byte(long), 512, false)
	if len(got) > 512+len("…") || !strings.HasSuffix(got, "…") || strings.Contains(got, "\uFFFD") {
		t.Errorf("excerpt of %d bytes = %d bytes %q…, want ≤ 512 cut on a rune", len(long), len(got), got[:10])
	}
	if got := excerpt(redact.New(testToken), []byte("a\xffb Bearer "+testToken), 512, false); got != "a\uFFFDb Bearer "+redact.Mark {
		t.Errorf("excerpt = %q, want invalid UTF-8 replaced and token redacted", got)
	}
}

// TestTokenNeverInErrors drives every error path with a server that echoes
// the Authorization header in its body.
func TestTokenNeverInErrors(t *testing.T) {
	echo := func(status int, pad int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			fmt.Fprintf(w, "%s you sent %q %s", strings.Repeat("x", pad), r.Header.Get("Authorization"), r.Header)
		}
	}
	tests := []struct {
		name string
		h    http.Handler
		edit func(*Config)
	}{
		{"Rejected", echo(400, 0), nil},
		{"Unauthorized", echo(401, 0), nil},
		{"Forbidden", echo(403, 0), nil},
		{"NotFound", echo(404, 0), nil},
		{"Conflict", echo(409, 0), nil},
		{"Temporary", echo(503, 0), nil},
		{"TokenPastExcerptCap", echo(500, 500), nil},
		{"Garbage2xx", echo(200, 0), nil},
		{"Oversize2xx", echo(200, 300), func(c *Config) { c.MaxBodyBytes = 200 }},
		{"Timeout", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // so the server notices the client leave
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}),
			func(c *Config) { c.Timeout = 20 * time.Millisecond; c.MaxAttempts = 2 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newTestClient(t, tt.h, tt.edit)
			_, err := c.ListRequests(context.Background())
			assertNoToken(t, err, testToken)
			_, err = c.SetStatus(context.Background(), "RO-1", "Estimate", StatusSubmitted)
			assertNoToken(t, err, testToken)
		})
	}
	t.Run("Observe", func(t *testing.T) {
		var obs observed
		c, _ := newTestClient(t, echo(503, 0), func(c *Config) { c.Observe = obs.observe })
		_, _ = c.ListRequests(context.Background())
		for _, ci := range obs.all() {
			assertNoToken(t, ci.Err, testToken)
		}
	})
}
