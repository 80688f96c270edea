package sync_test

// Benchmarks of whole passes on the real parts: a sample-shop database on
// the test MariaDB (shopdb.DB), the real remote client, and the emulator
// behind httptest. Run them with
//
//	go test -run '^$' -bench . -benchtime 3x ./sync/

import (
	"context"
	"fmt"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	gosync "sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// benchToken is the emulator's token in the benchmarks (not a secret).
const benchToken = "bench-token-8d21"

// benchWorld is a shop database, an emulator and an engine wired together.
type benchWorld struct {
	d      *shopdbtest.Database
	db     *shopdb.DB
	emu    *emulator.Emulator
	engine *qsync.Engine
	client *remote.Client
	prof   *benchProfile
}

// newBenchWorld wires a fresh world; the engine works on concurrency
// requests at once and the client has no rate limit.
func newBenchWorld(b *testing.B, concurrency int) *benchWorld {
	b.Helper()
	w := &benchWorld{d: shopdbtest.NewSampleShop(b)}
	cfg := w.d.Config()
	// No background heartbeat in the measured round trips: the benchmark
	// checks the lock once per pass itself, as the scheduler does.
	cfg.LockHeartbeat = 10 * time.Minute
	cfg.LockSessionTimeout = 30 * time.Minute
	cfg.MaxOpenConns = concurrency + 4
	w.db = w.d.Open(b, cfg)
	emu, err := emulator.New(emulator.Options{Token: benchToken, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	w.emu = emu
	srv := httptest.NewServer(emu)
	b.Cleanup(srv.Close)
	client, err := remote.New(remote.Config{BaseURL: srv.URL, RateLimit: -1}, remote.StaticToken(benchToken))
	if err != nil {
		b.Fatal(err)
	}
	w.client = client
	w.prof = newBenchProfile()
	w.engine, err = qsync.New(qsync.Config{Concurrency: concurrency, PassTimeout: time.Hour, MaxNewPerPass: -1},
		timedRemote{client, w.prof}, timedShop{w.db, w.prof}, timedStore{store.New(w.db), w.prof}, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// addJobs makes n shop jobs with lines and one pending request per job
// (its claim is the job's), and returns the request ids.
func (w *benchWorld) addJobs(b *testing.B, n, lines int) []string {
	b.Helper()
	jobs, err := w.d.Shop().GenerateJobs(context.Background(), n, lines)
	if err != nil {
		b.Fatal(err)
	}
	seeds := make([]emulator.SeedRequest, len(jobs))
	for i, job := range jobs {
		num, err := strconv.ParseInt(strings.TrimPrefix(job, "RO-"), 10, 64)
		if err != nil {
			b.Fatalf("job number %q: %v", job, err)
		}
		seeds[i] = emulator.SeedRequest{ClaimNumber: fmt.Sprintf("GEN-%07d", num)}
	}
	return w.emu.AddRequests(seeds...)
}

// phases counts quotesync's rows by phase.
func (w *benchWorld) phases(b *testing.B) map[string]int {
	b.Helper()
	rows, err := w.d.SQL.Query("SELECT phase, COUNT(*) FROM quotesync_requests GROUP BY phase")
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	out := make(map[string]int)
	for rows.Next() {
		var p string
		var n int
		if err := rows.Scan(&p, &n); err != nil {
			b.Fatal(err)
		}
		out[p] = n
	}
	return out
}

// sumCalls returns the total of a Calls() map.
func sumCalls(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// BenchmarkIdlePass10k measures a scheduled pass with nothing to do over
// 10,000 tracked jobs of 30 lines each, all drafted and unchanged, in
// each way a mapping can let quotesync tell that nothing changed:
//
//   - shop-changed: the sample mapping (shop_changed and a marker); one
//     round trip, nothing else read. Target ≤ 50 ms (floor: shop_changed).
//   - marker: estimate_state with a marker, no shop_changed; the rows and
//     every job's state are read. Target ≤ 50 ms over its floor's
//     estimate_state time (floor: estimate_state over every job).
//   - no-marker: estimate_state without a marker; quotesync derives one
//     from the lines, summed by the database (shopdb/linedigest.go).
//     Target ≤ 0.5 s (floor: line_items over every job, which the
//     database still reads).
//   - marker-moved: every estimate's time stamp moved, content unchanged:
//     the lines are read and hashed, the new markers written in one
//     statement.
//
// Each reports ms/op, cpu-ms/op (this process's CPU time: the pass, and
// the emulator's answer to the listing), db-cpu-ms/op and
// floor-db-cpu-ms/op (the database server's CPU time over the pass and
// over the floor, when it runs on this machine: other clients' work
// counts too), db-roundtrips/op, remote-calls/op, pass-heap-MiB
// (the most heap seen during the pass, live or not yet collected, sampled
// every millisecond, above the live heap at its start: the emulator's and
// the test's own data, in the same process, are left out;
// BenchmarkOnceIdle10k in cmd/quotesync measures a whole process's peak
// RSS), and B/op and allocs/op (what the pass allocates, the emulator's
// answer to the listing included: a figure the machine's load does not
// change). floor-ms/op is the case's floor, the one raw SELECT a perfect
// implementation of that case needs (line_items for marker-moved: the
// marker writes are on top), timed right after each pass on the test's
// own connection, and x-floor the pass's time over it: on a machine whose
// load changes from one second to the next the ratio still says
// something.
func BenchmarkIdlePass10k(b *testing.B) {
	const jobs, lines = 10000, 30
	w := newBenchWorld(b, 32)
	ctx := context.Background()
	w.addJobs(b, jobs, lines)
	start := time.Now()
	if _, err := w.engine.Pass(ctx); err != nil {
		b.Fatalf("setup pass: %v", err)
	}
	if got := w.phases(b); got["drafted"] != jobs {
		b.Fatalf("after the setup pass: phases %v, want %d drafted", got, jobs)
	}
	b.Logf("setup: %d jobs accepted and drafted in %s", jobs, time.Since(start).Round(time.Millisecond))
	allJobs := w.jobs(b)

	mapping := w.d.Config()
	noShopChanged := func(c *shopdb.Config) { c.Queries.ShopChanged = "" }
	noMarker := func(c *shopdb.Config) {
		noShopChanged(c)
		c.Queries.EstimateState = `SELECT j.job_no AS job, MAX(CASE WHEN e.status = 'FINAL' THEN 1 ELSE 0 END) AS final
FROM jobs j JOIN estimates e ON e.job_id = j.job_id WHERE j.job_no IN (:jobs) GROUP BY j.job_no`
	}
	// The floors: the one statement each case needs, raw.
	in := "'" + strings.Join(allJobs, "','") + "'"
	floorShopChanged := mapping.Queries.ShopChanged
	floorStates := strings.ReplaceAll(mapping.Queries.EstimateState, ":jobs", in)
	floorLines := strings.ReplaceAll(mapping.Queries.LineItems, ":jobs", in)
	cases := []struct {
		name  string
		edit  func(*shopdb.Config)
		touch bool // move every estimate's marker before each pass
		floor string
	}{
		{"shop-changed", func(*shopdb.Config) {}, false, floorShopChanged},
		{"marker", noShopChanged, false, floorStates},
		{"no-marker", noMarker, false, floorLines},
		{"marker-moved", noShopChanged, true, floorLines},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			cfg := w.d.Config()
			cfg.LockHeartbeat, cfg.LockSessionTimeout, cfg.MaxOpenConns = 10*time.Minute, 30*time.Minute, 36
			tc.edit(&cfg)
			db := w.d.Open(b, cfg)
			engine, err := qsync.New(qsync.Config{Concurrency: 32, PassTimeout: time.Hour, MaxNewPerPass: -1},
				timedRemote{w.client, w.prof}, timedShop{db, w.prof}, timedStore{store.New(db), w.prof}, zap.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			// Warm up: the first pass of an engine reads everything and
			// may store markers in this mapping's form.
			for range 2 {
				if _, err := engine.Pass(ctx); err != nil {
					b.Fatal(err)
				}
			}
			var n, calls, writes int
			var trips int64
			var wall, floor, cpu, dbCPU, floorDBCPU time.Duration
			var peak uint64
			b.ReportAllocs()
			for b.Loop() {
				if tc.touch {
					b.StopTimer()
					if _, err := w.d.SQL.Exec("UPDATE estimates SET updated_at = NOW(6)"); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				w.prof.reset()
				b.StopTimer()
				stop := sampleHeap()
				b.StartTimer()
				c0, t0, s0 := w.emu.Calls(), shopdbtest.RoundTrips(db), time.Now()
				cpu0, db0 := processCPU(), serverCPU()
				sum, err := engine.Pass(ctx)
				wall += time.Since(s0)
				cpu += processCPU() - cpu0
				dbCPU += serverCPU() - db0
				peak = max(peak, stop())
				if err != nil {
					b.Fatal(err)
				}
				trips += shopdbtest.RoundTrips(db) - t0
				c1 := w.emu.Calls()
				calls += sumCalls(c1) - sumCalls(c0)
				writes += sumCalls(c1) - c1[emulator.RouteListRequests] - (sumCalls(c0) - c0[emulator.RouteListRequests])
				if sum.Tracked != jobs || sum.Changed() || sum.Retrying != 0 {
					b.Fatalf("idle pass changed something or missed jobs: %+v", sum)
				}
				b.StopTimer()
				fdb0 := serverCPU()
				floor += w.d.ReadRaw(b, tc.floor)
				floorDBCPU += serverCPU() - fdb0
				b.StartTimer()
				n++
			}
			if writes != 0 {
				b.Errorf("idle passes made %d remote writes, want 0", writes)
			}
			b.Logf("last pass: %s", w.prof.report(time.Time{}, 1))
			b.ReportMetric(float64(calls)/float64(n), "remote-calls/op")
			b.ReportMetric(float64(trips)/float64(n), "db-roundtrips/op")
			b.ReportMetric(float64(wall.Microseconds())/1000/float64(n), "ms/op")
			b.ReportMetric(float64(floor.Microseconds())/1000/float64(n), "floor-ms/op")
			b.ReportMetric(float64(wall)/float64(floor), "x-floor")
			b.ReportMetric(float64(peak)/(1<<20), "pass-heap-MiB")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n), "cpu-ms/op")
			if _, ok := shopdbtest.ServerCPU(); ok {
				b.ReportMetric(float64(dbCPU.Microseconds())/1000/float64(n), "db-cpu-ms/op")
				b.ReportMetric(float64(floorDBCPU.Microseconds())/1000/float64(n), "floor-db-cpu-ms/op")
			}
		})
	}

}

// processCPU is the CPU time this process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverCPU is the CPU time the database server has used so far (0 when
// it cannot be read).
func serverCPU() time.Duration {
	d, _ := shopdbtest.ServerCPU()
	return d
}

// jobs returns every job number quotesync tracks.
func (w *benchWorld) jobs(b *testing.B) []string {
	b.Helper()
	var out []string
	if err := w.d.SQL.Select(&out, "SELECT job_number FROM quotesync_requests WHERE job_number IS NOT NULL"); err != nil {
		b.Fatal(err)
	}
	return out
}

// sampleHeap samples the live heap every millisecond until the returned
// function is called, which returns the most seen above the heap at the
// start (after a GC).
func sampleHeap() func() uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak atomic.Uint64
	read := func() {
		metrics.Read(sample)
		if v := sample[0].Value.Uint64(); v > peak.Load() {
			peak.Store(v)
		}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			read()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		read()
		return peak.Load() - min(base, peak.Load())
	}
}

// BenchmarkAcceptDraft1000 measures how fast 1,000 new pending requests
// (their shop jobs have lines) are accepted and drafted in one pass, with
// 20 ms of latency on every API call, concurrency 8 and no client rate
// limit. Target: at least 150 requests/s.
func BenchmarkAcceptDraft1000(b *testing.B) {
	const requests, lines, concurrency = 1000, 10, 8
	w := newBenchWorld(b, concurrency)
	w.emu.AddFault(emulator.Fault{Route: "*", Action: emulator.FaultLatency, Latency: 20 * time.Millisecond})
	ctx := context.Background()

	var done int
	var wall time.Duration
	var trips int64
	var calls int
	for b.Loop() {
		b.StopTimer()
		w.addJobs(b, requests, lines)
		c0, t0 := w.emu.Calls(), shopdbtest.RoundTrips(w.db)
		w.prof.reset()
		b.StartTimer()
		s0 := time.Now()
		sum, err := w.engine.Pass(ctx)
		wall += time.Since(s0)
		if err != nil {
			b.Fatal(err)
		}
		if sum.Accepted != requests || sum.Drafted != requests {
			b.Fatalf("pass accepted %d and drafted %d, want %d each: %+v", sum.Accepted, sum.Drafted, requests, sum)
		}
		trips += shopdbtest.RoundTrips(w.db) - t0
		calls += sumCalls(w.emu.Calls()) - sumCalls(c0)
		done += requests
		b.Logf("pass of %d requests in %s; %s", requests, time.Since(s0).Round(time.Millisecond), w.prof.report(s0, requests))
	}
	b.ReportMetric(float64(done)/wall.Seconds(), "requests/s")
	b.ReportMetric(float64(trips)/float64(done), "db-roundtrips/request")
	b.ReportMetric(float64(calls)/float64(done), "remote-calls/request")
}

// benchProfile sums the time the engine spends in each Store and Remote
// method, and notes when the push stage started, so that a benchmark that
// misses its target says where the time went.
type benchProfile struct {
	mu        gosync.Mutex
	total     map[string]time.Duration
	count     map[string]int
	firstPush time.Time
}

func newBenchProfile() *benchProfile {
	p := &benchProfile{}
	p.reset()
	return p
}

func (p *benchProfile) reset() {
	p.mu.Lock()
	p.total, p.count, p.firstPush = make(map[string]time.Duration), make(map[string]int), time.Time{}
	p.mu.Unlock()
}

// since records one call of op that started at start.
func (p *benchProfile) since(op string, start time.Time) {
	d := time.Since(start)
	p.mu.Lock()
	p.total[op] += d
	p.count[op]++
	if op == "remote.CreateQuote" && p.firstPush.IsZero() {
		p.firstPush = start
	}
	p.mu.Unlock()
}

// report gives, per method, the calls and the milliseconds per request
// (summed over the concurrent workers), and the wall time of the accept
// stage (pass start to the first quote push).
func (p *benchProfile) report(passStart time.Time, requests int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	ops := make([]string, 0, len(p.total))
	for op := range p.total {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	var b strings.Builder
	if !p.firstPush.IsZero() {
		fmt.Fprintf(&b, "accept stage %s; ", p.firstPush.Sub(passStart).Round(time.Millisecond))
	}
	for _, op := range ops {
		fmt.Fprintf(&b, "%s %d calls %.2f ms/request; ", op, p.count[op],
			float64(p.total[op].Microseconds())/1000/float64(requests))
	}
	return b.String()
}

// timedShop is the real mapping, its main calls timed.
type timedShop struct {
	*shopdb.DB
	p *benchProfile
}

// timedStore is the real store, its main calls timed.
type timedStore struct {
	*store.Store
	p *benchProfile
}

func (s timedStore) OpenRequests(ctx context.Context, q store.OpenQuery) ([]store.Request, error) {
	defer s.p.since("db.OpenRequests", time.Now())
	return s.Store.OpenRequests(ctx, q)
}

func (s timedStore) InTx(ctx context.Context, requestID string, f func(context.Context, *store.Tx) error) error {
	defer s.p.since("db.InTx", time.Now())
	return s.Store.InTx(ctx, requestID, f)
}

func (s timedStore) Update(ctx context.Context, cur, next store.Request, ev store.Event) (store.Request, error) {
	defer s.p.since("db.Update", time.Now())
	return s.Store.Update(ctx, cur, next, ev)
}

func (s timedShop) JobStates(ctx context.Context, jobs []string) (map[string]shopdb.JobState, map[string]error, error) {
	defer s.p.since("db.JobStates", time.Now())
	return s.DB.JobStates(ctx, jobs)
}

func (s timedShop) Lines(ctx context.Context, jobs []string) (map[string]shopdb.JobLines, error) {
	defer s.p.since("db.Lines", time.Now())
	return s.DB.Lines(ctx, jobs)
}

func (s timedShop) EachLines(ctx context.Context, jobs []string, f func(job string, jl shopdb.JobLines)) error {
	defer s.p.since("db.EachLines", time.Now())
	return s.DB.EachLines(ctx, jobs, f)
}

func (s timedStore) UpdateMarkers(ctx context.Context, us []store.MarkerUpdate) (int, error) {
	defer s.p.since("db.UpdateMarkers", time.Now())
	return s.Store.UpdateMarkers(ctx, us)
}

// timedRemote is the real client, its calls timed.
type timedRemote struct {
	*remote.Client
	p *benchProfile
}

func (r timedRemote) ListRequests(ctx context.Context) ([]remote.Request, error) {
	defer r.p.since("remote.ListRequests", time.Now())
	return r.Client.ListRequests(ctx)
}

func (r timedRemote) Accept(ctx context.Context, id, ref string, booking time.Time) (remote.Job, error) {
	defer r.p.since("remote.Accept", time.Now())
	return r.Client.Accept(ctx, id, ref, booking)
}

func (r timedRemote) CreateQuote(ctx context.Context, job string, q remote.Quote) (remote.Quote, error) {
	defer r.p.since("remote.CreateQuote", time.Now())
	return r.Client.CreateQuote(ctx, job, q)
}

func (r timedRemote) UpdateDraft(ctx context.Context, job string, q remote.Quote) (remote.Quote, error) {
	defer r.p.since("remote.UpdateDraft", time.Now())
	return r.Client.UpdateDraft(ctx, job, q)
}

func (r timedRemote) SetStatus(ctx context.Context, job, typ, status string) (remote.Quote, error) {
	defer r.p.since("remote.SetStatus", time.Now())
	return r.Client.SetStatus(ctx, job, typ, status)
}

// insurersWorld is one sample shop database with jobs tracked for one or
// several insurers, each served by an emulator of its own over real HTTP,
// and the settings a daemon is assembled from (qsync.Open, as the command
// does).
type insurersWorld struct {
	d    *shopdbtest.Database
	emus []*emulator.Emulator
	set  qsync.Settings
	jobs int // per insurer
}

// newInsurersWorld builds insurers × jobs shop jobs of lines lines, one
// pending request each at its insurer's service, and has a daemon accept
// and draft them all. A lone insurer is the one of a remote: section
// (qsync.DefaultInsurer), as with one insurer today.
func newInsurersWorld(b *testing.B, insurers, jobs, lines int) *insurersWorld {
	b.Helper()
	w := &insurersWorld{d: shopdbtest.NewSampleShop(b), jobs: jobs}
	sc := qsync.DefaultConfig()
	sc.Concurrency, sc.PassTimeout, sc.MaxNewPerPass = 32, time.Hour, -1
	w.set = qsync.Settings{Sync: sc}
	for i := range insurers {
		name, key := qsync.DefaultInsurer, "remote"
		if insurers > 1 {
			name = fmt.Sprintf("ins%d", i+1)
			key = "remotes[" + name + "]"
		}
		emu, err := emulator.New(emulator.Options{Token: benchToken, Seed: uint64(i + 1)})
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(emu)
		b.Cleanup(srv.Close)
		w.emus = append(w.emus, emu)
		w.set.Insurers = append(w.set.Insurers, qsync.Insurer{Name: name, Key: key,
			Remote: remote.Config{BaseURL: srv.URL, RateLimit: -1}, Tokens: remote.StaticToken(benchToken)})
	}
	generated, err := w.d.Shop().GenerateJobs(context.Background(), insurers*jobs, lines)
	if err != nil {
		b.Fatal(err)
	}
	for i, job := range generated {
		num, err := strconv.ParseInt(strings.TrimPrefix(job, "RO-"), 10, 64)
		if err != nil {
			b.Fatalf("job number %q: %v", job, err)
		}
		w.emus[i/jobs].AddRequests(emulator.SeedRequest{ClaimNumber: fmt.Sprintf("GEN-%07d", num)})
	}
	start := time.Now()
	qd := w.open(b, func(*shopdb.Config) {})
	for i, s := range passEngines(b, qd) {
		if s.Accepted != jobs || s.Drafted != jobs {
			b.Fatalf("setup pass of %s: accepted %d, drafted %d, want %d each", w.set.Insurers[i].Name, s.Accepted, s.Drafted, jobs)
		}
	}
	b.Logf("setup: %d insurers × %d jobs accepted and drafted in %s", insurers, jobs, time.Since(start).Round(time.Millisecond))
	return w
}

// open assembles a daemon on the world, its mapping changed by edit.
func (w *insurersWorld) open(b *testing.B, edit func(*shopdb.Config)) *qsync.Daemon {
	b.Helper()
	set := w.set
	set.Shop = w.d.Config()
	set.Shop.LockHeartbeat, set.Shop.LockSessionTimeout, set.Shop.MaxOpenConns = 10*time.Minute, 30*time.Minute, 36
	edit(&set.Shop)
	qd, err := qsync.Open(context.Background(), set, qsync.OpenOptions{Migrate: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { qd.Close() })
	return qd
}

// passEngines runs one pass of every engine of qd at once, as the run
// loop's ticks do when the insurers share a schedule (the lease it holds
// asks no round trip of a tick), and returns each engine's summary.
func passEngines(b *testing.B, qd *qsync.Daemon) []qsync.Summary {
	sums := make([]qsync.Summary, len(qd.Engines))
	errs := make([]error, len(qd.Engines))
	var wg gosync.WaitGroup
	for i, e := range qd.Engines {
		wg.Go(func() { sums[i], errs[i] = e.Pass(context.Background()) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			b.Fatalf("pass of insurer %d: %v", i+1, err)
		}
	}
	return sums
}

// BenchmarkIdlePassInsurers compares the idle pass of the daemon with
// 1 insurer × 10,000 tracked jobs against 2 insurers × 5,000 (30 lines
// each, all drafted and unchanged): the target is that the two insurers
// cost no more than the one, with the round trips of one insurer each and
// one shop-side read for all. A pass is every engine's pass started at
// once on a daemon assembled by qsync.Open (Engine.Pass, the run loop's
// pass: Daemon.Once would be the engines' last and read no fingerprint),
// in the cases of BenchmarkIdlePass10k where the insurers differ:
//
//   - shop-changed: the sample mapping; each pass reads the fingerprint,
//     which the engines of one daemon share (fingerprint-statements/op
//     says how many reads the server got: 1 when the engines' reads
//     overlapped and joined, 2 when one had ended before the other began);
//   - shop-changed-unshared: the same, each engine reading the fingerprint
//     on its own, as before the engines shared it;
//   - marker: no shop_changed; each engine reads its rows and its jobs'
//     estimate states, the engines' states in one statement when they ask
//     together (states-statements/op says how many the server got).
//
// The two worlds (a database each) are measured in turn, one pass of each
// per iteration, the order swapped every other one: on a machine whose
// load changes from one second to the next only figures taken in the same
// minutes compare. Each world's metrics carry its name (1x10000-, 2x5000-):
// remote-calls/op, db-roundtrips/op (the pool's, every engine's together)
// and db-roundtrips/insurer (the same over the insurers),
// alone-db-roundtrips/insurer (each engine's pass alone, untimed: what
// one insurer asks when it does not pass beside the other),
// fingerprint-statements/op, ms/op (until the last engine's pass ends),
// cpu-ms/op (this process's CPU: the passes and the emulators' answers to
// the listings), alloc-MB/op and allocs/op (what the passes allocate, the
// emulators' answers included: figures the load does not change) and
// db-cpu-ms/op (the database server's, when it runs on
// this machine: other clients' work counts too). ns/op is both worlds'
// passes together.
func BenchmarkIdlePassInsurers(b *testing.B) {
	const total, lines = 10000, 30
	var worlds []*insurersWorld
	for _, n := range []int{1, 2} {
		worlds = append(worlds, newInsurersWorld(b, n, total/n, lines))
	}
	cases := []struct {
		name     string
		edit     func(*shopdb.Config)
		unshared bool // each engine reads the fingerprint on its own
	}{
		{"shop-changed", func(*shopdb.Config) {}, false},
		{"shop-changed-unshared", func(*shopdb.Config) {}, true},
		{"marker", func(c *shopdb.Config) { c.Queries.ShopChanged = "" }, false},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			daemons := make([]*qsync.Daemon, len(worlds))
			ms := make([]insurersMeasure, len(worlds))
			for k, w := range worlds {
				daemons[k] = w.open(b, tc.edit)
				if tc.unshared {
					daemons[k].UnshareFingerprints()
				}
				// Warm up: the first pass of an engine reads everything.
				for range 2 {
					passEngines(b, daemons[k])
				}
			}
			i := 0
			for b.Loop() {
				for j := range worlds {
					k := j
					if i%2 == 1 {
						k = len(worlds) - 1 - j
					}
					ms[k].pass(b, worlds[k], daemons[k])
				}
				i++
			}
			for k, w := range worlds {
				ms[k].report(b, fmt.Sprintf("%dx%d-", len(w.emus), w.jobs), len(w.emus))
			}
		})
	}
}

// insurersMeasure sums what a world's idle passes cost.
type insurersMeasure struct {
	ops, calls            int
	trips, alone, fpReads int64
	stReads               int64
	wall, cpu, dbCPU      time.Duration
	bytes, objects        uint64 // allocated by the passes (and the emulators' answers)
}

// allocated reads how many bytes and objects this process allocated so far.
func allocated() (bytes, objects uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/allocs:objects"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

// pass runs one idle pass of every engine of qd at once, measured, and
// then each engine's alone, untimed, counting its round trips.
func (m *insurersMeasure) pass(b *testing.B, w *insurersWorld, qd *qsync.Daemon) {
	c0 := make([]map[string]int, len(w.emus))
	for i, emu := range w.emus {
		c0[i] = emu.Calls()
	}
	t0, f0, st0, s0 := shopdbtest.RoundTrips(qd.Shop), qd.FingerprintStatements(), qd.StatesStatements(), time.Now()
	cpu0, db0 := processCPU(), serverCPU()
	by0, ob0 := allocated()
	sums := passEngines(b, qd)
	m.wall += time.Since(s0)
	m.cpu += processCPU() - cpu0
	m.dbCPU += serverCPU() - db0
	by1, ob1 := allocated()
	m.bytes += by1 - by0
	m.objects += ob1 - ob0
	m.trips += shopdbtest.RoundTrips(qd.Shop) - t0
	m.fpReads += qd.FingerprintStatements() - f0
	m.stReads += qd.StatesStatements() - st0
	b.StopTimer()
	defer b.StartTimer()
	for i, emu := range w.emus {
		c1 := emu.Calls()
		m.calls += sumCalls(c1) - sumCalls(c0[i])
		if writes := sumCalls(c1) - c1[emulator.RouteListRequests] - (sumCalls(c0[i]) - c0[i][emulator.RouteListRequests]); writes != 0 {
			b.Fatalf("idle pass of %s made %d remote writes", w.set.Insurers[i].Name, writes)
		}
	}
	for i, s := range sums {
		if s.Tracked != w.jobs || s.Changed() || s.Retrying != 0 {
			b.Fatalf("idle pass of %s changed something or missed jobs: %+v", w.set.Insurers[i].Name, s)
		}
	}
	for _, e := range qd.Engines {
		a0 := shopdbtest.RoundTrips(qd.Shop)
		if _, err := e.Pass(context.Background()); err != nil {
			b.Fatal(err)
		}
		m.alone += shopdbtest.RoundTrips(qd.Shop) - a0
	}
	m.ops++
}

// report reports the metrics, each named with prefix.
func (m *insurersMeasure) report(b *testing.B, prefix string, insurers int) {
	ops := float64(m.ops)
	b.ReportMetric(float64(m.calls)/ops, prefix+"remote-calls/op")
	b.ReportMetric(float64(m.trips)/ops, prefix+"db-roundtrips/op")
	b.ReportMetric(float64(m.trips)/ops/float64(insurers), prefix+"db-roundtrips/insurer")
	b.ReportMetric(float64(m.alone)/ops/float64(insurers), prefix+"alone-db-roundtrips/insurer")
	b.ReportMetric(float64(m.fpReads)/ops, prefix+"fingerprint-statements/op")
	b.ReportMetric(float64(m.stReads)/ops, prefix+"states-statements/op")
	b.ReportMetric(float64(m.wall.Microseconds())/1000/ops, prefix+"ms/op")
	b.ReportMetric(float64(m.cpu.Microseconds())/1000/ops, prefix+"cpu-ms/op")
	b.ReportMetric(float64(m.bytes)/1e6/ops, prefix+"alloc-MB/op")
	b.ReportMetric(float64(m.objects)/ops, prefix+"allocs/op")
	if _, ok := shopdbtest.ServerCPU(); ok {
		b.ReportMetric(float64(m.dbCPU.Microseconds())/1000/ops, prefix+"db-cpu-ms/op")
	}
}
