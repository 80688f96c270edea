package config

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	qsync "github.com/quotesync/quotesync/sync"
)

// fuzzSecrets are the secrets the fuzzed files may point at; none may ever
// appear in an error.
const (
	fuzzToken    = "fuzz-token-5b8e1d"
	fuzzPassword = "fuzz-password-c47a9f"
)

// FuzzParseConfig feeds arbitrary YAML to the strict decoder and the
// builder: they must never panic, never echo a secret in an error, a file
// that builds has a schedule that fires (three passes ahead, at least
// sync.MinScheduleInterval apart), and it must also re-encode and decode
// to a file that builds.
func FuzzParseConfig(f *testing.F) {
	example, err := os.ReadFile("../../../config.example.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	for _, seed := range []string{
		"",
		"---\n",
		"remote: {base_url: http://x}\n---\nremote: {}\n",
		"remote:\n  base_ulr: http://x\n",
		"remote:\n  timeout: 30\n",
		"remote:\n  token: {value: " + fuzzToken + "}\n",
		"shop:\n  password: " + fuzzPassword + "\n",
		"quote:\n  rates: {Parts: 1e400, RepairLabour: -3, X: [1]}\n",
		"sync:\n  schedule: '@every 0s'\n  time_zone: Mars/Olympus\n",
		"sync:\n  schedule: '0 0 30 2 *'\n",
		"sync:\n  schedule: '@every 1ns'\n",
		"sync:\n  schedule: '@every -5s'\n",
		"sync:\n  schedule: 'CRON_TZ=UTC @every 0s'\n",
		"sync:\n  schedule: 'TZ=Europe/London 0 9 29 2 *'\n",
		"sync:\n  schedule: '@every 1500ms'\n",
		"shop:\n  queries:\n    find_job: 'SELECT :nope'\n    create_job: [1, {a: b}]\n",
		"metrics: {listen: '0.0.0.0:9464', health_max_age: -1s}\n",
		"\t\x00: [",
	} {
		f.Add([]byte(seed))
	}
	env := map[string]string{
		"CREDENTIALS_DIRECTORY": f.TempDir(),
		"QUOTESYNC_TOKEN":       fuzzToken,
		"QUOTESYNC_DB_PASSWORD": fuzzPassword,
	}
	getenv := func(k string) string { return env[k] }
	for _, name := range []string{"token", "db-password"} {
		secret := fuzzToken
		if name == "db-password" {
			secret = fuzzPassword
		}
		if err := os.WriteFile(env["CREDENTIALS_DIRECTORY"]+"/"+name, []byte(secret+"\n"), 0o600); err != nil {
			f.Fatal(err)
		}
	}
	noSecret := func(t *testing.T, what string, err error) {
		if err == nil {
			return
		}
		if msg := err.Error(); strings.Contains(msg, fuzzToken) || strings.Contains(msg, fuzzPassword) {
			t.Fatalf("%s error shows a secret: %s", what, msg)
		}
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		fc, err := Parse(bytes.NewReader(data))
		if err != nil {
			if strings.Contains(string(data), fuzzToken) || strings.Contains(string(data), fuzzPassword) {
				return // the file itself holds the secret; yaml may quote it back
			}
			noSecret(t, "parse", err)
			return
		}
		set, err := fc.Build(BuildOptions{Getenv: getenv, Scope: AllSecrets})
		if err != nil {
			if !strings.Contains(string(data), fuzzToken) && !strings.Contains(string(data), fuzzPassword) {
				noSecret(t, "build", err)
			}
			return
		}
		now := time.Now()
		runs := set.Daemon.Sync.NextRuns(now, 3)
		if len(runs) != 3 {
			t.Fatalf("sync.schedule %q builds but fires %d times: %v", set.Daemon.Sync.Schedule, len(runs), runs)
		}
		for i, prev := 0, now; i < len(runs); i++ {
			if gap := runs[i].Sub(prev); gap <= 0 || (i > 0 && gap < qsync.MinScheduleInterval) {
				t.Fatalf("sync.schedule %q builds but its passes are %s apart: %v", set.Daemon.Sync.Schedule, gap, runs)
			}
			prev = runs[i]
		}
		out, err := yaml.Marshal(fc)
		if err != nil {
			t.Fatalf("a file that builds does not re-encode: %v", err)
		}
		again, err := Parse(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("re-encoded file does not parse: %v\n%s", err, out)
		}
		if _, err := again.Build(BuildOptions{Getenv: getenv, Scope: AllSecrets}); err != nil {
			t.Fatalf("re-encoded file does not build: %v\n%s", err, out)
		}
	})
}
