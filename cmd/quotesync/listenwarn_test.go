package main

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/webauth/webauthtest"
)

// logEntries counts the log lines of msg at level.
func logEntries(out, msg, level string) int {
	n := 0
	for _, line := range strings.Split(out, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg && m["level"] == level {
			n++
		}
	}
	return n
}

// TestListenerWarnsAtStartAndReload: the daemon (the real binary) says in
// its log, at warn, at the start and again at each reload, what check
// warns about: a login beyond loopback without TLS, a users file others
// may read, hashes cheaper than cost 10 (the test's are cost 4); a reload
// to metrics.auth: none beyond loopback says it at warn too. A TLS key
// every user may read rejects the reload, and stops the start, naming
// the file and chmod 600.
func TestListenerWarnsAtStartAndReload(t *testing.T) {
	t.Parallel()
	w := newLoginWorld(t, func(fc *config.File) {
		fc.Metrics.TLSCertFile, fc.Metrics.TLSKeyFile = "", ""
		fc.Sync.Schedule = "@every 1h"
	})
	if err := os.Chmod(w.users, 0o640); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, w.cliEnv)
	warnings := []string{msgListenerInClear, msgListenerUsersOpen, msgListenerWeakHashes}
	seen := func(n int) {
		t.Helper()
		for _, m := range warnings {
			if got := logEntries(d.out.String(), m, "warn"); got != n {
				t.Errorf("%d warn lines %q, want %d", got, m, n)
			}
		}
	}
	seen(1)
	if logEntries(d.out.String(), msgListenerAuth, "info") != 1 {
		t.Errorf("no info line %q at the start", msgListenerAuth)
	}
	if e := logEntry(d.out.String(), msgListenerUsersOpen, fieldMode, "0640"); e == nil {
		t.Errorf("the users file's warning does not give its mode 0640")
	}
	if e := logEntry(d.out.String(), msgListenerWeakHashes); e == nil || !slices.Equal(anyStrings(e[fieldWeakUsers]), []string{"frontdesk", "prometheus"}) {
		t.Errorf("the weak hashes' warning does not name both users: %v", e)
	}

	reload := func(want string, n int) {
		t.Helper()
		if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		if !waitFor(20*time.Second, func() bool { return logEntries(d.out.String(), want, logLevelOf(want)) == n }) {
			t.Fatalf("timed out waiting for line %d of %q", n, want)
		}
	}
	reload(msgReloaded, 1) // the same file: the same warnings again
	seen(2)

	w.writeConfig(func(fc *config.File) {
		fc.Metrics.Listen, fc.Metrics.Auth = "0.0.0.0:0", config.AuthNone
		fc.Sync.Schedule = "@every 1h"
	})
	reload(msgReloaded, 2)
	if logEntries(d.out.String(), msgListenerOpen, "warn") != 1 || logEntry(d.out.String(), msgListenerOpen, fieldAuth, config.AuthNone) == nil {
		t.Errorf("metrics.auth: none beyond loopback is not a warn line %q", msgListenerOpen)
	}

	cert := webauthtest.WriteCert(t, t.TempDir(), "open")
	if err := os.Chmod(cert.KeyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	w.writeConfig(func(fc *config.File) {
		fc.Metrics.Listen, fc.Metrics.UsersFile = "0.0.0.0:0", w.users
		fc.Metrics.TLSCertFile, fc.Metrics.TLSKeyFile = cert.CertFile, cert.KeyFile
		fc.Sync.Schedule = "@every 1h"
	})
	reload(msgReloadRejected, 1)
	refusal := []string{cert.KeyFile, "readable by every user of this machine (mode 0644)", "chmod 600 " + cert.KeyFile}
	e := logEntry(d.out.String(), msgReloadRejected)
	for _, s := range refusal {
		if msg, _ := e["error"].(string); !strings.Contains(msg, s) {
			t.Errorf("the rejected reload's error %q lacks %q", msg, s)
		}
	}
	d.stop(t)

	r := w.run("run", "--config", w.Conf)
	if r.Code == exitOK {
		t.Fatalf("run with a key every user may read: %s", r)
	}
	for _, s := range refusal {
		if !strings.Contains(r.Stdout+r.Stderr, s) {
			t.Errorf("the refused start lacks %q:\n%s", s, r)
		}
	}
	if err := os.Chmod(cert.KeyFile, 0o640); err != nil { // the group may read it
		t.Fatal(err)
	}
	if block := checkBlock(w.run("check", "--config", w.Conf).Stdout, "listener"); strings.HasPrefix(block, "FAIL") {
		t.Errorf("check of a key of mode 0640: %s", block)
	}
}

// logLevelOf is the level the daemon logs msg at, for waiting on it.
func logLevelOf(msg string) string {
	if msg == msgReloadRejected {
		return "error"
	}
	return "info"
}

// anyStrings is a JSON array of strings as []string.
func anyStrings(v any) []string {
	a, _ := v.([]any)
	out := make([]string, 0, len(a))
	for _, x := range a {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
