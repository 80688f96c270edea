package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
)

// Crash trials: the real binary (`once`, or `run` on a one-second
// schedule) is SIGKILLed at random moments and right after a remote call
// landed whose answer it never got (the emulator's land_then_hang and
// land_then_drop faults on accept, quote create/update and the status
// change), restarted, with the shop editing lines and finalising estimates
// between restarts; the safety invariants are checked after every kill,
// and after the last restart the system must converge with every
// invariant intact.
//
// QUOTESYNC_CRASH_TRIALS sets the number of trials (default 100, 1000 with
// QUOTESYNC_SOAK=1); QUOTESYNC_CRASH_SEED the first trial's seed (default
// from the clock). Trial i uses seed+i; a failing trial prints the
// command that replays it. The trials are shared between the emulator's
// modes: an even seed runs against the spec mode, an odd one against the
// documented mode (OAuth2 tokens, 400 to a re-sent accept, plain-text
// errors).

// e2eCrashWorkers is how many trials run at once, each on its own database
// and emulator.
const e2eCrashWorkers = 8

// crashStats counts what the trials did.
type crashStats struct {
	trials, steps, passes int
	modes                 map[string]int // trials by emulator mode
	hangKills             map[string]int // SIGKILL right after a landed call, by route
	drops                 map[string]int // land_then_drop faults fired, by route
	randomKills, stops    int
}

func (s *crashStats) add(o crashStats) {
	s.trials += o.trials
	s.steps += o.steps
	s.passes += o.passes
	s.randomKills += o.randomKills
	s.stops += o.stops
	for k, v := range o.modes {
		s.modes[k] += v
	}
	for k, v := range o.hangKills {
		s.hangKills[k] += v
	}
	for k, v := range o.drops {
		s.drops[k] += v
	}
}

func newCrashStats() crashStats {
	return crashStats{hangKills: map[string]int{}, drops: map[string]int{}, modes: map[string]int{}}
}

// e2eEnvInt reads an integer from the environment, def when unset.
func e2eEnvInt(t *testing.T, name string, def int64) int64 {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: want an integer", name, v)
	}
	return n
}

func TestCrashTrials(t *testing.T) {
	t.Parallel()
	trials := int64(100)
	if os.Getenv("QUOTESYNC_SOAK") == "1" {
		trials = 1000
	}
	trials = e2eEnvInt(t, "QUOTESYNC_CRASH_TRIALS", trials)
	base := uint64(e2eEnvInt(t, "QUOTESYNC_CRASH_SEED", time.Now().UnixNano()%1_000_000_000))
	t.Logf("crash trials: %d, seeds %d..%d", trials, base, base+uint64(trials)-1)
	quotesyncBinary(t) // build once, before the workers start

	start := time.Now()
	total := newCrashStats()
	var mu gosync.Mutex
	e2eRunTrials(t, trials, base, func(t *testing.T, seed uint64) {
		st := runCrashTrial(t, seed)
		mu.Lock()
		total.add(st)
		mu.Unlock()
	})
	t.Logf("crash trials: %d trials %v, %d restarts, %d converging passes in %s; SIGKILL right after a landed call: %v; "+
		"land_then_drop fired: %v; SIGKILL at a random moment: %d; SIGTERM: %d",
		total.trials, total.modes, total.steps, total.passes, time.Since(start).Round(time.Second),
		total.hangKills, total.drops, total.randomKills, total.stops)
	if total.trials != int(trials) {
		t.Errorf("%d trials ran, want %d", total.trials, trials)
	}
}

// e2eRunTrials runs trial for seeds base to base+trials-1, each a subtest,
// e2eCrashWorkers at once; it returns when all have ended.
func e2eRunTrials(t *testing.T, trials int64, base uint64, trial func(t *testing.T, seed uint64)) {
	seeds := make(chan uint64)
	var wg gosync.WaitGroup
	for range min(int(trials), e2eCrashWorkers) {
		wg.Go(func() {
			for seed := range seeds {
				t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { trial(t, seed) })
			}
		})
	}
	for i := range uint64(trials) {
		seeds <- base + i
	}
	close(seeds)
	wg.Wait()
}

// crashTrial is the state of one trial.
type crashTrial struct {
	t *testing.T
	*e2eShopPlayer
	seed   uint64
	routes []string // the write routes this configuration uses
	st     crashStats
}

// runCrashTrial runs one randomized trial and returns what it did.
func runCrashTrial(t *testing.T, seed uint64) crashStats {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	opts := e2eOptions{EmuSeed: seed, Concurrency: 1 + rng.IntN(4), Mode: e2eModes[seed%2]}
	routes := []string{e2eRouteAccept, e2eRouteQuote, e2eRouteStatus}
	if rng.IntN(2) == 0 {
		opts.DraftUpdate = "put"
		routes = append(routes, e2eRoutePut)
	}
	c := &crashTrial{t: t, e2eShopPlayer: newShopPlayer(newE2E(t, opts), rng), seed: seed, routes: routes, st: newCrashStats()}
	c.st.trials = 1
	c.st.modes[opts.Mode]++
	for range 1 + rng.IntN(3) {
		c.newRequest()
	}
	for step := range 3 + rng.IntN(4) {
		c.crashStep()
		c.e.checkInvariants(false, c.replay(fmt.Sprintf("after restart %d", step+1)))
		c.playShop(0.5)
		if rng.IntN(2) == 0 {
			c.newRequest()
		}
	}
	c.e.Emu.ClearFaults()
	c.playShop(1)
	passes, probs := c.e.converge(30)
	c.st.passes += passes
	if len(probs) > 0 {
		t.Errorf("%s: no convergence after %d passes:\n- %s", c.replay("converge"), passes, strings.Join(probs, "\n- "))
	}
	c.e.checkInvariants(true, c.replay("converged"))
	if t.Failed() {
		t.Logf("emulator history: %s", e2eHistory(c.e.Emu.State()))
	}
	return c.st
}

// faultRoute picks the route of this step's fault, favouring the calls
// the next pass has to make: the accept while requests are pending, the
// status change while a final estimate is not yet Submitted.
func (c *crashTrial) faultRoute() string {
	switch {
	case c.pendingLeft() && c.rng.IntN(5) < 2:
		return e2eRouteAccept
	case c.finalLeft() && c.rng.IntN(2) == 0:
		return e2eRouteStatus
	}
	return c.routes[c.rng.IntN(len(c.routes))]
}

// replay names the step and how to run this trial alone.
func (c *crashTrial) replay(step string) string {
	return fmt.Sprintf("trial seed %d (%s mode), %s (replay: QUOTESYNC_CRASH_SEED=%d QUOTESYNC_CRASH_TRIALS=1 go test -run TestCrashTrials ./cmd/quotesync/)",
		c.seed, c.e.opts.Mode, step, c.seed)
}

// crashStep starts the binary once (`once` or `run`) with at most one
// "timed out but landed" fault armed, and ends it: SIGKILL right after the
// fault's call landed, SIGKILL at a random moment, SIGTERM, or its own end.
func (c *crashTrial) crashStep() {
	e, rng := c.e, c.rng
	e.Emu.ClearFaults()
	c.st.steps++
	var hangRoute, dropRoute string
	switch k := rng.IntN(10); {
	case k < 5:
		hangRoute = c.faultRoute()
		e.Emu.AddFault(emulator.Fault{Route: hangRoute, Action: emulator.FaultLandThenHang, Count: 1})
	case k < 8:
		dropRoute = c.faultRoute()
		e.Emu.AddFault(emulator.Fault{Route: dropRoute, Action: emulator.FaultLandThenDrop, Count: 1})
	}
	mode := "once"
	if rng.IntN(2) == 0 {
		mode = "run"
	}
	p := e.start(mode)
	switch {
	case hangRoute != "":
		// Kill once the call has landed (the emulator holds the answer),
		// or give up waiting when this pass has no such call to make.
		limit := time.Now().Add(3 * time.Second)
		for !c.fired() && !p.exited() && time.Now().Before(limit) {
			time.Sleep(2 * time.Millisecond)
		}
		if c.fired() {
			time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
			if !p.exited() {
				c.st.hangKills[hangRoute]++
			}
		}
		p.kill()
	default:
		maxDelay := 300
		if mode == "run" {
			maxDelay = 1500
		}
		delay := time.Duration(rng.IntN(maxDelay)) * time.Millisecond
		if p.wait(delay) {
			break
		}
		// SIGTERM a daemon that is up (a SIGTERM during its start-up
		// migration is a clean stop too, exit 0, but runs no pass).
		if mode == "run" && rng.IntN(4) == 0 && strings.Contains(p.out.String(), `"msg":"ready"`) {
			c.st.stops++
			if code := p.stop(30 * time.Second); code != 0 {
				c.t.Errorf("%s: run after SIGTERM: exit %d\n%s", c.replay("stop"), code, e2eTail(p.out.String(), 10))
			}
			break
		}
		c.st.randomKills++
		p.kill()
	}
	if dropRoute != "" && c.fired() {
		c.st.drops[dropRoute]++
	}
}

// fired reports whether the armed fault has fired.
func (c *crashTrial) fired() bool {
	for _, f := range c.e.Emu.Faults() {
		if f.Fired > 0 {
			return true
		}
	}
	return false
}

// e2eShopPlayer plays the insurer (new requests) and the shop (jobs,
// lines, final estimates) at random. Once final, an estimate is never
// touched again.
type e2eShopPlayer struct {
	e      *e2eEnv
	rng    *rand.Rand
	claims []string
	final  map[string]bool // jobs the shop has finalised
}

func newShopPlayer(e *e2eEnv, rng *rand.Rand) *e2eShopPlayer {
	return &e2eShopPlayer{e: e, rng: rng, final: map[string]bool{}}
}

// newRequest seeds one more pending request; the shop has its job with
// lines, its job without lines, or no job (create_job makes it).
func (c *e2eShopPlayer) newRequest() {
	i := len(c.claims)
	claim := fmt.Sprintf("CLM-%d", 7000+i)
	c.prepareJob(claim)
	c.e.seed(claim, fmt.Sprintf("REG%03d", i))
}

// prepareJob gives the shop, at random, claim's job with lines, its job
// without lines, or no job (create_job makes it), and plays claim from
// now on.
func (c *e2eShopPlayer) prepareJob(claim string) {
	switch c.rng.IntN(3) {
	case 0:
		job := c.e.createJob(claim)
		for range 1 + c.rng.IntN(3) {
			c.e.addLine(job, c.rng.IntN(1000))
		}
	case 1:
		c.e.createJob(claim)
	}
	c.claims = append(c.claims, claim)
}

// pendingLeft reports whether some request is still pending on the remote.
func (c *e2eShopPlayer) pendingLeft() bool {
	for _, r := range c.e.Emu.State().Requests {
		if r.Status == emulator.RequestPending {
			return true
		}
	}
	return false
}

// finalLeft reports whether a job the shop finalised is not yet
// Submitted on the remote.
func (c *e2eShopPlayer) finalLeft() bool {
	st := c.e.Emu.State()
	for job := range c.final {
		rj, _ := st.Job(job)
		if q, _ := rj.Quote("Estimate"); q.Status != emulator.StatusSubmitted {
			return true
		}
	}
	return false
}

// playShop lets the shop work on each job with probability p: add, edit
// or soft-delete a line, or mark the estimate final (never touched again
// after that; the last live line is never deleted).
func (c *e2eShopPlayer) playShop(p float64) {
	e, rng := c.e, c.rng
	for _, claim := range c.claims {
		job, err := e.Shop.FindJob(e.ctx(), claim)
		if err != nil {
			c.e.tb.Fatal(err)
		}
		if job == "" || c.final[job] || rng.Float64() >= p {
			continue
		}
		lines, err := e.Shop.Lines(e.ctx(), job)
		if err != nil {
			c.e.tb.Fatal(err)
		}
		switch k := rng.IntN(10); {
		case k < 4 || len(lines) == 0:
			e.addLine(job, rng.IntN(1000))
		case k < 6:
			l := lines[rng.IntN(len(lines))]
			n := e2eLine(rng.IntN(1000))
			l.Qty, l.UnitPrice, l.LineTotal, l.Description = n.Qty, n.UnitPrice, n.LineTotal, n.Description
			if err := e.Shop.EditLine(e.ctx(), l); err != nil {
				c.e.tb.Fatal(err)
			}
		case k < 7 && len(lines) > 1:
			if err := e.Shop.DeleteLine(e.ctx(), lines[rng.IntN(len(lines))].LineID); err != nil {
				c.e.tb.Fatal(err)
			}
		default:
			if err := e.Shop.SetFinal(e.ctx(), job, true); err != nil {
				c.e.tb.Fatal(err)
			}
			c.final[job] = true
		}
	}
}

// e2eHistory lists the emulator's history, one change a line.
func e2eHistory(st emulator.State) string {
	s := ""
	for _, h := range st.History {
		s += fmt.Sprintf("\n  #%d %s %s request %s job %s %s", h.Seq, h.Kind, h.Route, h.RequestID, h.JobID, h.QuoteStatus)
	}
	return s
}

// TestCrashAtEachLandedCall kills the binary right after each kind of
// remote write landed unanswered (land_then_hang, then SIGKILL), or lets
// it see the dropped answer (land_then_drop), and checks that the next
// passes repair it without doing anything twice.
func TestCrashAtEachLandedCall(t *testing.T) {
	type prep func(e *e2eEnv, job string)
	lines := func(e *e2eEnv, job string) { e.addLine(job, 1); e.addLine(job, 2) }
	drafted := func(e *e2eEnv, job string) { lines(e, job); e.mustOnce() }
	cases := []struct {
		name, route, draftUpdate string
		before, after            prep // shop state before the first pass; the change the faulty pass works on
		wantKinds                []string
	}{
		{"Accept", e2eRouteAccept, "", lines, nil,
			[]string{emulator.HistoryAccept, emulator.HistoryQuoteCreate}},
		{"CreateQuote", e2eRouteQuote, "", nil, lines,
			[]string{emulator.HistoryAccept, emulator.HistoryQuoteCreate, emulator.HistoryQuoteReplace}},
		{"RepostDraft", e2eRouteQuote, "", drafted, func(e *e2eEnv, job string) { e.addLine(job, 3) },
			[]string{emulator.HistoryAccept, emulator.HistoryQuoteCreate, emulator.HistoryQuoteReplace, emulator.HistoryQuoteReplace}},
		{"PutDraft", e2eRoutePut, "put", drafted, func(e *e2eEnv, job string) { e.addLine(job, 3) },
			[]string{emulator.HistoryAccept, emulator.HistoryQuoteCreate, emulator.HistoryQuoteUpdate, emulator.HistoryQuoteUpdate}},
		{"Submit", e2eRouteStatus, "", drafted, func(e *e2eEnv, job string) {
			if err := e.Shop.SetFinal(e.ctx(), job, true); err != nil {
				e.tb.Fatal(err)
			}
		}, []string{emulator.HistoryAccept, emulator.HistoryQuoteCreate, emulator.HistoryStatusChange}},
	}
	for _, tc := range cases {
		for _, run := range e2eModeActions() {
			action := run.action
			t.Run(tc.name+"/"+run.mode+"/"+action, func(t *testing.T) {
				t.Parallel()
				e := newE2E(t, e2eOptions{DraftUpdate: tc.draftUpdate, Mode: run.mode})
				job := e.createJob("CLM-LAND")
				e.seed("CLM-LAND", "")
				if tc.before != nil {
					tc.before(e, job)
				}
				// tc is shared by the parallel subtests of every mode and
				// action: read it, never write it.
				if tc.after != nil {
					if tc.before == nil {
						e.mustOnce() // accepted, no lines yet
					}
					tc.after(e, job)
				}
				e.Emu.AddFault(emulator.Fault{Route: tc.route, Action: action, Count: 1})
				p := e.start("once")
				for e.Emu.Faults()[0].Fired == 0 && !p.exited() {
					time.Sleep(2 * time.Millisecond)
				}
				if action == emulator.FaultLandThenHang {
					p.kill()
				} else if !p.wait(60 * time.Second) {
					t.Fatal("once did not end")
				}
				if e.Emu.Faults()[0].Fired != 1 {
					t.Fatalf("the fault on %s did not fire:\n%s", tc.route, p.out.String())
				}
				e.checkInvariants(false, "right after the landed call")
				if _, probs := e.converge(10); len(probs) > 0 {
					t.Fatalf("no convergence:\n- %s", strings.Join(probs, "\n- "))
				}
				var kinds []string
				for _, h := range e.Emu.State().History {
					kinds = append(kinds, h.Kind)
				}
				// A repaired push may be sent once more (it replaces the
				// Draft with the same content); an accept or a submit never.
				if want := tc.wantKinds; !e2eHistoryMatches(kinds, want) {
					t.Errorf("history %v, want %v (a repeated Draft write allowed)", kinds, want)
				}
			})
		}
	}
}

// e2eModeActions pairs each emulator mode with each "landed" fault.
func e2eModeActions() []struct{ mode, action string } {
	var out []struct{ mode, action string }
	for _, mode := range e2eModes {
		for _, action := range []string{emulator.FaultLandThenHang, emulator.FaultLandThenDrop} {
			out = append(out, struct{ mode, action string }{mode, action})
		}
	}
	return out
}

// e2eHistoryMatches reports whether got is want, allowing a quote write of
// want to repeat (a Draft push whose answer was lost is re-sent).
func e2eHistoryMatches(got, want []string) bool {
	i := 0
	for _, k := range got {
		switch {
		case i < len(want) && k == want[i]:
			i++
		case i > 0 && k == want[i-1] && k != emulator.HistoryAccept && k != emulator.HistoryStatusChange:
		case i > 0 && want[i-1] == emulator.HistoryQuoteCreate && k == emulator.HistoryQuoteReplace:
		default:
			return false
		}
	}
	return i == len(want)
}

// TestDraftLandedThenShopReverted: a Draft push lands on the remote but
// its answer is lost (the daemon is SIGKILLed, or the client gives up
// after its attempts), then the shop takes the change back (deletes the
// line it had just added, or every line). The remote now holds lines the
// shop no longer has; the next passes must put the shop's lines back.
func TestDraftLandedThenShopReverted(t *testing.T) {
	cases := []struct {
		name     string
		drafted  bool   // the job had an acknowledged Draft before
		action   string // the fault on the push
		attempts int    // remote.max_attempts
	}{
		{"FirstDraftKilled", false, emulator.FaultLandThenHang, 4},
		{"RedraftKilled", true, emulator.FaultLandThenHang, 4},
		{"RedraftAnswerLost", true, emulator.FaultLandThenDrop, 1},
	}
	for i, tc := range cases {
		mode := e2eModes[i%2] // the cases are shared between the modes
		t.Run(tc.name+"/"+mode, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t, e2eOptions{MaxAttempts: tc.attempts, Mode: mode})
			job := e.createJob("CLM-REVERT")
			e.seed("CLM-REVERT", "")
			if tc.drafted {
				e.addLine(job, 1)
			}
			e.mustOnce() // accepted (and drafted when it has a line)
			added := e.addLine(job, 2)
			e.Emu.AddFault(emulator.Fault{Route: e2eRouteQuote, Action: tc.action, Count: 1})
			p := e.start("once")
			for e.Emu.Faults()[0].Fired == 0 && !p.exited() {
				time.Sleep(2 * time.Millisecond)
			}
			p.kill()
			if e.Emu.Faults()[0].Fired != 1 {
				t.Fatalf("the push did not land:\n%s", p.out.String())
			}
			if err := e.Shop.DeleteLine(e.ctx(), added.LineID); err != nil {
				t.Fatal(err)
			}
			if _, probs := e.converge(5); len(probs) > 0 {
				t.Errorf("after the repair passes:\n- %s", strings.Join(probs, "\n- "))
			}
		})
	}
}
