package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	qsync "github.com/quotesync/quotesync/sync"
)

// DefaultTimeout bounds the demo: what has not converged by then is
// reported, and the demo exits 1.
const DefaultTimeout = 60 * time.Second

// verifyTimeout bounds the final read-back of every side.
const verifyTimeout = 15 * time.Second

// demoOptions configures runDemo.
type demoOptions struct {
	timeout   time.Duration
	verbose   bool   // the daemon's JSON log lines to stderr too
	mysqlAddr string // listen address of the embedded server
	schedule  string
	pageAddr  string        // listen address of the status page ("": DefaultPageAddr)
	serve     time.Duration // keep serving the status page this long after the run
}

// runDemo runs the whole demo and returns the exit code: 0 when every
// request reached Submitted on the remote with exactly the shop's final
// lines, 1 otherwise.
func runDemo(ctx context.Context, o demoOptions, stdout, stderr io.Writer) int {
	start := time.Now()
	tl := newTimeline(stdout, start)
	log := newDemoLogger(o.verbose, stderr)
	defer func() { _ = log.Sync() }()

	fmt.Fprintln(stdout, "quotesync demo: the daemon's real code against an embedded MySQL-compatible server")
	fmt.Fprintln(stdout, "holding a sample shop, and an emulator of the insurer's API. Nothing leaves this machine.")
	s, err := startStack(ctx, stackOptions{mysqlAddr: o.mysqlAddr, schedule: o.schedule, log: log,
		observers: []qsync.Observer{tl}})
	if err != nil {
		fmt.Fprintf(stderr, "quotesync-demo: %v\n", err)
		return 1
	}
	defer func() {
		if err := s.Close(); err != nil {
			fmt.Fprintf(stderr, "quotesync-demo: shut down: %v\n", err)
		}
	}()
	ids := seedRequests(s.emu, time.Now())
	printSetup(stdout, s, ids, o.schedule, time.Since(start))
	page, err := startPage(cmp.Or(o.pageAddr, DefaultPageAddr), s.db)
	if err != nil {
		fmt.Fprintf(stderr, "quotesync-demo: %v\n", err)
		return 1
	}
	defer page.linger(ctx, o.serve, stdout) // before the stack closes: the page reads its database
	fmt.Fprintf(stdout, "\nstatus page: %s (what the daemon serves under /status; -serve 2m keeps it up after the run)\n", page.url)

	fmt.Fprintln(stdout, "\ntimeline (quotesync's lines are its own events, reworded; --verbose shows its log lines raw)")
	var passes atomic.Int64
	passed := make(chan struct{}, 1)
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	runDone := make(chan error, 1)
	go func() {
		runDone <- s.daemon.Engine.Run(runCtx, qsync.RunOptions{
			Lock: s.daemon.Lock(),
			OnTick: func(t qsync.Tick) {
				tl.pass(int(passes.Add(1)), t)
				select {
				case passed <- struct{}{}:
				default: // the script has not caught up yet: one signal covers both
				}
			},
		})
	}()
	stop := func() {
		stopRun()
		<-runDone
		tl.line(time.Now(), actorDemo, ref{}, "daemon stopped (the pass in progress finished, the lock was released)")
	}

	sc := newScript(s, tl)
	dctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	verdict := ""
	for verdict == "" {
		select {
		case <-dctx.Done():
			verdict = fmt.Sprintf("NOT CONVERGED: stopped after %s", o.timeout)
			if ctx.Err() != nil {
				verdict = "NOT CONVERGED: interrupted"
			}
		case <-passed:
			if _, err := sc.advance(dctx); err != nil && dctx.Err() == nil {
				tl.line(time.Now(), actorShop, ref{}, fmt.Sprintf("ERROR %v (tried again after the next pass)", err))
			}
			if sc.finished() && remoteDone(s.emu.State(), ids) {
				verdict = "done"
			}
		}
	}
	stop()

	vctx, vcancel := context.WithTimeout(context.WithoutCancel(ctx), verifyTimeout)
	defer vcancel()
	// The write-back of the last events, should the daemon have stopped
	// before its outbox got to them.
	s.daemon.Outbox.Work(vctx)
	outs, err := outcomes(vctx, s, ids)
	if err != nil {
		fmt.Fprintf(stderr, "quotesync-demo: read back the results: %v\n", err)
		return 1
	}
	printSummary(stdout, tl, outs, s.emu.Calls(), int(passes.Load()), s.db.RoundTrips())
	bad := problems(outs)
	if verdict == "done" && len(bad) == 0 {
		fmt.Fprintf(stdout, "\nOK: all %d requests reached Submitted on the remote, each once, holding exactly the shop's\nfinal lines (checked item by item against the shop's rows). Ran %s.\n",
			len(ids), time.Since(start).Round(100*time.Millisecond))
		return 0
	}
	if verdict == "done" {
		verdict = "NOT CONVERGED: the remote and the shop disagree"
	}
	fmt.Fprintf(stdout, "\n%s. What did not converge:\n", verdict)
	for _, p := range bad {
		fmt.Fprintf(stdout, "  - %s\n", p)
	}
	if w := sc.waiting(); w != "" {
		fmt.Fprintf(stdout, "  - the shop's script still waits to run %s\n", w)
	}
	return 1
}

// newDemoLogger is the daemon's logger: with verbose, the JSON lines
// `quotesync run` writes (to w); else none (the timeline observes the
// daemon's events).
func newDemoLogger(verbose bool, w io.Writer) *zap.Logger {
	if !verbose {
		return zap.NewNop()
	}
	ec := zap.NewProductionEncoderConfig()
	ec.TimeKey = "ts"
	ec.EncodeTime = zapcore.ISO8601TimeEncoder
	ec.EncodeDuration = zapcore.StringDurationEncoder
	return zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(ec), zapcore.Lock(zapcore.AddSync(w)), zapcore.InfoLevel))
}

// printSetup describes the running parts and the insurer's requests.
func printSetup(w io.Writer, s *stack, ids []string, schedule string, took time.Duration) {
	fmt.Fprintf(w, "\nsetup (took %s)\n", round(took))
	fmt.Fprintf(w, "  shop database  go-mysql-server, in memory, on %s: the sample shop's tables and jobs,\n", s.mysqlAddr)
	fmt.Fprintf(w, "                 and quotesync's own state tables (migrated to schema version %d)\n", s.schema)
	fmt.Fprintf(w, "  insurer's API  emulator on %s with %s\n", s.apiURL, plural(len(ids), "pending quote request"))
	fmt.Fprintf(w, "  daemon         the real engine: passes %s, single-instance lock (GET_LOCK),\n", schedule)
	fmt.Fprintln(w, "                 production timeouts, retries and rate limit")
	fmt.Fprintln(w, "\nthe insurer's pending requests, and what the shop has for them")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, r := range demoRequests() {
		if i >= len(ids) {
			break
		}
		var v struct{ Registration, Make, Model string }
		_ = json.Unmarshal([]byte(r.vehicle), &v)
		fmt.Fprintf(tw, "  request %s\tclaim %s\t%s %s %s\t%s\n", ids[i], r.claim, v.Make, v.Model, v.Registration, r.shop)
	}
	_ = tw.Flush()
}
