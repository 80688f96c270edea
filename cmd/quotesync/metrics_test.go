package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	qsync "github.com/quotesync/quotesync/sync"
)

// The Prometheus exporter observes the engine's events.
var _ qsync.Observer = (*promMetrics)(nil)

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestPromMetrics feeds the engine's events and the remote client's
// observe hook, counts the state of a real database, then scrapes /metrics
// over HTTP.
func TestPromMetrics(t *testing.T) {
	m := newPromMetrics()
	now := time.Now()
	m.Observe(qsync.Event{Kind: qsync.EventPassDone, At: now, Duration: 1500 * time.Millisecond, Summary: &qsync.Summary{Pending: 7}})
	m.Observe(qsync.Event{Kind: qsync.EventPassDone, At: now, Duration: time.Second, Err: errors.New("list pending requests: temporary failure")})
	m.Observe(qsync.Event{Kind: qsync.EventPassDone, At: now, Duration: time.Second, Err: fmt.Errorf("list: %w", qsync.ErrUnauthorized)})
	m.Observe(qsync.Event{Kind: qsync.EventReserved, To: qsync.PhaseReserved})
	m.Observe(qsync.Event{Kind: qsync.EventAccepted, From: qsync.PhaseReserved, To: qsync.PhaseAccepted})
	m.Observe(qsync.Event{Kind: qsync.EventRetrying, From: qsync.PhaseAccepted, To: qsync.PhaseAccepted})
	m.Observe(qsync.Event{Kind: qsync.EventLeader})
	db, _ := shopdbtest.New(t)
	ctx := context.Background()
	for i, row := range []shopdb.Request{
		{Phase: qsync.PhaseAccepted}, {Phase: qsync.PhaseAccepted, Reason: qsync.ReasonShopData},
		{Phase: qsync.PhaseRejected, Reason: qsync.ReasonRefused}, {Phase: qsync.PhaseSubmitted, SupplementNeeded: true},
	} {
		row.RequestID = fmt.Sprint("g", i)
		if _, err := db.Insert(ctx, row, shopdb.Event{}); err != nil {
			t.Fatal(err)
		}
	}
	m.state.use(db)
	m.observe(remote.CallInfo{Method: "GET", Route: "GET /requests", Status: 200, Class: remote.ClassOK, Attempt: 1, Duration: 20 * time.Millisecond})
	m.observe(remote.CallInfo{Method: "POST", Route: "POST /requests/{id}", Status: 503, Class: remote.ClassTemporary, Attempt: 1})
	m.reloaded(false)

	srv := httptest.NewServer(obsHandler(m, func(context.Context) (bool, qsync.HealthReport) {
		return false, qsync.HealthReport{Status: "unhealthy", Reason: "test"}
	}))
	defer srv.Close()
	code, body := httpGet(t, srv.URL+"/metrics")
	if code != 200 {
		t.Fatalf("GET /metrics: %d", code)
	}
	for _, want := range []string{
		`quotesync_passes_total{outcome="ok"} 1`,
		`quotesync_passes_total{outcome="failed"} 1`,
		`quotesync_passes_total{outcome="unauthorized"} 1`,
		`quotesync_pass_duration_seconds_count 3`,
		`quotesync_transitions_total{from="new",to="reserved"} 1`,
		`quotesync_transitions_total{from="reserved",to="accepted"} 1`,
		`quotesync_errors_total{kind="temporary"} 1`,
		`quotesync_errors_total{kind="unauthorized"} 1`,
		`quotesync_errors_total{kind="lock"} 0`,
		`quotesync_requests{phase="accepted"} 2`,
		`quotesync_requests{phase="drafted"} 0`,
		`quotesync_requests{phase="rejected"} 1`,
		`quotesync_requests{phase="taken_elsewhere"} 0`,
		`quotesync_requests_held 1`,
		`quotesync_requests_needing_person 3`,
		`quotesync_requests_supplement_needed 1`,
		`quotesync_pending_requests 7`,
		`quotesync_leader 1`,
		`quotesync_remote_calls_total{class="ok",route="GET /requests"} 1`,
		`quotesync_remote_calls_total{class="temporary",route="POST /requests/{id}"} 1`,
		`quotesync_remote_call_duration_seconds_count{route="GET /requests"} 1`,
		`quotesync_config_reloads_total{outcome="failed"} 1`,
		`quotesync_build_info{goversion="go`,
		`go_goroutines `,
		`process_resident_memory_bytes `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, "quotesync_last_success_timestamp_seconds 0\n") {
		t.Error("last success timestamp not set after a successful pass")
	}
	code, body = httpGet(t, srv.URL+"/healthz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"reason": "test"`) {
		t.Errorf("GET /healthz: %d %s", code, body)
	}
}

// TestRunWatchdog pings a fake systemd over a unixgram socket while alive
// says so, and stops pinging while it does not.
func TestRunWatchdog(t *testing.T) {
	dir, err := os.MkdirTemp("", "qs-wd")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", sock)

	var alive atomic.Bool
	alive.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		runWatchdog(ctx, 20*time.Millisecond, notifier{log: zap.NewNop()}, func(time.Time) (bool, string) {
			if alive.Load() {
				return true, ""
			}
			return false, "test says stuck"
		})
	}()
	defer func() { cancel(); <-done }()

	count := func(d time.Duration) int {
		n := 0
		buf := make([]byte, 256)
		deadline := time.Now().Add(d)
		for {
			_ = conn.SetReadDeadline(deadline)
			k, err := conn.Read(buf)
			if err != nil {
				return n
			}
			if string(buf[:k]) == "WATCHDOG=1" {
				n++
			}
		}
	}
	if n := count(300 * time.Millisecond); n < 5 {
		t.Errorf("%d pings in 300ms at a 20ms interval, want several", n)
	}
	alive.Store(false)
	count(60 * time.Millisecond) // let a ping in flight land
	if n := count(300 * time.Millisecond); n != 0 {
		t.Errorf("%d pings while stuck, want none", n)
	}
	alive.Store(true)
	if n := count(300 * time.Millisecond); n < 5 {
		t.Errorf("%d pings after recovery, want several", n)
	}
}
