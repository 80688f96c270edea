package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/termtext"
	qsync "github.com/quotesync/quotesync/sync"
)

const syncNowHelp = `Usage: quotesync sync-now [--config FILE]

Asks the running daemon ('quotesync run', the systemd service) for a pass
at once, instead of waiting for the next tick of sync.schedule: after
fixing a job in the shop, for example. It connects to the daemon's
control socket (control.socket of the file, default
/run/quotesync/control.sock, which the unit's RuntimeDirectory= makes) and
prints the daemon's answer:

  started   a pass started; follow it with journalctl -u quotesync -f
            or quotesync status
  running   a pass is already running (since when is shown); none was
            started: run sync-now again when it ends if your fix came
            after it started
  standby   this instance is the standby of an HA pair: the other
            instance holds the lock and runs the passes

The socket is the service user's (0660, group quotesync): run it as root
or as a member of that group. Sending SIGUSR1 does the same without an
answer: systemctl kill -s USR1 quotesync.

Exit status: 0 a pass started, 1 none did (one is running, a standby, or
no daemon answers on the socket), 2 bad flags or configuration.

Example:
  sudo quotesync sync-now --config /etc/quotesync/config.yaml

Flags:
`

func runSyncNow(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := verbFlags("sync-now", syncNowHelp)
	cfg := registerConfig(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	path := cfg.path()
	// Only control.socket matters here: the daemon may still run with an
	// older, valid file while this one is being edited.
	fc, err := config.Load(path)
	if err != nil {
		return fail(stderr, exitUsage, "sync-now", err)
	}
	sock, _ := fc.Control.SocketFor(string(cfg.site))
	if sock == "" {
		return failf(stderr, exitFailure, "quotesync sync-now: control.socket is off in %s; send the daemon SIGUSR1 instead: systemctl kill -s USR1 quotesync", path)
	}
	r, err := askSyncNow(sock)
	if err != nil {
		return fail(stderr, exitFailure, "sync-now", err)
	}
	switch qsync.NowOutcome(r.Outcome) {
	case qsync.NowStarted:
		fmt.Fprintln(stdout, "started: the daemon started a pass; follow it with journalctl -u quotesync -f, or quotesync status")
		return exitOK
	case qsync.NowRunning:
		fmt.Fprintf(stdout, "running: a pass is already running (started %s ago, at %s); none was started. If your fix came after it started, run sync-now again when it ends.\n",
			ago(time.Now(), r.Since), r.Since.Local().Format(time.TimeOnly))
	case qsync.NowStandby:
		fmt.Fprintln(stdout, "standby: this instance is the standby; the other instance holds the single-instance lock and runs the passes: run sync-now on its host")
	default:
		fmt.Fprintf(stdout, "%s: %s\n", termtext.Safe(r.Outcome), termtext.Lines(r.Detail))
	}
	return exitFailure
}

// askSyncNow sends "sync-now" on the control socket and reads the answer.
func askSyncNow(sock string) (nowReply, error) {
	var r nowReply
	conn, err := net.DialTimeout("unix", sock, 2*time.Second)
	switch {
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ECONNREFUSED):
		return r, fmt.Errorf("no daemon listens on %s: is it running (systemctl status quotesync)? A daemon started by hand listens only where control.socket can be made (its log says so); SIGUSR1 reaches it anyway: kill -USR1 PID", sock)
	case errors.Is(err, syscall.EACCES):
		return r, fmt.Errorf("%s: permission denied: run it as root (sudo quotesync sync-now) or as a member of the group quotesync", sock)
	case err != nil:
		return r, fmt.Errorf("connect to the daemon's control socket: %w", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(controlIOTimeout + nowTimeout))
	if _, err := fmt.Fprintln(conn, controlSyncNow); err != nil {
		return r, fmt.Errorf("ask the daemon on %s: %w", sock, err)
	}
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		return r, fmt.Errorf("read the daemon's answer on %s: %w", sock, err)
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return r, fmt.Errorf("read the daemon's answer on %s: %w", sock, err)
	}
	return r, nil
}
