package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"
	"time"

	"go.uber.org/zap"

	qsync "github.com/quotesync/quotesync/sync"
)

// "Sync now": SIGUSR1 and `quotesync sync-now` ask the running daemon for
// a pass at once. The verb reaches the daemon through a unix socket
// (control.socket, under the unit's RuntimeDirectory=): it needs no
// network listener, file permissions say who may use it (the service user
// and its group; root always), and, unlike a signal, it carries the
// answer back (started, or a pass is already running).

// Log messages and fields of "sync now".
const (
	msgSyncNow        = "sync now requested"
	msgControlListen  = "control socket listening"
	msgControlOff     = "control socket unavailable; sync-now cannot reach this daemon (SIGUSR1 still works)"
	fieldSource       = "source"  // signal or command
	fieldOutcome      = "outcome" // a qsync.NowOutcome, or busy
	fieldPath         = "path"
	sourceSignal      = "signal"
	sourceCommand     = "command"
	outcomeBusy       = "busy" // the scheduler did not take the request (a reload or a stop)
	controlSyncNow    = "sync-now"
	nowTimeout        = 5 * time.Second // how long a request waits for the scheduler
	controlIOTimeout  = 10 * time.Second
	controlSocketMode = 0o660 // the service user and its group
)

// nowReply is the control socket's answer to "sync-now", one JSON line.
type nowReply struct {
	Outcome string    `json:"outcome"`          // started, running, standby or busy
	Since   time.Time `json:"since,omitzero"`   // running: when the pass started
	Detail  string    `json:"detail,omitempty"` // busy: why
}

// errNowBusy: the scheduler did not take a request for a pass in time.
var errNowBusy = errors.New("the daemon is reloading its configuration or stopping; try again in a moment")

// syncNow hands a request for a pass at once to the scheduler and logs
// what came of it.
func (d *daemon) syncNow(source string) (qsync.NowAnswer, error) {
	reply := make(chan qsync.NowAnswer, 1)
	t := time.NewTimer(nowTimeout)
	defer t.Stop()
	select {
	case d.now <- qsync.NowRequest{Reply: reply}:
	case <-t.C:
		d.log.Warn(msgSyncNow, zap.String(fieldSource, source), zap.String(fieldOutcome, outcomeBusy))
		return qsync.NowAnswer{}, errNowBusy
	}
	a := <-reply // the scheduler answers as soon as it has read the request
	fields := []zap.Field{zap.String(fieldSource, source), zap.String(fieldOutcome, string(a.Outcome))}
	if !a.Since.IsZero() {
		fields = append(fields, zap.Time("since", a.Since))
	}
	d.log.Info(msgSyncNow, fields...)
	return a, nil
}

// serveUSR1 turns each SIGUSR1 into a request for a pass at once until
// done is closed.
func (d *daemon) serveUSR1(sig <-chan os.Signal, done <-chan struct{}) {
	for {
		select {
		case <-sig:
			_, _ = d.syncNow(sourceSignal) // logged
		case <-done:
			return
		}
	}
}

// controlServer is the daemon's control socket.
type controlServer struct {
	ln net.Listener
	wg gosync.WaitGroup
}

// startControl listens on path ("" = off) and serves "sync-now" requests
// with d.syncNow. A socket that cannot be made is logged, not fatal: the
// daemon works without it. isDefault makes a missing directory (a daemon
// started by hand, outside systemd) an info line rather than a warning.
func startControl(path string, isDefault bool, d *daemon) *controlServer {
	if path == "" {
		return nil
	}
	ln, err := listenControl(path)
	if err != nil {
		lvl := zap.WarnLevel
		if isDefault && errors.Is(err, fs.ErrNotExist) {
			lvl = zap.InfoLevel
		}
		d.log.Log(lvl, msgControlOff, zap.String(fieldPath, path), zap.Error(err))
		return nil
	}
	c := &controlServer{ln: ln}
	c.wg.Go(func() { c.serve(d) })
	d.log.Info(msgControlListen, zap.String(fieldPath, path))
	return c
}

// listenControl makes the socket at path, replacing a stale one (left by
// a killed daemon) but never one another daemon still listens on.
func listenControl(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&fs.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket; remove it or set control.socket to another path", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			_ = c.Close()
			return nil, fmt.Errorf("another quotesync daemon listens on %s; give each daemon its own control.socket", path)
		}
		_ = os.Remove(path)
	}
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("directory of control.socket: %w (under systemd the unit's RuntimeDirectory= makes it; by hand, set control.socket to a writable path, or off)", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on control.socket: %w", err)
	}
	if err := os.Chmod(path, controlSocketMode); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("chmod control.socket: %w", err)
	}
	return ln, nil
}

func (c *controlServer) serve(d *daemon) {
	for {
		conn, err := c.ln.Accept()
		if err != nil {
			return // closed
		}
		c.wg.Go(func() {
			defer conn.Close()
			c.handle(conn, d)
		})
	}
}

// handle answers one request: a line "sync-now", answered by one JSON line.
func (c *controlServer) handle(conn net.Conn, d *daemon) {
	_ = conn.SetDeadline(time.Now().Add(controlIOTimeout))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return
	}
	var r nowReply
	switch strings.TrimSpace(line) {
	case controlSyncNow:
		a, err := d.syncNow(sourceCommand)
		if err != nil {
			r = nowReply{Outcome: outcomeBusy, Detail: err.Error()}
		} else {
			r = nowReply{Outcome: string(a.Outcome), Since: a.Since}
		}
	default:
		r = nowReply{Outcome: "unknown", Detail: fmt.Sprintf("unknown request %q; this daemon knows %q", truncate(line, 40), controlSyncNow)}
	}
	_ = json.NewEncoder(conn).Encode(r)
}

// Close stops listening (the socket file is removed) and waits for the
// requests in flight.
func (c *controlServer) Close() {
	if c == nil {
		return
	}
	_ = c.ln.Close()
	c.wg.Wait()
}
