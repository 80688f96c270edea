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
	"sort"
	"strconv"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
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
	w.prof = newBenchProfile()
	w.engine, err = qsync.New(qsync.Config{Concurrency: concurrency, PassTimeout: time.Hour},
		timedRemote{client, w.prof}, timedStore{w.db, w.prof}, zap.NewNop())
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
// 10,000 tracked jobs of 30 lines each, all drafted and unchanged: one lock
// check plus one pass. Targets: 1 remote call, at most 3 round trips.
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
	lock, err := w.db.AcquireLock(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer lock.Release()

	var n, calls, writes int
	var trips int64
	var wall time.Duration
	for b.Loop() {
		w.prof.reset()
		c0, t0, s0 := w.emu.Calls(), w.db.RoundTrips(), time.Now()
		if err := lock.Check(ctx); err != nil {
			b.Fatal(err)
		}
		sum, err := w.engine.Pass(ctx)
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(s0)
		trips += w.db.RoundTrips() - t0
		c1 := w.emu.Calls()
		calls += sumCalls(c1) - sumCalls(c0)
		writes += sumCalls(c1) - c1[emulator.RouteListRequests] - (sumCalls(c0) - c0[emulator.RouteListRequests])
		if sum.Changed() || sum.Tracked != jobs {
			b.Fatalf("idle pass changed something or missed jobs: %+v", sum)
		}
		n++
	}
	if writes != 0 {
		b.Errorf("idle passes made %d remote writes, want 0", writes)
	}
	b.Logf("last idle pass: %s", w.prof.report(time.Time{}, 1))
	b.ReportMetric(float64(calls)/float64(n), "remote-calls/op")
	b.ReportMetric(float64(trips)/float64(n), "db-roundtrips/op")
	b.ReportMetric(float64(wall.Microseconds())/1000/float64(n), "ms/op")
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
		c0, t0 := w.emu.Calls(), w.db.RoundTrips()
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
		trips += w.db.RoundTrips() - t0
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

// timedStore is the real store, its main calls timed.
type timedStore struct {
	*shopdb.DB
	p *benchProfile
}

func (s timedStore) OpenRequests(ctx context.Context, q shopdb.OpenQuery) ([]shopdb.Request, error) {
	defer s.p.since("db.OpenRequests", time.Now())
	return s.DB.OpenRequests(ctx, q)
}

func (s timedStore) InTx(ctx context.Context, nr shopdb.NewRequest, f func(context.Context, *shopdb.Tx) error) error {
	defer s.p.since("db.InTx", time.Now())
	return s.DB.InTx(ctx, nr, f)
}

func (s timedStore) Update(ctx context.Context, cur, next shopdb.Request, ev shopdb.Event) (shopdb.Request, error) {
	defer s.p.since("db.Update", time.Now())
	return s.DB.Update(ctx, cur, next, ev)
}

func (s timedStore) JobStates(ctx context.Context, jobs []string) (map[string]shopdb.JobState, map[string]error, error) {
	defer s.p.since("db.JobStates", time.Now())
	return s.DB.JobStates(ctx, jobs)
}

func (s timedStore) LineItems(ctx context.Context, jobs []string) (map[string][]shopdb.Line, map[string]error, error) {
	defer s.p.since("db.LineItems", time.Now())
	return s.DB.LineItems(ctx, jobs)
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
