package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"slices"
	gosync "sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/webauth"
	"github.com/quotesync/quotesync/remote/redact"
	qsync "github.com/quotesync/quotesync/sync"
)

const runHelp = `Usage: quotesync run [--config FILE] [--log-format console] [--log-level LEVEL]

Runs the daemon: connects to the shop database and migrates quotesync's
state tables, then runs a pass at once and then on sync.schedule, until
SIGTERM or SIGINT. Passes never overlap; with two instances on one shop
database only the holder of the single-instance lock works, the other
waits as a standby. Logs go to standard output (JSON by default; journald
keeps them).

Under systemd (Type=notify) it sends READY=1 once the database answers and
the state tables are current, WATCHDOG=1 while its scheduler makes
progress, STOPPING=1 on SIGTERM, RELOADING=1 and READY=1 around reloads.

SIGHUP re-reads the file: a valid file (database and all) takes effect at
the next pass, after the passes in progress have finished: a pass still
running 5s after the signal is cancelled (it records what it did, as at a
stop) and its insurer passes again at once under the new file. An
invalid file is logged with the reason and the running configuration
stays. The
listener's users file (metrics.users_file) and TLS certificate are read
again with it; a new metrics.listen, or TLS switched on or off, opens a
new listener (on the same port, after closing the old one).
SIGUSR1 (what 'quotesync sync-now' sends through control.socket) starts
a pass at once unless one is running; the schedule goes on as before.
SIGTERM/SIGINT cancel the pass in progress (it records what it already
did) and exit within 30s; a second signal exits at once.

With metrics.listen set it serves /metrics (Prometheus), /healthz, /livez
(a liveness probe's question: does the scheduler make progress) and the
status page, /status (unless metrics.status_page is false). Beyond
loopback it needs metrics.users_file (a login at /login, HTTP Basic over
TLS for scrapers) or metrics.auth: none, and refuses to start otherwise.
Its session cookies are signed with a key made at each start: a restart
logs everyone out.

Exit status: 0 after a clean stop (also when stopped while starting), 1
when it could not start (database, state tables migrated by a newer
quotesync, listener) or could not stop in time, 2 bad flags or
configuration (every key is checked before the database is touched).

Example:
  quotesync run --config /etc/quotesync/config.yaml --log-format console

Flags:
`

// stopTimeout bounds the wait for the pass in progress after SIGTERM.
const stopTimeout = 30 * time.Second

// reloadWait bounds how long a reload waits for the passes in progress
// to finish on their own: those still running then are cancelled (they
// record what they did, as at a stop) and their insurers pass again at
// once under the new configuration. One insurer's slow service must not
// hold a reload, nor with it every other insurer's next pass.
const reloadWait = 5 * time.Second

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := verbFlags("run", runHelp)
	var cf commonFlags
	cf.register(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	// SIGHUP is caught from the start: its default action would kill us.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	// SIGUSR1 asks for a pass at once; its default action would kill us too.
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	defer signal.Stop(usr1)

	// One set for the life of the process: a reload adds what it reads.
	cf.secrets = redact.New()
	set, err := cf.loadSettings(config.AllSecrets)
	if err != nil {
		return fail(stderr, exitUsage, "run", err)
	}
	level := zap.NewAtomicLevelAt(set.LogLevel)
	log := cf.logger(level, set.LogFormat, stdout, cf.secrets)
	defer func() { _ = log.Sync() }()
	d := &daemon{cf: cf, log: log, level: level, notify: notifier{log: log}, metrics: newPromMetrics(),
		usr1: usr1, now: make(chan qsync.NowRequest), sessionKey: webauth.NewKey()}
	code := d.run(ctx, set, hup)
	if code == exitFailure && d.startErr != nil {
		printErr(stderr, "run", errors.New(d.cf.secrets.Redact(d.startErr.Error())))
	}
	return code
}

// daemon is the running `quotesync run`: the current wiring, swapped by
// reloads, and what the watchdog and /healthz read.
type daemon struct {
	// cf.secrets is the process's one set: the secrets of the first
	// configuration and of every reload after it, and every token sent;
	// removed from the log, the kept texts, the listener's answers and
	// sd_notify.
	cf      commonFlags
	log     *zap.Logger
	level   zap.AtomicLevel
	notify  notifier
	metrics *promMetrics
	prog    qsync.Progress
	usr1    <-chan os.Signal      // SIGUSR1: a pass at once
	now     chan qsync.NowRequest // requests for a pass at once, read by the scheduler
	// sessionKey signs the listener's login cookies: made at start, kept
	// only in memory, so a restart logs everyone out; a reload does not.
	sessionKey []byte

	startErr error // why the start failed, for stderr

	cutMu gosync.Mutex
	cut   []string // insurers whose pass was interrupted (see cutShort)

	mu  gosync.Mutex // guards the wiring below
	cur *qsync.Daemon
	set *config.Settings
	obs *obsServer
}

// wiring is a loaded configuration and what was built from it.
type wiring struct {
	set   *config.Settings
	d     *qsync.Daemon
	auth  *listenerAuth // the listener's login: users and certificate as read now
	obs   *obsServer    // a new listener when metrics.listen changed
	newLn bool          // obs replaces the running listener
}

func (d *daemon) run(ctx context.Context, set *config.Settings, hup <-chan os.Signal) int {
	w, err := d.open(ctx, set, nil)
	if err != nil {
		if ctx.Err() != nil {
			// SIGTERM during the start (the migration, a slow database): a
			// clean stop, not a failure for systemd to restart.
			d.log.Info(msgStopped, zap.String(fieldDuring, duringStart))
			return exitOK
		}
		d.startErr = err
		d.log.Error(msgStartFailed, zap.Error(err))
		return exitFailure
	}
	d.mu.Lock()
	d.cur, d.set, d.obs = w.d, w.set, w.obs
	d.mu.Unlock()
	d.useMetrics(w)
	d.warnCluster(ctx, w.d.Shop, set.SingleWriter)
	defer func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		_ = d.obs.Close()
		_ = d.cur.Close()
	}()
	d.prog.Restart(time.Now())
	ctlPath, ctlDefault := set.Control.SocketFor(set.Site)
	ctl := startControl(ctlPath, ctlDefault, d)
	defer ctl.Close()
	usr1Done := make(chan struct{})
	defer close(usr1Done)
	go d.serveUSR1(d.usr1, usr1Done)

	interval, err := watchdogInterval()
	if err != nil {
		d.log.Warn(msgNotifyFailed, zap.Error(err))
	}
	spec := set.Daemon.Sync.Schedule
	d.log.Info(msgStarted, zap.String(fieldVersion, version), zap.String(fieldConfig, d.cf.path()),
		zap.String(fieldSchedule, spec), zap.String(fieldDatabase, set.Daemon.Shop.String()),
		zap.String(fieldRemote, perInsurer(set.Daemon.Insurers, "=", " ", func(in qsync.Insurer) string { return in.Remote.BaseURL })),
		zap.Duration(fieldWatchdog, interval))
	d.notify.send(sdReady, sdStatus("ready; schedule %s", spec))
	d.log.Info(msgReady) // the e2e tests and operators wait for this line
	wdCtx, wdCancel := context.WithCancel(context.Background())
	defer wdCancel()
	if interval > 0 {
		go runWatchdog(wdCtx, interval, d.notify, d.live)
	}

	skipFirst := false
	var resume []string
	for {
		drain := make(chan struct{})
		runDone := d.start(ctx, drain, skipFirst, resume)
		next, stop, code := d.serve(ctx, hup, runDone)
		if stop {
			return code
		}
		d.cutShort() // forget older interruptions: only the drain's count
		close(drain) // the passes in progress finish (or are cut short after reloadWait), then Run returns
		<-runDone
		resume = d.cutShort()
		d.swap(next)
		if ctx.Err() != nil { // stopped while the old pass drained
			d.notify.send(sdStopping)
			d.log.Info(msgStopped)
			return exitOK
		}
		skipFirst = true // the new configuration takes effect at the next scheduled pass
	}
}

// open builds the wiring of set: database (migrated), remote client,
// engine, and a metrics listener unless the running one (prev) serves the
// same address.
func (d *daemon) open(ctx context.Context, set *config.Settings, prev *config.Settings) (*wiring, error) {
	qd, err := qsync.Open(ctx, set.Daemon, qsync.OpenOptions{Migrate: true, Log: d.log,
		Observers: []qsync.Observer{d.metrics}, ObserveCall: d.metrics.observe})
	if err != nil {
		return nil, err
	}
	w := &wiring{set: set, d: qd}
	if w.auth, err = loadListenerAuth(set); err != nil {
		_ = qd.Close()
		return nil, err
	}
	d.logListenerAuth(w.auth)
	if prev != nil && !listenerMoved(prev, set, d.listener()) {
		return w, nil // the running listener takes w.auth at the swap
	}
	w.newLn = true
	if set.Metrics.Listen != "" {
		var cert *webauth.Cert
		if w.auth.pair != nil {
			cert = &webauth.Cert{}
			cert.Store(w.auth.pair)
		}
		guard := d.guarded(redactAnswers(d.cf.secrets, withStatusPage(obsHandler(d.metrics, d.health, d.live), d.statusPage(set))), w.auth)
		if w.obs, err = d.startListener(set.Metrics.Listen, guard, cert); err != nil {
			_ = qd.Close()
			return nil, err
		}
	}
	return w, nil
}

// start runs the current engines' scheduler until ctx ends or drain is
// closed; its result arrives on the returned channel. The insurers of
// resume (their pass was cut short by the reload) pass at once.
func (d *daemon) start(ctx context.Context, drain chan struct{}, skipFirst bool, resume []string) <-chan error {
	qd, _ := d.current()
	done := make(chan error, 1)
	go func() {
		done <- qd.Run(ctx, qsync.RunOptions{
			Lock: qd.Lock(), OnTick: d.onTick, SkipFirst: skipFirst, Drain: drain, DrainWait: reloadWait,
			Resume: resume, Now: d.now,
		})
	}()
	return done
}

// cutShort returns the insurers whose pass was interrupted since the
// last call, and forgets them.
func (d *daemon) cutShort() []string {
	d.cutMu.Lock()
	defer d.cutMu.Unlock()
	names := d.cut
	d.cut = nil
	return names
}

// serve waits for a stop, a failure of the scheduler or a valid reload.
func (d *daemon) serve(ctx context.Context, hup <-chan os.Signal, runDone <-chan error) (next *wiring, stop bool, code int) {
	for {
		select {
		case <-ctx.Done():
			return nil, true, d.stop(runDone)
		case err := <-runDone:
			d.log.Error(msgSchedulerDied, zap.Error(err))
			return nil, true, exitFailure
		case <-hup:
			if w := d.prepareReload(ctx); w != nil {
				return w, false, exitOK
			}
		}
	}
}

// stop waits, bounded, for the scheduler to wind down after ctx ended.
func (d *daemon) stop(runDone <-chan error) int {
	force := make(chan os.Signal, 1)
	signal.Notify(force, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(force)
	d.notify.send(sdStopping, sdStatus("stopping"))
	d.log.Info(msgStopping)
	timer := time.NewTimer(stopTimeout)
	defer timer.Stop()
	select {
	case <-runDone:
		d.log.Info(msgStopped)
		return exitOK
	case <-timer.C:
		d.log.Error(msgStopTimeout, zap.Duration(fieldWaited, stopTimeout))
	case sig := <-force:
		d.log.Error(msgStopTimeout, zap.String(fieldSignal, sig.String()))
	}
	return exitFailure
}

// prepareReload re-reads the file and builds the new wiring while the old
// one keeps working; nil (logged, old configuration kept) when anything
// about it is wrong.
func (d *daemon) prepareReload(ctx context.Context) *wiring {
	d.notify.send(reloading()...)
	d.log.Info(msgReloading, zap.String(fieldConfig, d.cf.path()))
	reject := func(err error) *wiring {
		d.metrics.reloaded(false)
		d.log.Error(msgReloadRejected, zap.String(fieldConfig, d.cf.path()), zap.Error(err))
		d.notify.send(sdReady, sdStatus("reload rejected (see the log); running with the previous configuration"))
		return nil
	}
	set, err := d.cf.loadSettings(config.AllSecrets)
	if err != nil {
		return reject(err)
	}
	_, prev := d.current()
	if set.LogFormat != prev.LogFormat {
		d.log.Warn(msgLogFormatKept, zap.String(fieldRunning, prev.LogFormat))
	}
	w, err := d.open(ctx, set, prev)
	if err != nil {
		return reject(err)
	}
	return w
}

// swap puts the new wiring in place once the old scheduler has stopped.
func (d *daemon) swap(w *wiring) {
	d.mu.Lock()
	old, oldObs := d.cur, d.obs
	d.cur, d.set = w.d, w.set
	if w.newLn {
		d.obs = w.obs
	} else {
		d.obs.apply(w.auth) // the users file and the certificate, read again
	}
	d.mu.Unlock()
	if w.newLn {
		_ = oldObs.Close()
	}
	d.useMetrics(w)
	_ = old.Close()
	d.level.SetLevel(w.set.LogLevel)
	d.metrics.leader.Set(0) // the old scheduler released the lock; the next tick takes it again
	d.metrics.reloaded(true)
	d.prog.Restart(time.Now())
	spec := w.set.Daemon.Sync.Schedule
	d.log.Info(msgReloaded, zap.String(fieldSchedule, spec), zap.String(fieldDatabase, w.set.Daemon.Shop.String()))
	d.notify.send(sdReady, sdStatus("ready; configuration reloaded; schedule %s", spec))
}

// current returns the running daemon's parts and the settings they were
// built from; nil before the first configuration is assembled.
func (d *daemon) current() (*qsync.Daemon, *config.Settings) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cur, d.set
}

// onTick records the scheduler's progress and tells systemd about it.
// The pass's error is recorded redacted: /healthz, the status page's
// health line and sd_notify show it.
func (d *daemon) onTick(t qsync.Tick) {
	t.Err = redactErr(d.cf.secrets, t.Err)
	d.prog.Tick(t, time.Now())
	// Summary.Interrupted, not ErrInterrupted: a pass cut short that also
	// failed a step reports that failure.
	if t.Ran && t.Summary.Interrupted {
		d.cutMu.Lock()
		if !slices.Contains(d.cut, t.Insurer) {
			d.cut = append(d.cut, t.Insurer)
		}
		d.cutMu.Unlock()
	}
	switch {
	case !t.Leader && t.Err == nil:
		d.notify.send(sdStatus("standby: another instance holds the lock"))
	case t.Err != nil:
		d.notify.send(sdStatus("last pass failed at %s: %s", time.Now().Format(time.TimeOnly), truncate(flat(t.Err.Error()), 200)))
	default:
		s := t.Summary
		d.notify.send(sdStatus("leader; last pass ok at %s (%d pending, %d tracked)", time.Now().Format(time.TimeOnly), s.Pending, s.Tracked))
	}
}

// live is the watchdog's question, and /livez's: does the scheduler make
// progress? "starting" (not live yet) before the first configuration is
// assembled.
func (d *daemon) live(now time.Time) (bool, string) {
	qd, _ := d.current()
	if qd == nil {
		return false, "starting"
	}
	return qd.Live(now, &d.prog)
}

// health answers /healthz.
func (d *daemon) health(ctx context.Context) (bool, qsync.HealthReport) {
	qd, set := d.current()
	if qd == nil {
		return false, qsync.HealthReport{Status: "unhealthy", Reason: "starting", Role: "starting", Database: "not connected yet"}
	}
	pctx, cancel := context.WithTimeout(ctx, healthPingTimeout)
	dbErr := qd.Shop.Ping(pctx)
	cancel()
	return qd.Health(time.Now(), &d.prog, set.Metrics.HealthMaxAge, dbErr)
}

// useMetrics makes the metrics count on w's database and insurers.
func (d *daemon) useMetrics(w *wiring) {
	names := w.set.Daemon.Names()
	d.metrics.state.use(w.d.Store, names)
	d.metrics.insurers(names)
}
