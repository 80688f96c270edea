package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/cmd/internal/config"
)

// TestManPage: the man page the binary makes lists every command with
// its whole help (so a new command cannot be left out), and groff reads
// it without a warning.
func TestManPage(t *testing.T) {
	bin := quotesyncBinary(t)
	r := cliRun(t, os.Environ(), bin, "manpage")
	if r.Code != exitOK || r.Stderr != "" {
		t.Fatalf("quotesync manpage: %s", r)
	}
	page := r.Stdout
	if !strings.HasPrefix(page, ".TH QUOTESYNC 8 ") {
		t.Errorf("no .TH QUOTESYNC 8 header: %.80q", page)
	}
	for name := range verbs {
		if !strings.Contains(page, `.SS "quotesync `+roffEscape(name)+`"`) {
			t.Errorf("the man page has no section for %s", name)
		}
		help := cliRun(t, os.Environ(), bin, name, "--help").Stdout
		first, _, _ := strings.Cut(help, "\n")
		if !strings.Contains(page, roffEscape(first)) {
			t.Errorf("the man page lacks %s's help (%q)", name, first)
		}
	}
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Fatal("groff is needed to check the man page: apt-get install groff-base (.ci/tools does)")
	}
	path := filepath.Join(t.TempDir(), "quotesync.8")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z", path).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("groff -man -ww: %v\n%s", err, out)
	}
}

// TestConfiguredBinary: the unit's start condition says "not configured
// yet" (exit 1, with what to do) while the token is missing or empty or
// the address is still the example's, and lets a configured service (or
// one whose file is wrong in another way, for run to name) start.
func TestConfiguredBinary(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, nil)
	if r := e.run("configured", "--config", e.Conf); r.Code != exitOK || r.Stdout != "" {
		t.Errorf("configured service: %s", r)
	}
	notYet := func(what, want string) {
		t.Helper()
		r := e.run("configured", "--config", e.Conf)
		if r.Code != exitFailure {
			t.Errorf("%s: exit %d, want 1:\n%s", what, r.Code, r)
		}
		for _, s := range []string{"not configured yet", want, "/etc/quotesync/credentials/token", "quotesync check", "systemctl enable --now quotesync"} {
			if !strings.Contains(r.Stdout, s) {
				t.Errorf("%s: output lacks %q:\n%s", what, s, r.Stdout)
			}
		}
	}
	e.writeSecret("token", "")
	notYet("empty token", filepath.Join(e.Creds, "token"))
	if err := os.Remove(filepath.Join(e.Creds, "token")); err != nil {
		t.Fatal(err)
	}
	notYet("no token file", filepath.Join(e.Creds, "token"))
	e.writeSecret("token", cliToken)
	e.writeConfig(func(fc *config.File) { fc.Remote.BaseURL = "https://api.insurer.example" })
	notYet("the example's address", "remote.base_url is still the example's")
	// A site of the template unit: its own paths and unit.
	r := e.run("configured", "--config", e.Conf, "--site", "north")
	for _, s := range []string{"site north is not configured yet", "/etc/quotesync/sites/north/token", "quotesync check --site north", "systemctl enable --now quotesync@north"} {
		if r.Code != exitFailure || !strings.Contains(r.Stdout, s) {
			t.Errorf("configured --site north: exit %d, output lacks %q:\n%s", r.Code, s, r.Stdout)
		}
	}

	if err := os.WriteFile(e.Conf, []byte("remote:\n  base_ulr: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.run("configured", "--config", e.Conf); r.Code != exitOK {
		t.Errorf("a file that does not parse is run's to name (exit 2 there), not a wait: %s", r)
	}
}
