package main

// Bad configuration and command lines through the real binary: schedules
// that would leave the daemon idle, an oversized file, a dry run on a
// fresh install, --json without --dry-run.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// TestBadSchedule: a schedule that never fires or asks for passes faster
// than cron can keep is refused by check and at the start of run and once
// (exit 2, sync.schedule and the fix named), instead of a daemon that sits
// idle with a healthy /healthz.
func TestBadSchedule(t *testing.T) {
	bin := quotesyncBinary(t)
	example, err := os.ReadFile(exampleConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	const from = `  schedule: "@every 1m"` + "\n"
	if !strings.Contains(string(example), from) {
		t.Fatalf("config.example.yaml has no %q to replace", from)
	}
	tests := []struct{ schedule, want string }{
		{"0 0 30 2 *", "never fires"},
		{"@every 0s", "at least 1s"},
		{"@every 1ns", "at least 1s"},
		{"@every -5s", "at least 1s"},
		{"CRON_TZ=UTC @every 0s", "at least 1s"},
		{"@every 1500ms", "whole number of seconds"},
	}
	env := append(os.Environ(), "CREDENTIALS_DIRECTORY="+t.TempDir())
	for _, tt := range tests {
		t.Run(strings.NewReplacer(" ", "_", "*", "x", "@", "").Replace(tt.schedule), func(t *testing.T) {
			conf := filepath.Join(t.TempDir(), "config.yaml")
			text := strings.Replace(string(example), from, "  schedule: "+strconv.Quote(tt.schedule)+"\n", 1)
			if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, verb := range []string{"check", "run", "once"} {
				r := cliRun(t, env, bin, verb, "--config", conf)
				out := r.Stdout + r.Stderr
				if r.Code != exitUsage {
					t.Errorf("%s: exit %d, want 2:\n%s", verb, r.Code, r)
				}
				for _, w := range []string{"sync.schedule", tt.want, "e.g. "} {
					if !strings.Contains(out, w) {
						t.Errorf("%s: output lacks %q:\n%s", verb, w, out)
					}
				}
			}
		})
	}
}

// TestCheckShowsSchedule: check shows the next three passes of a valid
// schedule, in its time zone.
func TestCheckShowsSchedule(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, func(fc *config.File) { fc.Sync.Schedule = "*/15 * * * *" })
	r := e.run("check", "--config", e.Conf)
	if r.Code != exitOK {
		t.Fatalf("check: %s", r)
	}
	l := checkLine(r.Stdout, "sync.schedule")
	stamp := `[A-Z][a-z]{2} \d{4}-\d\d-\d\d \d\d:(00|15|30|45):00 UTC`
	if !regexp.MustCompile(`^ok .*"\*/15 \* \* \* \*" in time zone UTC: next passes ` + stamp + `, ` + stamp + `, ` + stamp).MatchString(l) {
		t.Errorf("sync.schedule line %q, want the next three quarter hours in UTC\n%s", l, r.Stdout)
	}
}

// TestHugeConfigFile: a 100 MB file given as the configuration is refused
// without being read (exit 2, the file, its size and the cap named), and
// the process stays small: it used to read the file whole (553 MB RSS).
func TestHugeConfigFile(t *testing.T) {
	bin := quotesyncBinary(t)
	conf := filepath.Join(t.TempDir(), "config.yaml")
	f, err := os.Create(conf)
	if err != nil {
		t.Fatal(err)
	}
	// A YAML comment line repeated: a file that would parse, slowly.
	line := []byte("# " + strings.Repeat("x", 1021) + "\n")
	for range 100 << 10 {
		if _, err := f.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"check", "run"} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd, maxRSS := measured(ctx, t, bin, verb, "--config", conf)
		out, _ := cmd.CombinedOutput()
		cancel()
		code := cmd.ProcessState.ExitCode()
		if code != exitUsage {
			t.Errorf("%s: exit %d, want 2:\n%s", verb, code, out)
		}
		for _, w := range []string{conf, "104857600 bytes", "larger than 1024 KiB"} {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s: output lacks %q:\n%s", verb, w, out)
			}
		}
		rss := maxRSS() // KiB on Linux
		t.Logf("%s on a 100 MB file: max RSS %d KiB", verb, rss)
		if rss > 64<<10 {
			t.Errorf("%s on a 100 MB file: max RSS %d KiB, want under 64 MiB (the file must not be read)", verb, rss)
		}
	}
}

// TestOnceDryRunFreshInstall: on a database where quotesync never ran, a
// dry run plans as if nothing were tracked (the shop's job found, a job
// create_job would make) and creates nothing: no state table, no change
// to any shop table, no remote write.
func TestOnceDryRunFreshInstall(t *testing.T) {
	t.Parallel()
	e := newE2E(t, e2eOptions{})
	reqF := e.seed(sampleshop.ClaimNoLines, "")
	reqN := e.seed("CLM-FRESH-NEW", "FRESH01")
	db0, calls0 := e.dbFingerprint(), e.Emu.Calls()
	for name := range db0 {
		if strings.HasPrefix(name, "quotesync_") {
			t.Fatalf("the fresh database already holds %s", name)
		}
	}

	res := e.once("--dry-run", "--json")
	if res.Code != exitOK {
		t.Fatalf("once --dry-run --json on a fresh install: exit %d\n%s", res.Code, res.Output)
	}
	var plan struct {
		Pending, Tracked int
		Actions          []struct{ Request, Job, Do string }
	}
	if err := json.Unmarshal([]byte(res.Output[strings.Index(res.Output, "{"):]), &plan); err != nil {
		t.Fatalf("no JSON plan: %v\n%s", err, res.Output)
	}
	got := map[string]string{}
	for _, a := range plan.Actions {
		got[a.Request] = a.Do + " " + a.Job
	}
	want := map[string]string{reqF: "reserve job and accept " + sampleshop.JobNoLines, reqN: "create job and accept "}
	if diff := cmp.Diff(want, got); diff != "" || plan.Pending != 2 || plan.Tracked != 0 {
		t.Errorf("plan (-want +got):\n%s\n%+v", diff, plan)
	}
	if text := e.once("--dry-run"); text.Code != exitOK || !strings.Contains(text.Output, reqN) {
		t.Errorf("once --dry-run on a fresh install: exit %d\n%s", text.Code, text.Output)
	}
	if diff := cmp.Diff(db0, e.dbFingerprint()); diff != "" {
		t.Errorf("the dry runs changed the database (-before +after; a state table created?):\n%s", diff)
	}
	e2eWantCalls(t, "two dry runs", e2eCallsDiff(calls0, e.Emu.Calls()), map[string]int{e2eRouteList: 2})
}

// TestOnceJSONNeedsDryRun: --json asks for a plan; without --dry-run it
// is refused before anything is read or written (a user who asks for a
// plan never gets writes).
func TestOnceJSONNeedsDryRun(t *testing.T) {
	t.Parallel()
	e := newE2E(t, e2eOptions{})
	e.seed(sampleshop.ClaimNoLines, "")
	db0, calls0 := e.dbFingerprint(), e.Emu.Calls()
	res := e.once("--json")
	if res.Code != exitUsage || !strings.Contains(res.Output, "needs --dry-run") || !strings.Contains(res.Output, "quotesync once --dry-run --json") {
		t.Errorf("once --json: exit %d, want 2 naming --dry-run:\n%s", res.Code, res.Output)
	}
	if diff := cmp.Diff(db0, e.dbFingerprint()); diff != "" {
		t.Errorf("once --json changed the database (-before +after):\n%s", diff)
	}
	if d := e2eCallsDiff(calls0, e.Emu.Calls()); len(d) != 0 {
		t.Errorf("once --json called the remote: %s", e2eFmtCalls(d))
	}
}

// TestClearTextRemoteRefused: a remote.base_url or token endpoint over
// plain http beyond loopback, where the token or the client secret would
// cross the network in clear, is refused by check and at the start of run
// (exit 2), naming the key and the fix; the same to loopback is not.
func TestClearTextRemoteRefused(t *testing.T) {
	bin := quotesyncBinary(t)
	example, err := os.ReadFile(exampleConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	const from = "  base_url: https://api.insurer.example\n"
	if !strings.Contains(string(example), from) {
		t.Fatalf("config.example.yaml has no %q to replace", from)
	}
	env := append(os.Environ(), "CREDENTIALS_DIRECTORY="+t.TempDir())
	write := func(text string) string {
		conf := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return conf
	}
	conf := write(strings.Replace(string(example), from, "  base_url: http://api.insurer.example\n", 1))
	for _, verb := range []string{"check", "run"} {
		r := cliRun(t, env, bin, verb, "--config", conf)
		if r.Code != exitUsage {
			t.Errorf("%s: exit %d, want 2:\n%s", verb, r.Code, r)
		}
		for _, w := range []string{`remote.base_url: "http://api.insurer.example" is plain http`, "use https://api.insurer.example"} {
			if out := r.Stdout + r.Stderr; !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", verb, w, out)
			}
		}
	}
	// On loopback the file is valid: check goes on to the secrets (none
	// here) instead of failing the config file line.
	conf = write(strings.Replace(string(example), from, "  base_url: http://127.0.0.1:9/\n", 1))
	r := cliRun(t, env, bin, "check", "--config", conf)
	if l := checkLine(r.Stdout, "config file"); !strings.HasPrefix(l, "ok") {
		t.Errorf("check of http:// to loopback: config file line %q, want ok:\n%s", l, r)
	}
}
