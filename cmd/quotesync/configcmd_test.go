package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/cmd/internal/config"
)

// TestConfigBinary runs `quotesync config` on a real configuration whose
// token comes from a credential file and whose database password comes
// from an environment variable: every key is listed with its origin, the
// defaults are filled in, the secrets appear only as where they come
// from, and no secret value appears in either output.
func TestConfigBinary(t *testing.T) {
	t.Parallel()
	const pwEnv, pw = "QUOTESYNC_CFG_TEST_PW", "pw-CONFIG-verb-9a3c"
	e := newCLIEnv(t, func(fc *config.File) {
		fc.Shop.PasswordFile, fc.Shop.PasswordEnv = "", pwEnv
		fc.Remote.Timeout = 0 // the default applies
		fc.Sync.Concurrency = 7
	})
	env := append(e.environ(), pwEnv+"="+pw)
	secrets := append(e.secrets(), pw)
	noSecret := func(r cliResult) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(r.Stdout+r.Stderr, s) {
				t.Errorf("quotesync config printed a secret:\n%s", r)
			}
		}
	}

	r := cliRun(t, env, e.bin, "config", "--config", e.Conf)
	noSecret(r)
	if r.Code != exitOK || r.Stderr != "" {
		t.Fatalf("quotesync config: %s", r)
	}
	for _, want := range []string{
		"remote.timeout ", "30s", "sync.concurrency ", "control.socket ", "shop.queries.line_items ",
		"secret file", "environment", "variable " + pwEnv + " (set)",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("quotesync config lacks %q:\n%s", want, r.Stdout)
		}
	}

	r = cliRun(t, env, e.bin, "config", "--config", e.Conf, "--json")
	noSecret(r)
	var es []config.Entry
	if err := json.Unmarshal([]byte(r.Stdout), &es); err != nil || r.Code != exitOK {
		t.Fatalf("quotesync config --json: %v\n%s", err, r)
	}
	got := map[string]config.Entry{}
	for _, en := range es {
		got[en.Key] = en
	}
	for key, want := range map[string]struct {
		value  string
		origin config.Origin
	}{
		"remote.timeout":   {"30s", config.OriginDefault},
		"sync.concurrency": {"7", config.OriginFile},
		"remote.base_url":  {e.Srv.URL, config.OriginFile},
		"shop.password":    {"(secret, not shown)", config.OriginEnvironment},
		"remote.token":     {"(secret, not shown)", config.OriginSecretFile},
	} {
		if en := got[key]; en.Value != want.value || en.Origin != want.origin {
			t.Errorf("%s = %+v, want %q from %s", key, en, want.value, want.origin)
		}
	}
	if d := got["remote.token"].Detail; !strings.Contains(d, e.Creds+"/token") {
		t.Errorf("remote.token's detail %q does not name the credential file", d)
	}
	if q := got["shop.queries.line_items"].Value; !strings.Contains(q, "\n") && len(q) < 100 {
		t.Errorf("--json cut the SQL: %q", q)
	}

	t.Run("Invalid", func(t *testing.T) {
		data, err := os.ReadFile(e.Conf)
		if err != nil {
			t.Fatal(err)
		}
		bad := strings.Replace(string(data), "concurrency: 7", "concurrency: -3", 1)
		conf := e.Conf + ".bad"
		if err := os.WriteFile(conf, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		r := cliRun(t, env, e.bin, "config", "--config", conf)
		noSecret(r)
		if r.Code != exitUsage || !strings.Contains(r.Stdout, "sync.concurrency") || !strings.Contains(r.Stderr, "does not validate") {
			t.Errorf("quotesync config on an invalid file: %s", r)
		}
	})
}
