package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	sdaemon "github.com/coreos/go-systemd/v22/daemon"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// sd_notify states (see sd_notify(3)).
const (
	sdReady     = sdaemon.SdNotifyReady     // "READY=1"
	sdStopping  = sdaemon.SdNotifyStopping  // "STOPPING=1"
	sdReloading = sdaemon.SdNotifyReloading // "RELOADING=1"
	sdWatchdog  = sdaemon.SdNotifyWatchdog  // "WATCHDOG=1"
)

// notifier tells systemd (Type=notify) how the daemon is doing. Without
// NOTIFY_SOCKET (not under systemd) every call does nothing.
type notifier struct {
	log *zap.Logger
}

// send sends the states in one datagram; a failure is logged, never fatal.
func (n notifier) send(states ...string) {
	if _, err := sdaemon.SdNotify(false, strings.Join(states, "\n")); err != nil {
		n.log.Warn(msgNotifyFailed, zap.String(fieldDetail, states[0]), zap.Error(err))
	}
}

// sdStatus is a STATUS= line, shown by systemctl status.
func sdStatus(format string, args ...any) string {
	return "STATUS=" + strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " ")
}

// reloading is RELOADING=1 with the MONOTONIC_USEC= systemd wants beside it.
func reloading() []string {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return []string{sdReloading}
	}
	return []string{sdReloading, fmt.Sprintf("MONOTONIC_USEC=%d", ts.Nano()/1000)}
}

// watchdogInterval returns how often to ping systemd's watchdog: half of
// WatchdogSec (from $WATCHDOG_USEC, when $WATCHDOG_PID is unset or ours);
// 0 when the watchdog is off.
func watchdogInterval() (time.Duration, error) {
	d, err := sdaemon.SdWatchdogEnabled(false)
	if err != nil {
		return 0, fmt.Errorf("read the watchdog settings: %w", err)
	}
	return d / 2, nil
}

// runWatchdog pings the watchdog every interval while alive says the
// scheduler makes progress, until ctx ends. A stop or a restart of the
// pings is logged once each.
func runWatchdog(ctx context.Context, interval time.Duration, n notifier, alive func(now time.Time) (bool, string)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	held := false
	for {
		ok, why := alive(time.Now())
		switch {
		case ok:
			if held {
				n.log.Info(msgWatchdogResumed)
				held = false
			}
			n.send(sdWatchdog)
		case !held:
			n.log.Error(msgWatchdogHeld, zap.String(fieldReason, why))
			held = true
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
