package main

import (
	"database/sql"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// Fault tests: the daemon (`run`, one-second schedule) works while the
// remote misbehaves or its database connections die, the shop edits and
// finalises estimates meanwhile, and everything must converge with every
// invariant intact.

// faultsSeed seeds the randomness of a fault test; it is logged.
func faultsSeed(t *testing.T) uint64 {
	seed := uint64(e2eEnvInt(t, "QUOTESYNC_FAULTS_SEED", time.Now().UnixNano()%1_000_000_000))
	t.Logf("seed %d (replay: QUOTESYNC_FAULTS_SEED=%d go test -run %s ./cmd/quotesync/)", seed, seed, t.Name())
	return seed
}

// faultsRounds is n, or four times n with QUOTESYNC_SOAK=1.
func faultsRounds(n int) int {
	if os.Getenv("QUOTESYNC_SOAK") == "1" {
		return 4 * n
	}
	return n
}

// faultsInModes runs test against each emulator mode, in parallel, each
// with half the rounds (so that the suite takes about the time of one).
func faultsInModes(t *testing.T, rounds int, test func(t *testing.T, mode string, rounds int)) {
	for _, mode := range e2eModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			test(t, mode, (faultsRounds(rounds)+1)/2)
		})
	}
}

// faultsScenario seeds requests, lets the shop work for rounds while the
// daemon p runs (between calls of disturb), then finalises every
// estimate with lines and waits until the daemon has converged.
func faultsScenario(t *testing.T, e *e2eEnv, shop *e2eShopPlayer, p *e2eProc, rounds int, disturb func()) {
	t.Helper()
	for range 6 {
		shop.newRequest()
	}
	for range rounds {
		disturb()
		shop.playShop(0.6)
		if shop.rng.IntN(3) == 0 {
			shop.newRequest()
		}
		time.Sleep(time.Duration(150+shop.rng.IntN(300)) * time.Millisecond)
	}
	for _, claim := range shop.claims {
		if job, _ := e.Shop.FindJob(e.ctx(), claim); job != "" && !shop.final[job] {
			if lines, _ := e.Shop.Lines(e.ctx(), job); len(lines) > 0 {
				if err := e.Shop.SetFinal(e.ctx(), job, true); err != nil {
					t.Fatal(err)
				}
				shop.final[job] = true
			}
		}
	}
	var probs []string
	deadline := time.Now().Add(120 * time.Second)
	for {
		if probs = e.invariants(true); len(probs) == 0 {
			break
		}
		if p.exited() || time.Now().After(deadline) {
			t.Fatalf("no convergence (daemon exited: %v):\n- %s\ndaemon log:\n%s", p.exited(),
				strings.Join(probs, "\n- "), e2eTail(p.out.String(), 30))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// settle stops the daemon (exit 0 expected), clears the faults and checks
// that passes now make no remote write and every invariant holds.
func settle(t *testing.T, e *e2eEnv, p *e2eProc) {
	t.Helper()
	if code := p.stop(30 * time.Second); code != 0 {
		t.Errorf("run after SIGTERM: exit %d\n%s", code, e2eTail(p.out.String(), 20))
	}
	e.Emu.ClearFaults()
	for range 2 {
		if calls := e.mustOnce(); e2eWrites(calls) != 0 {
			t.Errorf("a pass after convergence made remote writes: %s", e2eFmtCalls(calls))
		}
	}
	e.checkInvariants(true, "after the faults")
}

// TestFaultsRemote: about 30% of the remote calls fail — 503, 429 with
// Retry-After, timeouts, dropped connections, garbage bodies, and calls
// that land but lose their answer. Each kind also hits the first calls of
// the accept, quote and status routes once, so that every kind is sure to
// fire on a write.
func TestFaultsRemote(t *testing.T) {
	t.Parallel()
	faultsInModes(t, 15, testFaultsRemote)
}

func testFaultsRemote(t *testing.T, mode string, rounds int) {
	seed := faultsSeed(t)
	e := newE2E(t, e2eOptions{EmuSeed: seed, Mode: mode, RemoteTimeout: 400 * time.Millisecond})
	kinds := []emulator.Fault{
		{Action: emulator.FaultStatus, Status: 503, Probability: 0.08},
		{Action: emulator.FaultStatus, Status: 429, RetryAfter: time.Second, Probability: 0.05},
		{Action: emulator.FaultLatency, Latency: 700 * time.Millisecond, Probability: 0.05}, // past the client's timeout
		{Action: emulator.FaultDrop, Probability: 0.05},
		{Action: emulator.FaultGarbage, Probability: 0.04},
		{Action: emulator.FaultLandThenDrop, Probability: 0.03},
	}
	for _, route := range []string{e2eRouteAccept, e2eRouteQuote, e2eRouteStatus} {
		for _, f := range kinds {
			f.Route, f.Count, f.Probability = route, 1, 0
			e.Emu.AddFault(f)
		}
	}
	for _, f := range kinds {
		f.Route = "*"
		e.Emu.AddFault(f)
	}
	shop := newShopPlayer(e, rand.New(rand.NewPCG(seed, 1)))
	p := e.start("run")
	faultsScenario(t, e, shop, p, rounds, func() {})
	fired := map[string]int{}
	total := 0
	for _, f := range e.Emu.Faults() {
		fired[f.Fault.Action+"/"+strconv.Itoa(f.Fault.Status)] += f.Fired
		total += f.Fired
	}
	calls := 0
	for _, n := range e.Emu.Calls() {
		calls += n
	}
	t.Logf("%d remote calls, %d faults fired: %v", calls, total, fired)
	for _, f := range kinds {
		if k := f.Action + "/" + strconv.Itoa(f.Status); fired[k] == 0 {
			t.Errorf("fault %s never fired: the test did not test it", k)
		}
	}
	settle(t, e, p)
}

// TestFaultsDBKilled kills the daemon's MariaDB sessions (KILL CONNECTION
// of those on the test database, the lock's session included) every few
// hundred milliseconds while it works; 50 ms of latency on every remote
// call and slowed find_job and estimate_state queries keep passes (and
// the reserve transaction) long enough to be hit mid-way.
func TestFaultsDBKilled(t *testing.T) {
	t.Parallel()
	faultsInModes(t, 20, testFaultsDBKilled)
}

func testFaultsDBKilled(t *testing.T, mode string, rounds int) {
	seed := faultsSeed(t)
	e := newE2E(t, e2eOptions{EmuSeed: seed, Mode: mode, SlowSQL: true})
	e.Emu.AddFault(emulator.Fault{Route: "*", Action: emulator.FaultLatency, Latency: 50 * time.Millisecond})
	// The test's own statements (the shop, the checks, the killer) share
	// one connection, which the killer spares.
	pool, err := sql.Open("mysql", e.DB.DSN())
	if err != nil {
		t.Fatal(err)
	}
	pool.SetMaxOpenConns(1)
	pool.SetConnMaxLifetime(0)
	t.Cleanup(func() { pool.Close() })
	e.sql = sqlx.NewDb(pool, "mysql")
	e.Shop = sampleshop.New(pool)
	shop := newShopPlayer(e, rand.New(rand.NewPCG(seed, 2)))
	p := e.start("run")
	e2eWaitFor(t, p, "the daemon to start", func() bool { return strings.Contains(p.out.String(), `"msg":"ready"`) })
	var schema string
	if err := e.sql.Get(&schema, "SELECT DATABASE()"); err != nil {
		t.Fatal(err)
	}
	kills, busy := 0, 0
	// Each round watches the sessions for 300 ms: one running a statement
	// is killed with probability 1/2, an idle one with 1/20.
	faultsScenario(t, e, shop, p, rounds, func() {
		for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			// SHOW PROCESSLIST, not information_schema.PROCESSLIST: polled
			// every 10 ms beside the kills, the latter crashed MariaDB
			// 10.11 twice under a loaded machine (signal 11 in
			// ha_maria::drop_table, freeing the query's temporary table);
			// SHOW sends its rows without one. Unsafe: MariaDB adds a
			// Progress column that MySQL has not.
			var sessions []struct {
				ID      int64          `db:"Id"`
				DB      sql.NullString `db:"db"`
				Command string         `db:"Command"`
				Info    sql.NullString `db:"Info"`
			}
			if err := e.sql.Unsafe().Select(&sessions, "SHOW PROCESSLIST"); err != nil {
				t.Fatal(err)
			}
			for _, v := range sessions {
				if v.DB.String != schema || v.Info.String == "SHOW PROCESSLIST" {
					continue // another database's, or this poll's own
				}
				running := v.Command != "Sleep"
				if (running && shop.rng.IntN(2) != 0) || (!running && shop.rng.IntN(20) != 0) {
					continue
				}
				if _, err := e.sql.Exec("KILL CONNECTION " + strconv.FormatInt(v.ID, 10)); err != nil && !strings.Contains(err.Error(), "Unknown thread") {
					t.Fatal(err)
				}
				kills++
				if running {
					busy++
				}
			}
		}
	})
	t.Logf("killed %d sessions of the daemon (%d of them mid-statement)", kills, busy)
	if kills < 5 {
		t.Errorf("only %d sessions killed: the test did not test much", kills)
	}
	settle(t, e, p)
}

// TestFaultsDBLinksDropped puts a TCP proxy between the daemon and MariaDB
// that drops every link at random moments and refuses new ones for a
// while (a short partition).
func TestFaultsDBLinksDropped(t *testing.T) {
	t.Parallel()
	faultsInModes(t, 20, testFaultsDBLinksDropped)
}

func testFaultsDBLinksDropped(t *testing.T, mode string, rounds int) {
	seed := faultsSeed(t)
	e := newE2E(t, e2eOptions{EmuSeed: seed, Mode: mode})
	e.Emu.AddFault(emulator.Fault{Route: "*", Action: emulator.FaultLatency, Latency: 30 * time.Millisecond})
	px := newDropProxy(t, e.DB.Config().Addr)
	e.opts.DBAddr = px.addr()
	e.writeConfig()
	shop := newShopPlayer(e, rand.New(rand.NewPCG(seed, 3)))
	p := e.start("run")
	e2eWaitFor(t, p, "the daemon to start", func() bool { return strings.Contains(p.out.String(), `"msg":"ready"`) })
	drops, outages := 0, 0
	faultsScenario(t, e, shop, p, rounds, func() {
		// On a loaded machine the daemon may still be reconnecting after
		// the last round's drop: give it a moment, so that a round drops
		// something.
		px.waitLink(2 * time.Second)
		drops += px.dropAll()
		if shop.rng.IntN(4) == 0 {
			outages++
			px.setDown(true)
			time.Sleep(time.Duration(200+shop.rng.IntN(600)) * time.Millisecond)
			px.setDown(false)
		}
	})
	t.Logf("dropped %d links, %d outages", drops, outages)
	if drops < 5 {
		t.Errorf("only %d links dropped: the test did not test much", drops)
	}
	settle(t, e, p)
}

// dropProxy is a TCP proxy that can drop every link and refuse new ones.
type dropProxy struct {
	ln       net.Listener
	upstream string
	mu       gosync.Mutex
	// links maps each client link to its upstream link.
	links map[net.Conn]net.Conn
	down  bool
}

func newDropProxy(t *testing.T, upstream string) *dropProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	px := &dropProxy{ln: ln, upstream: upstream, links: map[net.Conn]net.Conn{}}
	go px.serve()
	t.Cleanup(func() {
		ln.Close()
		px.dropAll()
	})
	return px
}

func (px *dropProxy) addr() string { return px.ln.Addr().String() }

// waitLink waits until a link is open, at most d.
func (px *dropProxy) waitLink(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		px.mu.Lock()
		n := len(px.links)
		px.mu.Unlock()
		if n > 0 {
			return
		}
	}
}

func (px *dropProxy) serve() {
	for {
		c, err := px.ln.Accept()
		if err != nil {
			return
		}
		px.mu.Lock()
		down := px.down
		px.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		u, err := net.DialTimeout("tcp", px.upstream, 5*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		px.mu.Lock()
		px.links[c] = u
		px.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			_, err := io.Copy(dst, src)
			_ = err // a dropped link ends here
			dst.Close()
			src.Close()
			px.mu.Lock()
			delete(px.links, c)
			px.mu.Unlock()
		}
		go pipe(u, c)
		go pipe(c, u)
	}
}

// dropAll closes every link (a reset for both ends) and returns how many
// live ones it dropped. A link counts once, by its client end, which is
// closed first: counting both ends and halving counted a link as nothing
// whenever a woken pipe closed its other end before the loop reached it,
// which on a busy machine it usually did.
func (px *dropProxy) dropAll() int {
	px.mu.Lock()
	defer px.mu.Unlock()
	n := 0
	for c, u := range px.links {
		for _, end := range []net.Conn{c, u} {
			if tc, ok := end.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
		}
		if c.Close() == nil { // not already ended by the daemon
			n++
		}
		_ = u.Close()
		delete(px.links, c)
	}
	return n
}

func (px *dropProxy) setDown(down bool) {
	px.mu.Lock()
	px.down = down
	px.mu.Unlock()
}
