package main

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	gosync "sync"
	"syscall"
	"testing"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/config"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// fakeSystemd is a NOTIFY_SOCKET: it records every sd_notify datagram.
type fakeSystemd struct {
	path string
	conn *net.UnixConn
	mu   gosync.Mutex
	msgs []string
	done chan struct{}
}

func newFakeSystemd(t *testing.T) *fakeSystemd {
	t.Helper()
	dir, err := os.MkdirTemp("", "qs-sd") // short: unix socket paths are limited to 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f := &fakeSystemd{path: filepath.Join(dir, "notify"), done: make(chan struct{})}
	f.conn, err = net.ListenUnixgram("unixgram", &net.UnixAddr{Name: f.path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(f.done)
		buf := make([]byte, 4096)
		for {
			n, err := f.conn.Read(buf)
			if err != nil {
				return
			}
			f.mu.Lock()
			f.msgs = append(f.msgs, strings.Split(string(buf[:n]), "\n")...)
			f.mu.Unlock()
		}
	}()
	t.Cleanup(func() { f.conn.Close(); <-f.done })
	return f
}

// count returns how many states equal to s were received.
func (f *fakeSystemd) count(s string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, m := range f.msgs {
		if m == s {
			n++
		}
	}
	return n
}

// since returns the states received after the first n.
func (f *fakeSystemd) since(n int) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.msgs[min(n, len(f.msgs)):]...)
}

func (f *fakeSystemd) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.msgs)
}

// logEntry finds the first JSON log line with msg whose fields contain
// every key/value of kv; nil when none.
func logEntry(out, msg string, kv ...string) map[string]any {
	for _, line := range strings.Split(out, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil || m["msg"] != msg {
			continue
		}
		ok := true
		for i := 0; i+1 < len(kv); i += 2 {
			if v, _ := m[kv[i]].(string); v != kv[i+1] {
				ok = false
			}
		}
		if ok {
			return m
		}
	}
	return nil
}

// TestRunDaemonBinary runs `quotesync run` under a fake systemd
// (NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID set to the daemon's own
// pid) and drives it: READY=1 and WATCHDOG=1 pings, /metrics and /healthz
// over HTTP (200, then 503 when the last success gets too old), SIGHUP
// with an invalid file (rejected, old configuration kept) and a valid one
// (new schedule takes effect: a new request is accepted at once), SIGTERM
// (STOPPING=1, exit 0). No output holds a secret.
func TestRunDaemonBinary(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, func(fc *config.File) {
		fc.Sync.Schedule = "@every 1h" // only the pass at start
		fc.Metrics.Listen = "127.0.0.1:0"
		fc.Metrics.HealthMaxAge = 3 * time.Second
	})
	e.Emu.AddRequests(emulator.SeedRequest{ClaimNumber: sampleshop.ClaimDraft})
	sd := newFakeSystemd(t)

	// sh's pid becomes the daemon's with exec: WATCHDOG_PID names it.
	cmd := exec.Command("/bin/sh", "-c", `WATCHDOG_PID=$$; export WATCHDOG_PID; exec "$0" "$@"`, e.bin, "run", "--config", e.Conf)
	cmd.Env = append(e.environ(), "NOTIFY_SOCKET="+sd.path, "WATCHDOG_USEC=400000")
	var stdout, stderr cliBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	proc := startBackground(t, cmd, func() {
		out := stdout.String() + stderr.String()
		for _, s := range e.secrets() {
			if strings.Contains(out, s) {
				t.Errorf("the daemon printed a secret")
			}
		}
		if t.Failed() {
			t.Logf("daemon stdout:\n%s\nstderr:\n%s\nsd_notify: %q", stdout.String(), stderr.String(), sd.since(0))
		}
	})
	must := func(what string, d time.Duration, cond func() bool) {
		t.Helper()
		if !waitFor(d, cond) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}

	must("READY=1", 15*time.Second, func() bool { return sd.count("READY=1") >= 1 })
	must("WATCHDOG=1", 5*time.Second, func() bool { return sd.count("WATCHDOG=1") >= 2 })
	must("the first pass to accept "+sampleshop.ClaimDraft, 15*time.Second, func() bool {
		return logEntry(stdout.String(), "draft pushed", "claim", sampleshop.ClaimDraft) != nil
	})
	started := logEntry(stdout.String(), msgMetricsListen)
	if started == nil {
		t.Fatal("no metrics listener line")
	}
	base := "http://" + started[fieldAddr].(string)

	code, body := httpGet(t, base+"/metrics")
	for _, want := range []string{
		`quotesync_passes_total{insurer="default",outcome="ok"} 1`,
		`quotesync_remote_calls_total{class="ok",insurer="default",route="GET /requests"} 1`,
		`quotesync_remote_calls_total{class="ok",insurer="default",route="POST /requests/{id}"} 1`,
		`quotesync_transitions_total{from="accepted",insurer="default",to="drafted"} 1`,
		`quotesync_leader 1`,
		`quotesync_requests{insurer="default",phase="drafted"} 1`,
		`process_open_fds `,
	} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %q", code, want)
		}
	}
	code, body = httpGet(t, base+"/healthz")
	if code != 200 || !strings.Contains(body, `"role": "leader"`) {
		t.Errorf("/healthz right after a pass: %d %s", code, body)
	}

	t.Run("ReloadInvalid", func(t *testing.T) {
		good, err := os.ReadFile(e.Conf)
		if err != nil {
			t.Fatal(err)
		}
		bad := strings.Replace(string(good), "    concurrency: 4\n", "    concurrency: 4\n    concurency: 8\n", 1)
		if bad == string(good) {
			t.Fatal("no concurrency line to misspell")
		}
		if err := os.WriteFile(e.Conf, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		mark := sd.len()
		if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		must("the reload to be rejected", 10*time.Second, func() bool {
			return logEntry(stdout.String(), msgReloadRejected) != nil
		})
		entry := logEntry(stdout.String(), msgReloadRejected)
		if msg, _ := entry["error"].(string); !strings.Contains(msg, "unknown key concurency") || !strings.Contains(msg, "line ") {
			t.Errorf("rejection names no key and line: %v", entry)
		}
		must("RELOADING=1 then READY=1", 5*time.Second, func() bool {
			got := strings.Join(sd.since(mark), ",")
			return strings.Contains(got, "RELOADING=1") && strings.Contains(got[strings.Index(got, "RELOADING=1"):], "READY=1")
		})
		if err := os.WriteFile(e.Conf, good, 0o644); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("HealthStale", func(t *testing.T) {
		// health_max_age is 3s and the schedule hourly: the last success
		// gets too old while the daemon is otherwise fine.
		var code int
		var body string
		must("/healthz to turn 503", 10*time.Second, func() bool {
			code, body = httpGet(t, base+"/healthz")
			return code == 503
		})
		if !strings.Contains(body, "last successful pass was at") {
			t.Errorf("503 body: %s", body)
		}
		// A liveness probe is not failed by what a restart cannot mend.
		if code, body := httpGet(t, base+"/livez"); code != 200 || !strings.Contains(body, `"status":"ok"`) {
			t.Errorf("/livez while /healthz is 503: %d %s, want 200 ok", code, body)
		}
		n := sd.count("WATCHDOG=1")
		must("watchdog pings to go on", 3*time.Second, func() bool { return sd.count("WATCHDOG=1") > n+2 })
	})

	t.Run("ReloadValid", func(t *testing.T) {
		e.writeConfig(func(fc *config.File) {
			fc.Sync.Schedule = "@every 1s"
			fc.Metrics.Listen = "127.0.0.1:0" // unchanged: the listener stays
			fc.Log.Level = "debug"
		})
		e.Emu.AddRequests(emulator.SeedRequest{ClaimNumber: sampleshop.ClaimNoLines})
		if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		must("the reload", 10*time.Second, func() bool { return logEntry(stdout.String(), msgReloaded) != nil })
		must("the new schedule's pass to accept "+sampleshop.ClaimNoLines, 10*time.Second, func() bool {
			return logEntry(stdout.String(), "request accepted", "claim", sampleshop.ClaimNoLines) != nil
		})
		must("/healthz to be 200 again", 10*time.Second, func() bool {
			code, _ := httpGet(t, base+"/healthz")
			return code == 200
		})
		_, body := httpGet(t, base+"/metrics")
		for _, want := range []string{`quotesync_config_reloads_total{outcome="ok"} 1`, `quotesync_config_reloads_total{outcome="failed"} 1`} {
			if !strings.Contains(body, want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
		if !strings.Contains(stdout.String(), `"level":"debug"`) {
			t.Error("the reloaded log.level (debug) did not take effect")
		}
	})

	t.Run("SIGTERM", func(t *testing.T) {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		ok, err := proc.wait(35 * time.Second)
		switch {
		case !ok:
			t.Fatal("no exit within 35s of SIGTERM")
		case err != nil:
			t.Errorf("exit after SIGTERM: %v, want status 0", err)
		}
		if sd.count("STOPPING=1") != 1 || logEntry(stdout.String(), msgStopped) == nil {
			t.Errorf("no STOPPING=1 or no %q line", msgStopped)
		}
	})
}

// TestRunStopsDuringPass sends SIGTERM while an accept call hangs on the
// remote: the pass is cancelled, the daemon exits 0 promptly, and the
// request stays reserved with its job number (the next start repairs it).
func TestRunStopsDuringPass(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, func(fc *config.File) { fc.Sync.Schedule = "@every 1h" })
	e.Emu.AddRequests(emulator.SeedRequest{ClaimNumber: sampleshop.ClaimDraft})
	e.Emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultLatency, Latency: time.Minute})

	cmd, stdout, proc := e.startRun()
	if !waitFor(15*time.Second, func() bool {
		return logEntry(stdout.String(), "job number reserved", "claim", sampleshop.ClaimDraft) != nil
	}) {
		t.Fatal("no reservation")
	}
	time.Sleep(300 * time.Millisecond) // the accept call is in flight, held by the fault
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	switch ok, err := proc.wait(35 * time.Second); {
	case !ok:
		t.Fatal("no exit within 35s of SIGTERM")
	case err != nil:
		t.Errorf("exit: %v, want 0", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("stopping took %s with a call in flight, want it cancelled at once", d)
	}
	if logEntry(stdout.String(), "pass interrupted; the next pass takes over") == nil {
		t.Error("the interrupted pass was not logged")
	}
	var phase, job string
	if err := e.DB.SQL.QueryRow("SELECT phase, job_number FROM quotesync_requests").Scan(&phase, &job); err != nil {
		t.Fatal(err)
	}
	if phase != "reserved" || job != sampleshop.JobDraft {
		t.Errorf("after the stop: phase %s job %s, want reserved %s", phase, job, sampleshop.JobDraft)
	}
}
