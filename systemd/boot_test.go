package systemd_test

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestUnitUnderSystemd runs the packaged unit under a real systemd (PID 1 in
// a systemd-nspawn container booted from an overlay of this machine's root,
// testdata/boot.sh) with testdata/probe as the binary. It proves what the
// offline checks cannot: that the sandbox lets a Go binary read its config
// and credentials, reach MariaDB over TCP and the unix socket, listen on
// loopback, and not write /etc or bind port 80; that Type=notify, reload and
// the watchdog work; and that a watchdog kill or a panic is restarted while
// exit status 2 (bad configuration) is not; that a unit started before
// it is configured waits (inactive, with the steps in the journal) instead
// of failing in a loop; and that two sites of quotesync@.service run side
// by side, each with its own file, token, journal identifier and control
// socket, and that `systemctl reload 'quotesync@*'` reaches both.
//
// It boots a container (about 30 s), so it runs with the soak campaigns:
// QUOTESYNC_SOAK=1, as root, with systemd-nspawn (package systemd-container,
// or its binary unpacked: QUOTESYNC_NSPAWN=/path/to/systemd-nspawn).
func TestUnitUnderSystemd(t *testing.T) {
	if os.Getenv("QUOTESYNC_SOAK") == "" {
		t.Skip("boots a container (~30 s): set QUOTESYNC_SOAK=1 (make soak) to run it")
	}
	if os.Geteuid() != 0 {
		t.Fatal("TestUnitUnderSystemd needs root (mounts, systemd-nspawn)")
	}
	nspawn := os.Getenv("QUOTESYNC_NSPAWN")
	if nspawn == "" {
		var err error
		if nspawn, err = exec.LookPath("systemd-nspawn"); err != nil {
			t.Fatal("systemd-nspawn not found: apt-get install -y systemd-container, or unpack it " +
				"(apt-get download systemd-container; dpkg -x systemd-container_*.deb DIR) and set QUOTESYNC_NSPAWN=DIR/usr/bin/systemd-nspawn")
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}

	probe := filepath.Join(t.TempDir(), "quotesync")
	build := exec.Command("go", "build", "-trimpath", "-o", probe, "./testdata/probe")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build testdata/probe: %v\n%s", err, out)
	}
	dist := t.TempDir()
	stdout, stderr, code := run(t, []string{"QUOTESYNC_BIN=" + probe, "QUOTESYNC_DIST=" + dist},
		"bash", filepath.Join(root, "systemd", "build-deb"), testVersion)
	if code != 0 {
		t.Fatalf("systemd/build-deb: exit %d\n%s", code, stderr)
	}
	deb := strings.TrimSpace(stdout)

	start := time.Now()
	client, _ := debBinary(t, root) // the real quotesync, as sync-now's client
	stdout, stderr, code = run(t, nil, "unshare", "--mount", "--fork", "bash", "testdata/boot.sh", deb, t.TempDir(), nspawn, client)
	if code != 0 {
		t.Fatalf("testdata/boot.sh: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Logf("boot, drive the unit, power off: %v", time.Since(start).Round(time.Second))

	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		got[k] = v
	}
	want := map[string]string{
		"install.enabled": "disabled",
		"install.active":  "inactive",
		"start.state":     "active/running",
		"start.watchdog":  "5min",

		"probe.args":                   "[run --config /etc/quotesync/config.yaml]",
		"probe.config":                 "ok",
		"probe.credential.token":       "ok",
		"probe.credential.db-password": "ok",
		"probe.credentials-dir":        "permission denied",
		"probe.write.etc":              "read-only file system",
		"probe.write.tmp":              "ok",
		"probe.listen.9464":            "ok",
		"probe.listen.80":              "permission denied",
		"probe.setpriority":            "operation not permitted", // ~@resources, EPERM not SIGSYS
		"probe.watchdog-usec":          "300000000",
		"probe.ready":                  "ok",
		"probe.reload":                 "ok",
		"probe.runtime-directory":      "/run/quotesync",
		"probe.control":                "ok",
		// The real `quotesync sync-now`, as root outside the sandbox,
		// reaches the socket the service made in its RuntimeDirectory=.
		"control.socket": "660 quotesync",
		"control.answer": "started exit 0",
		"probe.sync-now": "started",

		"watchdog.restarted": "yes",
		"watchdog.abort":     "yes",
		"panic.restarted":    "yes",
		"panic.abort":        "yes",
		"exit1.restarted":    "yes",
		"exit1.abort":        "no",
		"exit2.state":        "failed",
		"exit2.restarted":    "no",
		"exit2.status":       "2",
		// A missing db-password file is an empty credential
		// (SetCredential= default), not 243/CREDENTIALS.
		"nocredential.state": "active",
		// Started before the token is in place, then with the example's
		// address: skipped by the start conditions, not failed, not
		// restarted, and the status or the journal says what to do.
		"notoken.state":    "inactive/success",
		"notoken.restarts": "0",
		"notoken.message":  "yes",
		"example.state":    "inactive/success",
		"example.restarts": "0",
		"example.message":  "yes",

		// Two sites of quotesync@.service at once, each with its own
		// file, token, journal identifier and runtime directory; one
		// reload of the pattern reaches both.
		"site.north.state":             "active/running",
		"site.north.args":              "[run --config /etc/quotesync/sites/north.yaml --site north]",
		"site.north.identifier":        "quotesync@north",
		"site.north.token":             "own",
		"site.north.runtime-directory": "/run/quotesync@north",
		"site.north.control":           "660 quotesync",
		"site.north.sync-now":          "started exit 0",
		"site.north.reload":            "1",
		"site.south.state":             "active/running",
		"site.south.args":              "[run --config /etc/quotesync/sites/south.yaml --site south]",
		"site.south.identifier":        "quotesync@south",
		"site.south.token":             "own",
		"site.south.runtime-directory": "/run/quotesync@south",
		"site.south.control":           "660 quotesync",
		"site.south.reload":            "1",
		"site.east.state":              "inactive/success",
		"site.east.message":            "yes",
		"site.stopped":                 "0",
	}
	// The database probes count where this machine has a MariaDB to reach.
	if _, err := os.Stat("/run/mysqld/mysqld.sock"); err == nil {
		want["probe.db.unix"] = "ok"
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:3306", time.Second); err == nil {
		c.Close()
		want["probe.db.tcp"] = "ok"
	}
	compared := map[string]string{}
	for k := range want {
		if v, ok := got[k]; ok {
			compared[k] = v
		}
	}
	if diff := cmp.Diff(want, compared); diff != "" {
		t.Errorf("unit under systemd (-want +got):\n%s\nall output:\n%s\nstderr:\n%s", diff, stdout, stderr)
	}
}
