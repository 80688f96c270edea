package main

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// TestE2EReloadSlowInsurer runs `quotesync run` with two insurers, bb's
// service answering its listing after 30s, and reloads it (SIGHUP) while
// bb's first pass waits: the reload takes effect within a bound that does
// not depend on bb (bb's pass is cut short after reloadWait), aa's passes
// go on under the new file, and bb's cut pass leaves nothing to repair by
// hand: its insurer passes again at once and accepts its request.
func TestE2EReloadSlowInsurer(t *testing.T) {
	t.Parallel()
	bbEmu, bbSrv := mustEmulator(t, emulator.Options{Token: bbToken, Seed: 7})
	edit := func(level string) func(fc *config.File) {
		return func(fc *config.File) {
			fc.Sync.Schedule = "@every 1s"
			twoInsurers(bbSrv.URL)(fc)
			fc.Remotes[1].Schedule = "@every 1h"
			fc.Remotes[1].Timeout = time.Minute // the 30s answer is waited for
			fc.Log.Level = level
		}
	}
	e := newCLIEnv(t, edit("info"))
	e.writeSecret("bb-token", bbToken)
	e.Emu.AddRequests(emulator.SeedRequest{ID: "7301", ClaimNumber: sampleshop.ClaimDraft})
	bbEmu.AddRequests(emulator.SeedRequest{ID: "9001", ClaimNumber: "CLM-BB-1"})
	slow := bbEmu.AddFault(emulator.Fault{Route: emulator.RouteListRequests, Action: emulator.FaultLatency, Latency: 30 * time.Second})

	cmd, stdout, proc := e.startRun()
	must := func(what string, d time.Duration, cond func() bool) {
		t.Helper()
		if !waitFor(d, cond) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
	must("aa's first pass to draft 7301", 15*time.Second, func() bool {
		return logEntry(stdout.String(), "draft pushed", "insurer", "aa", "claim", sampleshop.ClaimDraft) != nil
	})
	must("bb's listing to be held", 5*time.Second, func() bool { return bbEmu.Calls()[emulator.RouteListRequests] >= 1 })

	e.writeConfig(edit("debug"))
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	bbEmu.RemoveFault(slow) // bb's next call answers at once; the one in flight still waits
	must("the reload", 20*time.Second, func() bool { return logEntry(stdout.String(), msgReloaded) != nil })
	if took := time.Since(start); took > reloadWait+10*time.Second { // bb's call answers only after 30s
		t.Errorf("the reload took %s with bb's call held: it waited for bb's pass", took)
	}
	if logEntry(stdout.String(), "pass interrupted; the next pass takes over", "insurer", "bb") == nil {
		t.Error("bb's pass was not logged as interrupted")
	}
	if logEntry(stdout.String(), "pass interrupted; the next pass takes over", "insurer", "aa") != nil {
		t.Error("aa's pass was interrupted: it finishes within the reload's wait")
	}

	e.Emu.AddRequests(emulator.SeedRequest{ID: "7302", ClaimNumber: sampleshop.ClaimNoLines})
	must("aa's next pass, under the new file, to accept 7302", 10*time.Second, func() bool {
		return logEntry(stdout.String(), "request accepted", "insurer", "aa", "claim", sampleshop.ClaimNoLines) != nil
	})
	must("the new file's log.level (debug) to take effect", 5*time.Second, func() bool {
		return strings.Contains(stdout.String(), `"level":"debug"`)
	})
	must("bb's pass after the reload to accept 9001", 10*time.Second, func() bool {
		return logEntry(stdout.String(), "request accepted", "insurer", "bb", "request", "9001") != nil
	})
	var phase string
	if err := e.DB.SQL.QueryRow("SELECT phase FROM quotesync_requests WHERE insurer = 'bb' AND request_id = '9001'").Scan(&phase); err != nil || phase != "accepted" {
		t.Errorf("bb's 9001: %s %v; want accepted", phase, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if ok, err := proc.wait(35 * time.Second); !ok || err != nil {
		t.Errorf("exit after SIGTERM: %v %v", ok, err)
	}
}

// startRun starts `quotesync run` on e's file; its output is logged when
// the test fails.
func (e *cliEnv) startRun() (*exec.Cmd, *cliBuffer, *bgProc) {
	e.t.Helper()
	cmd := exec.Command(e.bin, "run", "--config", e.Conf)
	cmd.Env = e.environ()
	var stdout, stderr cliBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	proc := startBackground(e.t, cmd, func() {
		if e.t.Failed() {
			e.t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
		}
	})
	return cmd, &stdout, proc
}
