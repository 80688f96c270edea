package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeFile writes a config file and returns its path.
func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantEntry is an entry a listing must hold.
type wantEntry struct {
	key, value string
	origin     Origin
	detail     string // a substring; "" = any
}

// checkEntries fails for each of want that got lacks or holds otherwise.
func checkEntries(t *testing.T, got map[string]Entry, want []wantEntry) {
	t.Helper()
	for _, tt := range want {
		e, ok := got[tt.key]
		if !ok {
			t.Errorf("%s: not listed", tt.key)
			continue
		}
		if e.Value != tt.value || e.Origin != tt.origin || !strings.Contains(e.Detail, tt.detail) {
			t.Errorf("%s = %+v, want value %q, origin %s, detail with %q", tt.key, e, tt.value, tt.origin, tt.detail)
		}
	}
}

func entryMap(es []Entry) map[string]Entry {
	m := map[string]Entry{}
	for _, e := range es {
		m[e.Key] = e
	}
	return m
}

// TestEffective: values from the file, defaults for what it leaves out
// (and for its zero values), secrets by their source only.
func TestEffective(t *testing.T) {
	const pw, tok = "pw-EFFECTIVE-77c1", "tok-EFFECTIVE-0b5e"
	path := writeFile(t, `
remote:
  base_url: https://api.insurer.example
  token: {env: QS_TOKEN}
  max_attempts: 0
shop:
  database: workshop
  password_file: ${CREDENTIALS_DIRECTORY}/db-password
  work_types: {PNT: RefinishLabour}
sync:
  concurrency: 8
  time_zone: Europe/London
`)
	env := map[string]string{"QS_TOKEN": tok, "CREDENTIALS_DIRECTORY": "/run/credentials/quotesync.service"}
	es, err := Effective(path, "", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	got := entryMap(es)
	checkEntries(t, got, []wantEntry{
		{"remote.base_url", "https://api.insurer.example", OriginFile, ""},
		{"remote.timeout", "30s", OriginDefault, ""},
		{"remote.max_attempts", "4", OriginDefault, "zero value means the default"},
		{"remote.token.env", "QS_TOKEN", OriginFile, ""},
		{"remote.token", hiddenValue, OriginEnvironment, "variable QS_TOKEN (set)"},
		{"shop.password", hiddenValue, OriginSecretFile, "here: /run/credentials/quotesync.service/db-password"},
		{"shop.password_file", "${CREDENTIALS_DIRECTORY}/db-password", OriginFile, "here: /run/credentials/quotesync.service/db-password"},
		{"shop.addr", "127.0.0.1:3306", OriginDefault, ""},
		{"shop.lock_name", "quotesync.workshop.quotesync_", OriginDefault, ""},
		{"shop.work_types.PNT", "RefinishLabour", OriginFile, ""},
		{"shop.params", "none", OriginDefault, ""},
		{"sync.concurrency", "8", OriginFile, ""},
		{"sync.time_zone", "Europe/London", OriginFile, ""},
		{"sync.schedule", "@every 1m", OriginDefault, ""},
		{"log.format", "json", OriginDefault, ""},
		{"control.socket", DefaultControlSocket, OriginDefault, ""},
	})
	for _, k := range []string{"shop.password_env", "remote.token.file", "remote.token.value", "shop.password", "remote.token.oauth2.token_url"} {
		if e, ok := got[k]; ok && e.Value != hiddenValue {
			t.Errorf("%s listed as %+v: an unset alternative or a refused key has no entry", k, e)
		}
	}
	env["QS_TOKEN"] = ""
	es, _ = Effective(path, "", func(k string) string { return env[k] })
	if e := entryMap(es)["remote.token"]; !strings.Contains(e.Detail, "not set in this environment") {
		t.Errorf("remote.token with QS_TOKEN unset: %+v", e)
	}

	t.Run("LiteralSecretsHidden", func(t *testing.T) {
		path := writeFile(t, "remote:\n  token: {value: "+tok+"}\nshop:\n  password: "+pw+"\n")
		es, err := Effective(path, "", func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if strings.Contains(e.Value+e.Detail, tok) || strings.Contains(e.Value+e.Detail, pw) {
				t.Errorf("%s shows a secret: %+v", e.Key, e)
			}
		}
		if e := entryMap(es)["shop.password"]; e.Value != hiddenValue || !strings.Contains(e.Detail, "refused") {
			t.Errorf("shop.password written in the file: %+v, want hidden and refused", e)
		}
	})
}

// TestEffectiveListsEveryKey: every key of the file structs is in the
// listing of the example configuration (keys added later included), and
// every default names a key that exists.
func TestEffectiveListsEveryKey(t *testing.T) {
	es, err := Effective(exampleConfigPath, "", func(string) string { return "/creds" })
	if err != nil {
		t.Fatal(err)
	}
	listed := entryMap(es)
	listedUnder := func(k string) bool {
		for _, e := range es {
			if strings.HasPrefix(e.Key, k+".") || strings.HasPrefix(e.Key, k+"[") {
				return true
			}
		}
		return false
	}
	keys := yamlKeys(reflect.TypeFor[File](), "")
	known := map[string]bool{}
	for _, k := range keys {
		known[k] = true
		leaf := k[strings.LastIndex(k, ".")+1:]
		switch {
		case listed[k].Key != "" || listedUnder(k):
		case strings.HasPrefix(k, "remote.token.oauth2"): // the example uses a token file
		case k == "remotes": // the example has one insurer: remote:
		case isSecretName(leaf) || isSecretSource(leaf): // refused, or an alternative not taken
		default:
			t.Errorf("%s is not listed by Effective", k)
		}
	}
	for _, k := range yamlKeys(reflect.TypeFor[RemoteEntry](), "remotes") {
		known[k] = true
	}
	for k := range keyDefaults {
		if !known[k] {
			t.Errorf("keyDefaults has %s, which the file structs do not have", k)
		}
	}
}
