package main

import (
	"database/sql"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/quotesync/quotesync/remote/emulator"
)

// Crash trials of two insurers: the real binary, configured with remotes:
// aa (an emulator in the spec mode) and bb (one in the documented mode:
// OAuth2 tokens, 400 to a re-sent accept), is SIGKILLed at random moments
// and right after a remote call landed unanswered at either service,
// restarted, with new requests arriving at both services (some under the
// same id at both, for different claims) and the shop editing lines
// between restarts. The safety invariants are checked after every kill,
// per insurer and across them; at the end the shop finalises every
// estimate and the passes must bring every request of both services to
// Submitted, each colliding id tracked twice, with two different jobs.
//
// QUOTESYNC_CRASH_INSURERS_TRIALS sets the number of trials (default 3
// of 4 restarts each, 40 of 8 with QUOTESYNC_SOAK=1); QUOTESYNC_CRASH_SEED
// the first trial's seed (default from the clock). Trial i uses seed+i; a
// failing trial prints the command that replays it.

// crashInsurers are the trials' insurers: aa's emulator is the
// environment's own.
var crashInsurers = []string{"aa", "bb"}

// insurerCrashStats counts what the trials did: hangKills by insurer
// and route.
type insurerCrashStats struct {
	crashStats
	colliding int
}

func (s *insurerCrashStats) add(o insurerCrashStats) {
	s.crashStats.add(o.crashStats)
	s.colliding += o.colliding
}

func TestCrashTrialsInsurers(t *testing.T) {
	t.Parallel()
	trials, steps := int64(3), 4
	if os.Getenv("QUOTESYNC_SOAK") == "1" {
		trials, steps = 40, 8
	}
	trials = e2eEnvInt(t, "QUOTESYNC_CRASH_INSURERS_TRIALS", trials)
	base := uint64(e2eEnvInt(t, "QUOTESYNC_CRASH_SEED", time.Now().UnixNano()%1_000_000_000))
	t.Logf("crash trials of two insurers: %d, seeds %d..%d", trials, base, base+uint64(trials)-1)
	quotesyncBinary(t) // build once, before the workers start

	start := time.Now()
	total := insurerCrashStats{crashStats: newCrashStats()}
	var mu gosync.Mutex
	e2eRunTrials(t, trials, base, func(t *testing.T, seed uint64) {
		st := runInsurerCrashTrial(t, seed, steps)
		mu.Lock()
		total.add(st)
		mu.Unlock()
	})
	t.Logf("crash trials of two insurers: %d trials, %d restarts, %d colliding ids, %d converging passes in %s; "+
		"SIGKILL right after a landed call: %v; SIGKILL at a random moment: %d",
		total.trials, total.steps, total.colliding, total.passes, time.Since(start).Round(time.Second),
		total.hangKills, total.randomKills)
	if total.trials != int(trials) {
		t.Errorf("%d trials ran, want %d", total.trials, trials)
	}
}

// insurerCrashTrial is the state of one trial.
type insurerCrashTrial struct {
	t    *testing.T
	e    *e2eEnv
	play *e2eShopPlayer // the shop, over every claim of both insurers
	rng  *rand.Rand
	seed uint64
	emu  map[string]*emulator.Emulator
	// seeded are the requests each service was given: id → claim.
	seeded    map[string]map[string]string
	colliding []string // ids seeded at both services
	next      int
	st        insurerCrashStats
}

// runInsurerCrashTrial runs one randomized trial of steps restarts and
// returns what it did.
func runInsurerCrashTrial(t *testing.T, seed uint64, steps int) insurerCrashStats {
	rng := rand.New(rand.NewPCG(seed, 0x2545f4914f6cdd1d))
	e := newE2E(t, e2eOptions{EmuSeed: seed, Concurrency: 1 + rng.IntN(4)})
	bb, bbSrv := mustEmulator(t, emulator.Options{Token: e2eToken, Seed: seed, Mode: emulator.ModeDocumented,
		ClientID: e2eClientID, TokenTTL: time.Minute})
	writeInsurersConfig(t, e.Conf, bbSrv.URL)
	c := &insurerCrashTrial{t: t, e: e, play: newShopPlayer(e, rng), rng: rng, seed: seed,
		emu:    map[string]*emulator.Emulator{"aa": e.Emu, "bb": bb},
		seeded: map[string]map[string]string{"aa": {}, "bb": {}},
		st:     insurerCrashStats{crashStats: newCrashStats()}}
	c.st.trials = 1
	c.newRequest("both")
	c.newRequest("both")
	c.newRequest("aa")
	c.newRequest("bb")
	for step := range steps {
		c.crashStep()
		c.check(false, fmt.Sprintf("after restart %d", step+1))
		c.play.playShop(0.5)
		if rng.IntN(2) == 0 {
			c.newRequest([]string{"aa", "bb", "both"}[rng.IntN(3)])
		}
	}
	for _, emu := range c.emu {
		emu.ClearFaults()
	}
	passes, probs := c.converge(40)
	c.st.passes += passes
	if len(probs) > 0 {
		t.Errorf("%s: no convergence after %d passes:\n- %s", c.replay("converge"), passes, strings.Join(probs, "\n- "))
	}
	c.check(true, "converged")
	if t.Failed() {
		for _, ins := range crashInsurers {
			t.Logf("%s's history: %s", ins, e2eHistory(c.emu[ins].State()))
		}
	}
	c.st.colliding = len(c.colliding)
	return c.st
}

// writeInsurersConfig turns the environment's remote: section into
// remotes: aa (the section as it was: the spec-mode emulator, a static
// token) and bb (the documented-mode emulator at bbURL, OAuth2 client
// credentials).
func writeInsurersConfig(t *testing.T, conf, bbURL string) {
	t.Helper()
	data, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	rem, ok := doc["remote"].(map[string]any)
	if !ok {
		t.Fatalf("%s has no remote: section", conf)
	}
	delete(doc, "remote")
	aa, bb := maps.Clone(rem), maps.Clone(rem)
	aa["name"], bb["name"] = "aa", "bb"
	bb["base_url"] = bbURL
	bb["token"] = map[string]any{"oauth2": map[string]any{"token_url": bbURL + emulator.TokenPath,
		"client_id": e2eClientID, "client_secret_env": e2eTokenEnv,
		"endpoint_params": map[string]string{"redirect_uri": e2eRedirectURI}}}
	doc["remotes"] = []any{aa, bb}
	if data, err = yaml.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// newRequest seeds one more pending request at insurer ("aa" or "bb"),
// or under one id at both ("both"), each for its own claim; the shop has
// each claim's job with lines, its job without lines, or no job
// (create_job makes it).
func (c *insurerCrashTrial) newRequest(at string) {
	c.next++
	var id string
	switch at {
	case "aa":
		id = fmt.Sprint(1000 + c.next)
	case "bb":
		id = fmt.Sprint(5000 + c.next)
	default:
		id = fmt.Sprint(9000 + c.next)
		c.colliding = append(c.colliding, id)
	}
	for _, ins := range crashInsurers {
		if at != ins && at != "both" {
			continue
		}
		claim := fmt.Sprintf("CLM-%s-%d", strings.ToUpper(ins), c.next)
		c.play.prepareJob(claim)
		c.emu[ins].AddRequests(emulator.SeedRequest{ID: id, ClaimNumber: claim,
			Vehicle: []byte(fmt.Sprintf(`{"registration":"REG%03d","make":"Toyota"}`, c.next))})
		c.seeded[ins][id] = claim
	}
}

// replay names the step and how to run this trial alone.
func (c *insurerCrashTrial) replay(step string) string {
	return fmt.Sprintf("trial seed %d, %s (replay: QUOTESYNC_CRASH_SEED=%d QUOTESYNC_CRASH_INSURERS_TRIALS=1 go test -run TestCrashTrialsInsurers ./cmd/quotesync/)",
		c.seed, step, c.seed)
}

// crashStep starts the binary once (`once`, or `run` on its one-second
// schedule) and SIGKILLs it: right after the call a land_then_hang fault
// let land at one insurer's service, or at a random moment (or it ends on
// its own first).
func (c *insurerCrashTrial) crashStep() {
	rng := c.rng
	for _, emu := range c.emu {
		emu.ClearFaults()
	}
	c.st.steps++
	var hang, route string
	if rng.IntN(2) == 0 {
		hang = crashInsurers[rng.IntN(len(crashInsurers))]
		route = []string{e2eRouteAccept, e2eRouteAccept, e2eRouteQuote, e2eRouteStatus}[rng.IntN(4)]
		c.emu[hang].AddFault(emulator.Fault{Route: route, Action: emulator.FaultLandThenHang, Count: 1})
	}
	mode := "once"
	if rng.IntN(2) == 0 {
		mode = "run"
	}
	p := c.e.start(mode)
	if hang != "" {
		// Kill once the call has landed, or give up waiting when this
		// pass has no such call to make.
		limit := time.Now().Add(3 * time.Second)
		for !c.fired(hang) && !p.exited() && time.Now().Before(limit) {
			time.Sleep(2 * time.Millisecond)
		}
		if c.fired(hang) {
			time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
			if !p.exited() {
				c.st.hangKills[hang+" "+route]++
			}
		}
		p.kill()
		return
	}
	maxDelay := 300
	if mode == "run" {
		maxDelay = 1500
	}
	if !p.wait(time.Duration(rng.IntN(maxDelay)) * time.Millisecond) {
		c.st.randomKills++
	}
	p.kill()
}

// fired reports whether the fault armed at insurer's service has fired.
func (c *insurerCrashTrial) fired(insurer string) bool {
	for _, f := range c.emu[insurer].Faults() {
		if f.Fired > 0 {
			return true
		}
	}
	return false
}

// finaliseAll plays the shop's last act: every job not yet final gets a
// line when it has none, and its estimate is marked final.
func (c *insurerCrashTrial) finaliseAll() {
	e := c.e
	for _, claim := range c.play.claims {
		job, err := e.Shop.FindJob(e.ctx(), claim)
		if err != nil {
			c.t.Fatal(err)
		}
		if job == "" || c.play.final[job] {
			continue
		}
		lines, err := e.Shop.Lines(e.ctx(), job)
		if err != nil {
			c.t.Fatal(err)
		}
		if len(lines) == 0 {
			e.addLine(job, c.rng.IntN(1000))
		}
		if err := e.Shop.SetFinal(e.ctx(), job, true); err != nil {
			c.t.Fatal(err)
		}
		c.play.final[job] = true
	}
}

// converge runs passes of `once`, the shop finalising every estimate
// after each, until one makes no remote write at either service and the
// converged invariants hold; it returns the passes it ran and what is
// still broken after maxPasses.
func (c *insurerCrashTrial) converge(maxPasses int) (int, []string) {
	return e2eConverge(maxPasses, func() (e2eResult, int) {
		before := map[string]map[string]int{}
		for ins, emu := range c.emu {
			before[ins] = emu.Calls()
		}
		res := c.e.once()
		writes := 0
		for ins, emu := range c.emu {
			writes += e2eWrites(e2eCallsDiff(before[ins], emu.Calls()))
		}
		c.finaliseAll()
		return res, writes
	}, func() []string { return c.invariants(true) })
}

// check fails the test with every broken invariant.
func (c *insurerCrashTrial) check(converged bool, step string) {
	c.t.Helper()
	if probs := c.invariants(converged); len(probs) > 0 {
		c.t.Errorf("%s: %d invariants broken:\n- %s", c.replay(step), len(probs), strings.Join(probs, "\n- "))
	}
}

// insurerRows reads quotesync's state rows by insurer and request id.
func (c *insurerCrashTrial) insurerRows(q e2eQuerier) (map[string]map[string]e2eRow, error) {
	out := map[string]map[string]e2eRow{}
	rows, err := q.QueryContext(c.e.ctx(), `SELECT insurer, request_id, claim_number, COALESCE(job_number, ''), phase,
  COALESCE(last_error, ''), attempts, supplement_needed FROM quotesync_requests`)
	if err != nil {
		none, err := c.e.noStateYet(q, err)
		if none {
			return out, nil
		}
		return nil, fmt.Errorf("read quotesync's state: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var ins string
		var r e2eRow
		if err := rows.Scan(&ins, &r.Request, &r.Claim, &r.Job, &r.Phase, &r.LastError, &r.Attempts, &r.Supplement); err != nil {
			return nil, fmt.Errorf("read quotesync's state: %w", err)
		}
		if out[ins] == nil {
			out[ins] = map[string]e2eRow{}
		}
		out[ins][r.Request] = r
	}
	return out, rows.Err()
}

// snapshot reads the shop's jobs and quotesync's rows in one read-only
// snapshot (see e2eEnv.snapshot), retrying while a table was created or
// changed after the snapshot began (a killed binary's migration can still
// run on the server).
func (c *insurerCrashTrial) snapshot() (jobs map[string]*e2eShopJob, rows map[string]map[string]e2eRow, err error) {
	err = e2eRetrySnapshot(func() error {
		tx, err := c.e.sql.BeginTx(c.e.ctx(), &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
		if err != nil {
			return fmt.Errorf("begin the snapshot read: %w", err)
		}
		defer func() { _ = tx.Rollback() }()
		if jobs, err = c.e.shopJobs(tx); err != nil {
			return err
		}
		rows, err = c.insurerRows(tx)
		return err
	})
	return jobs, rows, err
}

// invariants returns every broken invariant, each a sentence. At every
// moment, per insurer: no request accepted twice at its service, and
// only requests seeded there; a request accepted at its service has its
// insurer's state row holding the job it was accepted with, the shop's
// job of its claim; no quote submitted twice; a Submitted quote holds the
// shop's final lines; a submitted row has a Submitted quote. Across
// insurers: no shop job accepted for two requests (at either service) nor
// held by two state rows; a colliding id's two rows never share a job.
// With converged: every request of both services accepted and Submitted,
// its row submitted without error, and each colliding id tracked by both
// insurers with two different jobs.
func (c *insurerCrashTrial) invariants(converged bool) []string {
	// The services first, then the shop and quotesync's state in one
	// snapshot: whatever a service holds was committed locally before it
	// was sent (see e2eEnv.invariants).
	states := map[string]emulator.State{}
	for _, ins := range crashInsurers {
		states[ins] = c.emu[ins].State()
	}
	jobs, rows, err := c.snapshot()
	if err != nil {
		return []string{err.Error()}
	}
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }

	accepted := map[string]string{} // job → insurer/request accepted with it, at either service
	for _, ins := range crashInsurers {
		st, own := states[ins], rows[ins]
		accepts, submits := e2eHistoryCounts(st)
		for _, id := range slices.Sorted(maps.Keys(accepts)) {
			if n := accepts[id]; n > 1 {
				bad("%s: request %s accepted %d times", ins, id, n)
			}
			if _, ours := c.seeded[ins][id]; !ours {
				bad("%s: request %s accepted at its service, which was never given it", ins, id)
			}
		}
		for _, job := range slices.Sorted(maps.Keys(submits)) {
			if n := submits[job]; n > 1 {
				bad("%s: quote of job %s submitted %d times", ins, job, n)
			}
		}
		for _, r := range st.Requests {
			if r.ReferenceID == "" {
				if converged {
					bad("%s: request %s (claim %s) is still %s at its service", ins, r.ID, r.ClaimNumber, r.Status)
				}
				continue
			}
			if other, dup := accepted[r.ReferenceID]; dup {
				bad("job %s accepted for %s and %s/%s", r.ReferenceID, other, ins, r.ID)
			}
			accepted[r.ReferenceID] = ins + "/" + r.ID
			if j := jobs[r.ReferenceID]; j == nil || j.Claim != r.ClaimNumber {
				bad("%s: request %s (claim %s) accepted with %s, which is not the shop's job of that claim", ins, r.ID, r.ClaimNumber, r.ReferenceID)
			}
			switch row, tracked := own[r.ID]; {
			case !tracked:
				bad("%s: request %s accepted at its service with %s but quotesync has no row of %s for it", ins, r.ID, r.ReferenceID, ins)
			case row.Job != r.ReferenceID:
				bad("%s: request %s accepted with %s but %s's row has job %q", ins, r.ID, r.ReferenceID, ins, row.Job)
			}
		}
		for _, rj := range st.Jobs {
			q, hasQuote := rj.Quote("Estimate")
			row := own[rj.RequestID]
			j := jobs[rj.ID]
			if j == nil {
				continue // reported above
			}
			if q.SubmitCount > 1 {
				bad("%s: quote of job %s has SubmitCount %d", ins, rj.ID, q.SubmitCount)
			}
			submitted := hasQuote && q.Status == emulator.StatusSubmitted
			if submitted && !row.Supplement {
				if !j.Final {
					bad("%s: job %s is Submitted but its estimate is not final in the shop", ins, rj.ID)
				}
				if d := e2eBodyDiff(q.Body, j); d != "" {
					bad("%s: job %s was submitted with content other than the shop's final lines (-shop +remote):\n%s", ins, rj.ID, d)
				}
			}
			if row.Phase == "submitted" && !submitted {
				bad("%s: row %s is submitted but the quote of job %s is not Submitted", ins, row.Request, rj.ID)
			}
			if converged && (!submitted || row.Phase != "submitted" || row.Attempts != 0 || row.LastError != "") {
				bad("%s: request %s (job %s): Submitted at its service %v, phase %s, %d failed attempts %s; want Submitted and submitted",
					ins, rj.RequestID, rj.ID, submitted, row.Phase, row.Attempts, row.LastError)
			}
		}
	}

	held := map[string]string{} // job → insurer/request whose row holds it
	for _, ins := range slices.Sorted(maps.Keys(rows)) {
		for _, id := range slices.Sorted(maps.Keys(rows[ins])) {
			row := rows[ins][id]
			if row.Job == "" {
				continue
			}
			if other, dup := held[row.Job]; dup {
				bad("job %s is held by the rows of %s and %s/%s", row.Job, other, ins, id)
			}
			held[row.Job] = ins + "/" + id
			if j := jobs[row.Job]; j == nil || j.Claim != row.Claim {
				bad("%s: row %s (claim %s) holds job %s, which is not the shop's job of that claim", ins, id, row.Claim, row.Job)
			}
		}
	}
	for _, id := range c.colliding {
		a, aok := rows["aa"][id]
		b, bok := rows["bb"][id]
		switch {
		case converged && (!aok || !bok || a.Job == "" || b.Job == ""):
			bad("request %s of both insurers: aa's row %v with job %q, bb's row %v with job %q; want both, each with its job", id, aok, a.Job, bok, b.Job)
		case aok && bok && a.Job != "" && a.Job == b.Job:
			bad("request %s: aa's and bb's rows share job %s", id, a.Job)
		case aok && bok && a.Claim == b.Claim:
			bad("request %s: aa's and bb's rows have one claim %s; want each its own", id, a.Claim)
		}
	}
	if converged {
		for _, ins := range crashInsurers {
			for _, id := range slices.Sorted(maps.Keys(c.seeded[ins])) {
				if row, ok := rows[ins][id]; !ok || row.Phase != "submitted" {
					bad("%s: request %s is %q in quotesync's state, want submitted", ins, id, row.Phase)
				}
			}
		}
	}
	return probs
}
