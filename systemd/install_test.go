package systemd_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// cannotInstall stops the install check when the machine cannot give it a
// throwaway root. On CI (CI set, as .ci/run does) that is a failure: the
// check must run there. Elsewhere (a developer's machine, not root) it skips
// and says why and how to run it.
func cannotInstall(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("cannot install the package into a throwaway root: %s (CI is set, so this check must run)", why)
	}
	t.Skipf("cannot install the package into a throwaway root: %s; run as root (e.g. sudo go test ./systemd/) or with CI=1 to make this a failure", why)
}

// checkInstall installs, upgrades, removes and purges the package with the
// real dpkg and adduser in an overlay of / inside a private mount namespace
// (testdata/install.sh; nothing reaches the host), and compares what the
// maintainer scripts did with what they must do: create the user, hand the
// config to its group, reload systemd, never enable or start the service,
// restart a running one on upgrade, stop it on removal, clean up on purge.
func checkInstall(t *testing.T, deb string) {
	if os.Geteuid() != 0 {
		cannotInstall(t, "dpkg and mount need root")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		cannotInstall(t, "unshare (util-linux) is not in PATH")
	}
	if out, err := exec.Command(unshare, "--mount", "--fork", "true").CombinedOutput(); err != nil {
		cannotInstall(t, "no private mount namespace: "+strings.TrimSpace(string(out)))
	}

	start := time.Now()
	stdout, stderr, code := run(t, nil, unshare, "--mount", "--fork", "bash", "testdata/install.sh", deb, t.TempDir())
	if code != 0 {
		t.Fatalf("testdata/install.sh: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Logf("install, upgrade, remove, purge in a throwaway root: %v", time.Since(start).Round(time.Millisecond))

	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		got[k] = v
	}
	want := map[string]string{
		// install: a user and group, the config readable by the group, the
		// secrets directory root-only; systemd reloaded, nothing started.
		"install.systemctl":   "--system daemon-reload",
		"install.status":      "install ok installed",
		"install.conffiles":   "/etc/quotesync/config.yaml",
		"install.user":        "quotesync:/nonexistent:/usr/sbin/nologin",
		"install.group":       "quotesync",
		"install.config":      "640 root quotesync",
		"install.credentials": "700 root root",
		"install.unit":        "644 root root",
		"install.binary":      "755 root root",
		"install.enabled":     "no",
		"install.runs":        "yes",
		"install.verify":      "clean", // systemd-analyze verify on the installed unit
		"install.sites":       "755 root root",
		"install.template":    "644 root root",
		"install.verify-site": "clean", // the installed template, as quotesync@north.service
		// upgrade: a running service (or site) moves to the new binary; a stopped one stays stopped.
		"upgrade.systemctl": "--system daemon-reload;try-restart quotesync.service quotesync@*.service",
		// remove: stopped, every site too; config and secrets kept.
		"remove.systemctl":   "stop quotesync.service quotesync@*.service;--system daemon-reload",
		"remove.site-token":  "600 root root",
		"remove.site-config": "640 root quotesync",
		"remove.status":      "deinstall ok config-files",
		"remove.binary":      "absent",
		"remove.config":      "640 root quotesync",
		"remove.token":       "600 root root",
		"remove.user":        "quotesync:/nonexistent:/usr/sbin/nologin",
		// purge: config, secrets, enablement link, user and group gone.
		"purge.systemctl":    "--system daemon-reload",
		"purge.etc":          "absent",
		"purge.enabled":      "no",
		"purge.enabled-site": "no",
		"purge.user":         "absent",
		"purge.group":        "absent",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("install probes (-want +got):\n%s\nstderr of install.sh:\n%s", diff, stderr)
	}
}
