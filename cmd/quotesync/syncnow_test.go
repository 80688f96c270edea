package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/remote/emulator"
)

// countLogs counts the JSON log lines with msg whose fields hold every
// key/value of kv.
func countLogs(out, msg string, kv ...string) int {
	n := 0
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
			n++
		}
	}
	return n
}

// TestSyncNowBinary runs the real daemon on an hourly schedule and asks it
// for passes: SIGUSR1 and `quotesync sync-now` each start exactly one;
// during a (slowed) pass, sync-now says one is running and starts none;
// with the daemon stopped, it says no daemon listens. The socket goes
// away with the daemon.
func TestSyncNowBinary(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	e := newCLIEnv(t, func(fc *config.File) {
		fc.Sync.Schedule = "@every 1h" // only the pass at start, and those asked for
		fc.Control.Socket = sock
	})
	cmd := exec.Command(e.bin, "run", "--config", e.Conf, "--log-level", "debug")
	cmd.Env = e.environ()
	var out cliBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	proc := startBackground(t, cmd, func() {
		if t.Failed() {
			t.Logf("daemon output:\n%s", out.String())
		}
	})
	passes := func() int { return countLogs(out.String(), "pass done") }
	lists := func() int { return e.Emu.Calls()[emulator.RouteListRequests] }
	must := func(what string, cond func() bool) {
		t.Helper()
		if !waitFor(15*time.Second, cond) {
			t.Fatalf("timed out waiting for %s (passes %d, lists %d)", what, passes(), lists())
		}
	}
	// exactly waits a moment and checks that no other pass started.
	exactly := func(want int) {
		t.Helper()
		time.Sleep(500 * time.Millisecond)
		if got := passes(); got != want {
			t.Errorf("%d passes, want %d", got, want)
		}
		if got := lists(); got != want {
			t.Errorf("%d pending lists, want %d (one per pass)", got, want)
		}
	}
	syncNow := func() cliResult { return e.run("sync-now", "--config", e.Conf) }

	must("the pass at start", func() bool { return passes() == 1 })
	must("the control socket", func() bool { return countLogs(out.String(), msgControlListen, fieldPath, sock) == 1 })
	exactly(1)
	if countLogs(out.String(), msgClusterNode) != 0 {
		t.Errorf("the start warned of a cluster on the standalone test server")
	}

	if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	must("the pass SIGUSR1 asked for", func() bool { return passes() == 2 })
	exactly(2)
	if countLogs(out.String(), msgSyncNow, fieldSource, sourceSignal, fieldOutcome, "started") != 1 {
		t.Errorf("no %q line for the signal", msgSyncNow)
	}

	r := syncNow()
	if r.Code != exitOK || !strings.HasPrefix(r.Stdout, "started:") {
		t.Fatalf("sync-now while idle: %s", r)
	}
	must("the pass sync-now asked for", func() bool { return passes() == 3 })
	exactly(3)

	// A slow pass: its pending list takes 2s to answer.
	e.Emu.AddFault(emulator.Fault{Route: emulator.RouteListRequests, Action: emulator.FaultLatency, Latency: 2 * time.Second, Count: 1})
	if r := syncNow(); r.Code != exitOK {
		t.Fatalf("sync-now before the slow pass: %s", r)
	}
	must("the slow pass to list", func() bool { return lists() == 4 })
	r = syncNow()
	if r.Code != exitFailure || !strings.HasPrefix(r.Stdout, "running: a pass is already running") {
		t.Errorf("sync-now during a pass: %s", r)
	}
	if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	must("the slow pass to end", func() bool { return passes() == 4 })
	exactly(4)
	if got := countLogs(out.String(), msgSyncNow, fieldOutcome, "running"); got != 2 {
		t.Errorf("%d %q lines with outcome running, want 2 (the command and the signal)", got, msgSyncNow)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	switch ok, err := proc.wait(30 * time.Second); {
	case !ok:
		t.Fatal("daemon did not stop")
	case err != nil:
		t.Fatalf("daemon exit: %v", err)
	}
	if _, err := os.Lstat(sock); err == nil {
		t.Errorf("%s left behind after the daemon stopped", sock)
	}
	r = syncNow()
	if r.Code != exitFailure || !strings.Contains(r.Stderr, "no daemon listens on "+sock) {
		t.Errorf("sync-now without a daemon: %s", r)
	}
}
