package prom

import (
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestWriteText checks the text format against what Prometheus's Go client
// writes for the same metrics: families by name, series by label values,
// labels by name, le and quantile last, floats as %g, escapes.
func TestWriteText(t *testing.T) {
	r := &Registry{}
	calls := NewCounterVec("t_calls_total", "Calls by route\\class\nsecond line.", "route", "class")
	calls.WithLabelValues("POST /b", "ok").Add(2)
	calls.WithLabelValues("GET /a", "temporary").Inc()
	calls.WithLabelValues(`say "hi"\`+"\n", "ok")
	empty := NewCounterVec("t_empty_total", "Never used.", "x")
	g := NewGauge("t_gauge", "A gauge.")
	g.Set(1.8059264e+07)
	neg := NewGauge("t_neg", "Minus zero and friends.")
	neg.Set(math.Copysign(0, -1))
	h := NewHistogram("t_seconds", "A histogram.", []float64{.05, .1, 1})
	for _, v := range []float64{.05, .07, 3} {
		h.Observe(v)
	}
	hv := NewHistogramVec("t_route_seconds", "By route.", []float64{1, math.Inf(+1)}, "route")
	hv.WithLabelValues("b").Observe(0.5)
	hv.WithLabelValues("a").Observe(2)
	sum := CollectorFunc(func(add func(Family)) {
		add(Family{Name: "t_summary", Help: "A summary.", Type: TypeSummary, Series: []Series{{
			Quantiles: []Quantile{{0, 0}, {0.5, 0.25}, {1, 1}}, Count: 3, Sum: 1.25}}})
	})
	inf := NewGauge("t_inf", "Infinities.")
	inf.Set(math.Inf(-1))
	r.MustRegister(calls, empty, g, neg, h, hv, sum, inf)
	var b strings.Builder
	if err := WriteText(&b, r.Gather()); err != nil {
		t.Fatal(err)
	}
	want := `# HELP t_calls_total Calls by route\\class\nsecond line.
# TYPE t_calls_total counter
t_calls_total{class="ok",route="POST /b"} 2
t_calls_total{class="ok",route="say \"hi\"\\\n"} 0
t_calls_total{class="temporary",route="GET /a"} 1
# HELP t_gauge A gauge.
# TYPE t_gauge gauge
t_gauge 1.8059264e+07
# HELP t_inf Infinities.
# TYPE t_inf gauge
t_inf -Inf
# HELP t_neg Minus zero and friends.
# TYPE t_neg gauge
t_neg 0
# HELP t_route_seconds By route.
# TYPE t_route_seconds histogram
t_route_seconds_bucket{route="a",le="1"} 0
t_route_seconds_bucket{route="a",le="+Inf"} 1
t_route_seconds_sum{route="a"} 2
t_route_seconds_count{route="a"} 1
t_route_seconds_bucket{route="b",le="1"} 1
t_route_seconds_bucket{route="b",le="+Inf"} 1
t_route_seconds_sum{route="b"} 0.5
t_route_seconds_count{route="b"} 1
# HELP t_seconds A histogram.
# TYPE t_seconds histogram
t_seconds_bucket{le="0.05"} 1
t_seconds_bucket{le="0.1"} 2
t_seconds_bucket{le="1"} 2
t_seconds_bucket{le="+Inf"} 3
t_seconds_sum 3.12
t_seconds_count 3
# HELP t_summary A summary.
# TYPE t_summary summary
t_summary{quantile="0"} 0
t_summary{quantile="0.5"} 0.25
t_summary{quantile="1"} 1
t_summary_sum 1.25
t_summary_count 3
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestConcurrent updates metrics while scraping (run with -race).
func TestConcurrent(t *testing.T) {
	r := NewRegistry()
	c := NewCounterVec("c_total", "C.", "k")
	h := NewHistogramVec("h_seconds", "H.", []float64{1}, "k")
	r.MustRegister(c, h)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 500 {
				k := string(rune('a' + (i+j)%3))
				c.WithLabelValues(k).Inc()
				h.WithLabelValues(k).Observe(float64(j % 2))
			}
		}()
	}
	for range 20 {
		_ = WriteText(io.Discard, r.Gather())
	}
	wg.Wait()
	total := 0.0
	for _, k := range []string{"a", "b", "c"} {
		total += c.WithLabelValues(k).Value()
	}
	if total != 2000 {
		t.Errorf("counted %v, want 2000", total)
	}
}

// TestHandler checks the handler's headers, gzip and name[] filter.
func TestHandler(t *testing.T) {
	r := NewRegistry()
	g := NewGauge("a_gauge", "A.")
	g.Set(3)
	r.MustRegister(g, NewGauge("b_gauge", "B."))
	srv := httptest.NewServer(r.Handler())
	defer srv.Close()
	get := func(path, enc string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest("GET", srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if enc != "" {
			req.Header.Set("Accept-Encoding", enc)
		}
		resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body io.Reader = resp.Body
		if resp.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			body = zr
		}
		data, err := io.ReadAll(body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(data)
	}
	for _, tc := range []struct {
		enc  string
		gzip bool
	}{{"", false}, {"gzip", true}, {"gzip, deflate, br", true}, {"gzip;q=0", false},
		{"identity;q=1, gzip;q=0.5", false}, {"*", false}, {"br, *;q=0.5", false}, {"identity;q=0.5, gzip", true}} {
		resp, body := get("/metrics", tc.enc)
		if got := resp.Header.Get("Content-Encoding") == "gzip"; got != tc.gzip {
			t.Errorf("Accept-Encoding %q: gzip %v, want %v", tc.enc, got, tc.gzip)
		}
		if ct := resp.Header.Get("Content-Type"); ct != ContentType {
			t.Errorf("Content-Type %q", ct)
		}
		if !strings.Contains(body, "a_gauge 3\n") || !strings.Contains(body, `promhttp_metric_handler_errors_total{cause="encoding"} 0`) {
			t.Errorf("Accept-Encoding %q: body\n%s", tc.enc, body)
		}
	}
	if _, body := get("/metrics?name[]=b_gauge", ""); body != "# HELP b_gauge B.\n# TYPE b_gauge gauge\nb_gauge 0\n" {
		t.Errorf("name[]=b_gauge: %q", body)
	}
}

// TestRuntimeAndProcess checks that the Go and process collectors give
// every series Prometheus's Go client gives, with sane values.
func TestRuntimeAndProcess(t *testing.T) {
	r := &Registry{}
	r.MustRegister(GoCollector(), ProcessCollector())
	got := map[string]Family{}
	for _, f := range r.Gather() {
		got[f.Name] = f
	}
	for _, name := range []string{"go_gc_duration_seconds", "go_gc_gogc_percent", "go_gc_gomemlimit_bytes",
		"go_goroutines", "go_info", "go_memstats_alloc_bytes", "go_memstats_alloc_bytes_total",
		"go_memstats_buck_hash_sys_bytes", "go_memstats_frees_total", "go_memstats_gc_sys_bytes",
		"go_memstats_heap_alloc_bytes", "go_memstats_heap_idle_bytes", "go_memstats_heap_inuse_bytes",
		"go_memstats_heap_objects", "go_memstats_heap_released_bytes", "go_memstats_heap_sys_bytes",
		"go_memstats_last_gc_time_seconds", "go_memstats_mallocs_total", "go_memstats_mcache_inuse_bytes",
		"go_memstats_mcache_sys_bytes", "go_memstats_mspan_inuse_bytes", "go_memstats_mspan_sys_bytes",
		"go_memstats_next_gc_bytes", "go_memstats_other_sys_bytes", "go_memstats_stack_inuse_bytes",
		"go_memstats_stack_sys_bytes", "go_memstats_sys_bytes", "go_sched_gomaxprocs_threads", "go_threads",
		"process_cpu_seconds_total", "process_max_fds", "process_network_receive_bytes_total",
		"process_network_transmit_bytes_total", "process_open_fds", "process_resident_memory_bytes",
		"process_start_time_seconds", "process_virtual_memory_bytes", "process_virtual_memory_max_bytes"} {
		if _, ok := got[name]; !ok {
			t.Errorf("no %s", name)
		}
	}
	for _, name := range []string{"go_goroutines", "go_memstats_sys_bytes", "go_memstats_heap_inuse_bytes",
		"go_gc_gogc_percent", "go_sched_gomaxprocs_threads", "process_open_fds", "process_resident_memory_bytes",
		"process_virtual_memory_bytes", "process_max_fds", "process_start_time_seconds"} {
		if f := got[name]; len(f.Series) != 1 || !(f.Series[0].Value > 0) {
			t.Errorf("%s = %+v, want > 0", name, f.Series)
		}
	}
	if q := got["go_gc_duration_seconds"].Series[0].Quantiles; len(q) != 5 || q[4].Q != 1 {
		t.Errorf("go_gc_duration_seconds quantiles %+v", q)
	}
}

// TestProcessParse reads a made-up /proc: a command name with spaces and
// parentheses, IpExt among other sections.
func TestProcessParse(t *testing.T) {
	root := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("self/stat", "42 (a) b (c) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0 12345 1679687680 4409 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n")
	write("stat", "cpu  1 2 3\nbtime 1700000000\nprocesses 9\n")
	write("self/net/netstat", "TcpExt: A B\nTcpExt: 1 2\nIpExt: InNoRoutes InOctets OutOctets\nIpExt: 0 2372537606 1969311009\n")
	if err := os.MkdirAll(filepath.Join(root, "self/fd"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, fd := range []string{"0", "1", "2"} {
		write("self/fd/"+fd, "")
	}
	old := procRoot
	procRoot = root
	defer func() { procRoot = old }()
	got := map[string]float64{}
	collectProcess(func(f Family) { got[f.Name] = f.Series[0].Value })
	want := map[string]float64{
		"process_cpu_seconds_total":            3,
		"process_virtual_memory_bytes":         1679687680,
		"process_resident_memory_bytes":        4409 * float64(os.Getpagesize()),
		"process_start_time_seconds":           1700000000 + 123.45,
		"process_open_fds":                     3,
		"process_network_receive_bytes_total":  2372537606,
		"process_network_transmit_bytes_total": 1969311009,
	}
	for name, v := range want {
		if got[name] != v {
			t.Errorf("%s = %v, want %v", name, got[name], v)
		}
	}
}
