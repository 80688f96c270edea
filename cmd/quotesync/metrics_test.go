package main

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/redact"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
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
	m.insurers([]string{"aa", "bb"})
	m.Observe(qsync.Event{Kind: qsync.EventPassDone, Insurer: "aa", At: now, Duration: 1500 * time.Millisecond, Summary: &qsync.Summary{Pending: 7}})
	m.Observe(qsync.Event{Kind: qsync.EventPassDone, Insurer: "aa", At: now, Duration: time.Second, Err: errors.New("list pending requests: temporary failure")})
	m.Observe(qsync.Event{Kind: qsync.EventPassDone, Insurer: "aa", At: now, Duration: time.Second, Err: fmt.Errorf("list: %w", qsync.ErrUnauthorized)})
	m.Observe(qsync.Event{Kind: qsync.EventPassDone, Insurer: "bb", At: now, Duration: time.Second, Summary: &qsync.Summary{Pending: 2}})
	m.Observe(qsync.Event{Kind: qsync.EventReserved, Insurer: "aa", To: qsync.PhaseReserved})
	m.Observe(qsync.Event{Kind: qsync.EventAccepted, Insurer: "aa", From: qsync.PhaseReserved, To: qsync.PhaseAccepted})
	m.Observe(qsync.Event{Kind: qsync.EventAccepted, Insurer: "bb", From: qsync.PhaseReserved, To: qsync.PhaseAccepted})
	m.Observe(qsync.Event{Kind: qsync.EventRetrying, Insurer: "aa", From: qsync.PhaseAccepted, To: qsync.PhaseAccepted})
	m.Observe(qsync.Event{Kind: qsync.EventLeader})
	db, _ := shopdbtest.New(t)
	st := store.New(db)
	ctx := context.Background()
	for i, row := range []store.Request{
		{Phase: qsync.PhaseAccepted}, {Phase: qsync.PhaseAccepted, Reason: qsync.ReasonShopData},
		{Phase: qsync.PhaseRejected, Reason: qsync.ReasonRefused}, {Phase: qsync.PhaseSubmitted, SupplementNeeded: true},
	} {
		row.RequestID = fmt.Sprint("g", i)
		if _, err := st.Insurer("aa").Insert(ctx, row, store.Event{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Insurer("bb").Insert(ctx, store.Request{RequestID: "g0", Phase: qsync.PhaseAccepted}, store.Event{}); err != nil {
		t.Fatal(err)
	}
	m.state.use(st, []string{"aa", "bb", "cc"})
	m.observe("aa", remote.CallInfo{Method: "GET", Route: "GET /requests", Status: 200, Class: remote.ClassOK, Attempt: 1, Duration: 20 * time.Millisecond})
	m.observe("aa", remote.CallInfo{Method: "POST", Route: "POST /requests/{id}", Status: 503, Class: remote.ClassTemporary, Attempt: 1})
	m.observe("bb", remote.CallInfo{Method: "GET", Route: "GET /requests", Status: 200, Class: remote.ClassOK, Attempt: 1})
	m.reloaded(false)

	srv := httptest.NewServer(obsHandler(m, func(context.Context) (bool, qsync.HealthReport) {
		return false, qsync.HealthReport{Status: "unhealthy", Reason: "test"}
	}, func(time.Time) (bool, string) { return true, "" }))
	defer srv.Close()
	code, body := httpGet(t, srv.URL+"/metrics")
	if code != 200 {
		t.Fatalf("GET /metrics: %d", code)
	}
	for _, want := range []string{
		`quotesync_passes_total{insurer="aa",outcome="ok"} 1`,
		`quotesync_passes_total{insurer="aa",outcome="failed"} 1`,
		`quotesync_passes_total{insurer="aa",outcome="unauthorized"} 1`,
		`quotesync_passes_total{insurer="bb",outcome="ok"} 1`,
		`quotesync_passes_total{insurer="bb",outcome="failed"} 0`,
		`quotesync_pass_duration_seconds_count{insurer="aa"} 3`,
		`quotesync_pass_duration_seconds_count{insurer="bb"} 1`,
		`quotesync_transitions_total{from="new",insurer="aa",to="reserved"} 1`,
		`quotesync_transitions_total{from="reserved",insurer="aa",to="accepted"} 1`,
		`quotesync_transitions_total{from="reserved",insurer="bb",to="accepted"} 1`,
		`quotesync_errors_total{insurer="aa",kind="temporary"} 1`,
		`quotesync_errors_total{insurer="aa",kind="unauthorized"} 1`,
		`quotesync_errors_total{insurer="bb",kind="unauthorized"} 0`,
		`quotesync_errors_total{insurer="",kind="lock"} 0`,
		`quotesync_requests{insurer="aa",phase="accepted"} 2`,
		`quotesync_requests{insurer="aa",phase="drafted"} 0`,
		`quotesync_requests{insurer="aa",phase="rejected"} 1`,
		`quotesync_requests{insurer="aa",phase="taken_elsewhere"} 0`,
		`quotesync_requests{insurer="bb",phase="accepted"} 1`,
		`quotesync_requests{insurer="cc",phase="accepted"} 0`,
		`quotesync_requests_held{insurer="aa"} 1`,
		`quotesync_requests_held{insurer="bb"} 0`,
		`quotesync_requests_needing_person{insurer="aa"} 3`,
		`quotesync_requests_supplement_needed{insurer="aa"} 1`,
		`quotesync_pending_requests{insurer="aa"} 7`,
		`quotesync_pending_requests{insurer="bb"} 2`,
		`quotesync_leader 1`,
		`quotesync_remote_calls_total{class="ok",insurer="aa",route="GET /requests"} 1`,
		`quotesync_remote_calls_total{class="temporary",insurer="aa",route="POST /requests/{id}"} 1`,
		`quotesync_remote_calls_total{class="ok",insurer="bb",route="GET /requests"} 1`,
		`quotesync_remote_call_duration_seconds_count{insurer="aa",route="GET /requests"} 1`,
		`quotesync_config_reloads_total{outcome="failed"} 1`,
		`quotesync_build_info{goversion="go`,
		`go_goroutines `,
		`process_resident_memory_bytes `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, `quotesync_last_success_timestamp_seconds{insurer="aa"} 0`+"\n") {
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

// TestMetricsPageFamilies scrapes /metrics and finds every family the
// list of metrics of docs/metrics.md names, of the type it has always had
// and with exactly the labels the page gives it; every quotesync family
// served is in that list; the Go and process series the benchmarks of
// docs/benchmarks.md read are there too.
func TestMetricsPageFamilies(t *testing.T) {
	m := newPromMetrics()
	m.insurers([]string{qsync.DefaultInsurer})
	m.Observe(qsync.Event{Kind: qsync.EventAccepted, Insurer: qsync.DefaultInsurer, From: qsync.PhaseReserved, To: qsync.PhaseAccepted})
	m.observe(qsync.DefaultInsurer, remote.CallInfo{Method: "GET", Route: "GET /requests", Status: 200, Class: remote.ClassOK, Attempt: 1})
	db, _ := shopdbtest.New(t)
	st := store.New(db)
	m.state.use(st, []string{qsync.DefaultInsurer})
	types, labels := scrapeFamilies(t, getMetrics(t, m))

	page, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(page), "\n## The metrics\n\n")
	if !found {
		t.Fatal("docs/metrics.md has no section '## The metrics'")
	}
	section, _, _ = strings.Cut(section, "\n\n")
	want := map[string]string{ // the type each family has had since it was added
		"quotesync_passes_total":                   "counter",
		"quotesync_pass_duration_seconds":          "histogram",
		"quotesync_transitions_total":              "counter",
		"quotesync_errors_total":                   "counter",
		"quotesync_requests":                       "gauge",
		"quotesync_requests_held":                  "gauge",
		"quotesync_requests_needing_person":        "gauge",
		"quotesync_requests_supplement_needed":     "gauge",
		"quotesync_pending_requests":               "gauge",
		"quotesync_state_scrape_errors_total":      "counter",
		"quotesync_leader":                         "gauge",
		"quotesync_last_success_timestamp_seconds": "gauge",
		"quotesync_remote_calls_total":             "counter",
		"quotesync_remote_call_duration_seconds":   "histogram",
		"quotesync_config_reloads_total":           "counter",
		"quotesync_build_info":                     "gauge",
		// read by the idle-daemon benchmark and these tests
		"go_goroutines":                   "gauge",
		"go_memstats_heap_inuse_bytes":    "gauge",
		"go_memstats_heap_idle_bytes":     "gauge",
		"go_memstats_heap_released_bytes": "gauge",
		"go_memstats_stack_inuse_bytes":   "gauge",
		"go_memstats_mspan_inuse_bytes":   "gauge",
		"go_memstats_gc_sys_bytes":        "gauge",
		"go_memstats_other_sys_bytes":     "gauge",
		"go_memstats_buck_hash_sys_bytes": "gauge",
		"go_memstats_mcache_inuse_bytes":  "gauge",
		"process_resident_memory_bytes":   "gauge",
		"process_open_fds":                "gauge",
	}
	listed := map[string]bool{}
	for _, mm := range regexp.MustCompile("`(quotesync_[a-z_]+)(?:\\{([a-z_,]*)\\})?`").FindAllStringSubmatch(section, -1) {
		name := mm[1]
		listed[name] = true
		if _, ok := want[name]; !ok {
			t.Errorf("docs/metrics.md lists %s, which this test does not know: add its type", name)
		}
		ls := strings.Split(mm[2], ",")
		slices.Sort(ls)
		wantLabels := strings.Join(ls, ",")
		if len(labels[name]) == 0 {
			t.Errorf("/metrics serves no series of %s", name)
		}
		for ls := range labels[name] {
			if ls != wantLabels {
				t.Errorf("%s has a series labelled {%s}, docs/metrics.md says {%s}", name, ls, wantLabels)
			}
		}
	}
	if len(listed) < 16 {
		t.Fatalf("the list of metrics of docs/metrics.md names %d quotesync families, want 16", len(listed))
	}
	for name, typ := range want {
		if got := types[name]; got != typ {
			t.Errorf("%s is of type %q, want %q", name, got, typ)
		}
	}
	for name := range types {
		if strings.HasPrefix(name, "quotesync_") && !listed[name] {
			t.Errorf("/metrics serves %s, which the list of metrics of docs/metrics.md lacks", name)
		}
	}
}

// getMetrics scrapes m's /metrics over HTTP.
func getMetrics(t *testing.T, m *promMetrics) string {
	t.Helper()
	srv := httptest.NewServer(obsHandler(m, func(context.Context) (bool, qsync.HealthReport) { return true, qsync.HealthReport{} }, alwaysLive))
	defer srv.Close()
	code, body := httpGet(t, srv.URL+"/metrics")
	if code != 200 {
		t.Fatalf("GET /metrics: %d", code)
	}
	return body
}

// scrapeFamilies reads the text format: each family's type, and the label
// names of its series (sorted, joined by commas; without le and quantile).
func scrapeFamilies(t *testing.T, body string) (types map[string]string, labels map[string]map[string]bool) {
	t.Helper()
	types, labels = map[string]string{}, map[string]map[string]bool{}
	for line := range strings.Lines(body) {
		line = strings.TrimSuffix(line, "\n")
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(rest, " ")
			types[name] = typ
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, _ := strings.Cut(line, "{")
		name, _, _ = strings.Cut(name, " ")
		if _, ok := types[name]; !ok {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if base, ok := strings.CutSuffix(name, suffix); ok && types[base] != "" {
					name = base
				}
			}
		}
		var names []string
		if rest != "" {
			rest = rest[:strings.LastIndexByte(rest, '}')]
			for _, pair := range regexp.MustCompile(`([a-zA-Z_]+)="(?:[^"\\]|\\.)*"`).FindAllStringSubmatch(rest, -1) {
				if pair[1] != "le" && pair[1] != "quantile" {
					names = append(names, pair[1])
				}
			}
		}
		slices.Sort(names)
		if labels[name] == nil {
			labels[name] = map[string]bool{}
		}
		labels[name][strings.Join(names, ",")] = true
	}
	return types, labels
}

// TestRedactAnswers: the listener's door holds each answer whole, so a
// secret written in two pieces is redacted; status, headers and length
// are the handler's, and the body is gzipped when the client accepts it.
func TestRedactAnswers(t *testing.T) {
	const secret = "listener/s3cret+value"
	h := redactAnswers(redact.New(secret), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "" {
			t.Errorf("the handler was offered %q: it must answer text", r.Header.Get("Accept-Encoding"))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, `{"reason":"the last one failed: echo %s`, secret[:7])
		fmt.Fprintf(w, `%s and %s %s"}`, secret[7:], url.QueryEscape(secret), strings.Repeat("x", 2000))
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, accept := range []string{"", "gzip, deflate"} {
		req, _ := http.NewRequest("GET", srv.URL+"/healthz", nil)
		if accept != "" {
			req.Header.Set("Accept-Encoding", accept)
		}
		resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var r io.Reader = resp.Body
		if accept != "" {
			if resp.Header.Get("Content-Encoding") != "gzip" {
				t.Errorf("Accept-Encoding %q: Content-Encoding %q, want gzip", accept, resp.Header.Get("Content-Encoding"))
			} else if r, err = gzip.NewReader(resp.Body); err != nil {
				t.Fatal(err)
			}
		}
		b, err := io.ReadAll(r)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		body := string(b)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("status %d, Content-Type %q: want the handler's", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if strings.Contains(body, "s3cret") || strings.Count(body, redact.Mark) != 2 {
			t.Errorf("Accept-Encoding %q: body %.120q…, want the secret (split across two writes, and query-escaped) redacted", accept, body)
		}
		if accept == "" && resp.ContentLength != int64(len(body)) {
			t.Errorf("Content-Length %d, body %d bytes", resp.ContentLength, len(body))
		}
	}
}

// TestMetricsGzip: /metrics is gzipped when the scraper accepts it, and
// plain when it does not, through the listener's redaction as the daemon
// serves it.
func TestMetricsGzip(t *testing.T) {
	srv := httptest.NewServer(redactAnswers(redact.New("s3cret-value"), obsHandler(newPromMetrics(), func(context.Context) (bool, qsync.HealthReport) { return true, qsync.HealthReport{} }, alwaysLive)))
	defer srv.Close()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableCompression: true}}
	for _, tt := range []struct{ accept, encoding string }{{"gzip", "gzip"}, {"identity", ""}, {"", ""}} {
		req, err := http.NewRequest("GET", srv.URL+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		if tt.accept != "" {
			req.Header.Set("Accept-Encoding", tt.accept)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var r io.Reader = resp.Body
		if tt.encoding == "gzip" {
			if r, err = gzip.NewReader(resp.Body); err != nil {
				t.Fatalf("Accept-Encoding %q: %v", tt.accept, err)
			}
		}
		b, err := io.ReadAll(r)
		resp.Body.Close()
		if got := resp.Header.Get("Content-Encoding"); got != tt.encoding || err != nil || !strings.Contains(string(b), "\nquotesync_leader 0\n") {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q (want %q), %v, body without quotesync_leader:\n%.300s", tt.accept, got, tt.encoding, err, b)
		}
	}
}

// alwaysLive is a /livez verdict for tests that do not look at it.
func alwaysLive(time.Time) (bool, string) { return true, "" }

// TestLivez: /livez is the scheduler's progress, 503 with the reason when
// it makes none.
func TestLivez(t *testing.T) {
	var stuck atomic.Bool
	srv := httptest.NewServer(obsHandler(newPromMetrics(), func(context.Context) (bool, qsync.HealthReport) {
		return false, qsync.HealthReport{Status: "unhealthy"}
	}, func(time.Time) (bool, string) {
		if stuck.Load() {
			return false, "the scheduler has not ticked since 10:00"
		}
		return true, ""
	}))
	defer srv.Close()
	if code, body := httpGet(t, srv.URL+"/livez"); code != 200 || strings.TrimSpace(body) != `{"status":"ok"}` {
		t.Errorf("/livez while live (and /healthz unhealthy): %d %s, want 200 ok", code, body)
	}
	stuck.Store(true)
	if code, body := httpGet(t, srv.URL+"/livez"); code != 503 || !strings.Contains(body, `"status":"stuck"`) || !strings.Contains(body, "has not ticked") {
		t.Errorf("/livez while stuck: %d %s, want 503 with the reason", code, body)
	}
}
