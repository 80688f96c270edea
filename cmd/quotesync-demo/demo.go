package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	qsync "github.com/quotesync/quotesync/sync"
)

const (
	// DefaultTimeout bounds the demo: what has not converged by then is
	// reported, and the demo exits 1.
	DefaultTimeout = 60 * time.Second
	// verifyTimeout bounds the final read-back of every side.
	verifyTimeout = 15 * time.Second
)

type demoOptions struct {
	timeout   time.Duration
	verbose   bool   // the daemon's JSON log lines to stderr too
	mysqlAddr string // listen address of the embedded server
	pageAddr  string // listen address of the status page
	serve     time.Duration
}

// runDemo runs the whole demo and returns the exit code.
func runDemo(ctx context.Context, o demoOptions, stdout, stderr io.Writer) int {
	start := time.Now()
	tl := newTimeline(stdout, start)
	// The daemon's logger: with --verbose, the JSON lines `quotesync run`
	// writes; else none (the timeline observes the events).
	log := zap.NewNop()
	if o.verbose {
		ec := zap.NewProductionEncoderConfig()
		ec.TimeKey, ec.EncodeTime, ec.EncodeDuration = "ts", zapcore.ISO8601TimeEncoder, zapcore.StringDurationEncoder
		log = zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(ec), zapcore.Lock(zapcore.AddSync(stderr)), zapcore.InfoLevel))
	}
	defer func() { _ = log.Sync() }()

	fmt.Fprintln(stdout, "quotesync demo: the daemon's real code against an embedded MySQL-compatible server")
	fmt.Fprintln(stdout, "holding a sample shop, and two insurers' APIs (emulators). Nothing leaves this machine.")
	s, err := startStack(ctx, o, log, tl)
	if err != nil {
		fmt.Fprintf(stderr, "quotesync-demo: %v\n", err)
		return 1
	}
	defer func() {
		if err := s.Close(); err != nil {
			fmt.Fprintf(stderr, "quotesync-demo: shut down: %v\n", err)
		}
	}()
	printSetup(stdout, s, time.Since(start))
	defer func() { // before the stack closes: the page reads its database
		if o.serve > 0 {
			fmt.Fprintf(stdout, "\nthe status page stays at %s for %s (Ctrl-C stops it)\n", s.pageURL, o.serve)
			select {
			case <-ctx.Done():
			case <-time.After(o.serve):
			}
		}
	}()
	fmt.Fprintf(stdout, "\nstatus page: %s (what the daemon serves under /status; -serve 2m keeps it up after the run)\n", s.pageURL)

	fmt.Fprintln(stdout, "\ntimeline (quotesync's lines are its own events, reworded; --verbose shows its log lines raw)")
	passed := make(chan struct{}, 1)
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	runDone := make(chan error, 1)
	go func() {
		runDone <- s.daemon.Run(runCtx, qsync.RunOptions{Lock: s.daemon.Lock(), OnTick: func(t qsync.Tick) {
			tl.pass(t)
			select {
			case passed <- struct{}{}:
			default: // the script has not caught up yet: one signal covers both
			}
		}})
	}()

	sc := &script{s: s, tl: tl}
	dctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	verdict, round := "", 0
	for verdict == "" {
		select {
		case <-dctx.Done():
			verdict = fmt.Sprintf("NOT CONVERGED: stopped after %s", o.timeout)
			if ctx.Err() != nil {
				verdict = "NOT CONVERGED: interrupted"
			}
		case <-passed:
			// The shop moves once every insurer's engine has finished a
			// pass since its last move, so that each has reacted to
			// what came before: harbour holds the job with the NULL
			// price in its first pass before the shop prices it, even
			// when acme's pass ends first.
			if r := tl.round(len(s.insurers)); r > round {
				round = r
				if err := sc.advance(dctx); err != nil && dctx.Err() == nil {
					tl.line(time.Now(), actorShop, ref{}, fmt.Sprintf("ERROR %v (tried again after the next pass)", err))
				}
			}
			if sc.finished() && remoteDone(s) {
				verdict = "done"
			}
		}
	}
	stopRun()
	<-runDone
	tl.line(time.Now(), actorDemo, ref{}, "daemon stopped (the pass in progress finished, the lock was released)")

	vctx, vcancel := context.WithTimeout(context.WithoutCancel(ctx), verifyTimeout)
	defer vcancel()
	// The write-back of the last events, should the daemon have stopped
	// before its outbox got to them.
	s.daemon.Outbox.Work(vctx)
	outs, err := outcomes(vctx, s)
	if err != nil {
		fmt.Fprintf(stderr, "quotesync-demo: read back the results: %v\n", err)
		return 1
	}
	printSummary(stdout, tl, outs, s.insurers, shopdbtest.RoundTrips(s.daemon.Shop))
	converged := !slices.ContainsFunc(outs, func(o outcome) bool { return len(o.Problems) > 0 })
	if verdict == "done" && converged {
		fmt.Fprintf(stdout, "\nOK: all %d requests of %s reached Submitted on their insurer's remote, each once, holding\nexactly the shop's final lines (checked item by item against the shop's rows); request %s,\nsent by both, is two requests with two jobs. Ran %s.\n",
			len(outs), qsync.Plural(len(s.insurers), "insurer"), collidingID, time.Since(start).Round(100*time.Millisecond))
		return 0
	}
	if verdict == "done" {
		verdict = "NOT CONVERGED: the remote and the shop disagree"
	}
	fmt.Fprintf(stdout, "\n%s. What did not converge:\n", verdict)
	for _, o := range outs { // what did not converge, one line per request
		if len(o.Problems) > 0 {
			fmt.Fprintf(stdout, "  - %s's request %s (claim %s, job %s): %s\n", o.insurer, o.id, o.claim, cmp.Or(o.Job, "-"),
				strings.Join(o.Problems, "; "))
		}
	}
	if w := sc.waiting(); w != "" {
		fmt.Fprintf(stdout, "  - the shop's script still waits to run %s\n", w)
	}
	return 1
}

// printSetup describes the running parts and the insurers' requests.
func printSetup(w io.Writer, s *stack, took time.Duration) {
	fmt.Fprintf(w, "\nsetup (took %s)\n", round(took))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  shop database\tgo-mysql-server, in memory, on %s: the sample shop's tables and jobs,\n", s.mysqlAddr)
	fmt.Fprintf(tw, "  \tand quotesync's own state tables (migrated to schema version %d)\n", s.schema)
	var names []string
	for _, a := range s.insurers {
		n := len(a.emu.State().Requests)
		fmt.Fprintf(tw, "  insurer %s\temulator in %s mode on %s with %s;\n", a.name, a.mode, a.srv.URL, qsync.Plural(n, "pending quote request"))
		rem := a.built.Remote
		fmt.Fprintf(tw, "  \ttoken: %s; status change: %s %s\n", a.built.TokenFrom, rem.StatusMethod, rem.StatusPath)
		names = append(names, a.name)
	}
	fmt.Fprintf(tw, "  daemon\tthe real daemon, one engine per insurer of remotes: (%s), passes %s each,\n", strings.Join(names, ", "), DefaultSchedule)
	fmt.Fprintln(tw, "  \tsingle-instance lock (GET_LOCK), production timeouts, retries and rate limits")
	_ = tw.Flush()
	fmt.Fprintln(w, "\nthe insurers' pending requests, and what the shop has for them")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range demoRequests {
		v := r.vehicle
		fmt.Fprintf(tw, "  %s\trequest %s\tclaim %s\t%s %s %s\t%s\n", r.insurer, r.id, r.claim, v.Make, v.Model, v.Registration, r.shop)
	}
	_ = tw.Flush()
}
