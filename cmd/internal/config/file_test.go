package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// exampleConfigPath is the top-level config.example.yaml.
const exampleConfigPath = "../../../config.example.yaml"

// cfgExampleEnv resolves ${CREDENTIALS_DIRECTORY} to a directory holding a
// token and an empty database password.
func cfgExampleEnv(t *testing.T, token, password string) func(string) string {
	t.Helper()
	dir := t.TempDir()
	for name, v := range map[string]string{"token": token, "db-password": password} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return func(k string) string {
		if k == "CREDENTIALS_DIRECTORY" {
			return dir
		}
		return ""
	}
}

func loadExample(t *testing.T) *File {
	t.Helper()
	fc, err := Load(exampleConfigPath)
	if err != nil {
		t.Fatalf("config.example.yaml: %v", err)
	}
	return fc
}

// TestExampleConfigIsValid parses config.example.yaml strictly, builds it
// with its secrets, and checks that its mapping is the sample shop's,
// byte for byte.
func TestExampleConfigIsValid(t *testing.T) {
	fc := loadExample(t)
	set, err := fc.Build(BuildOptions{Getenv: cfgExampleEnv(t, "example-token", ""), Scope: AllSecrets})
	if err != nil {
		t.Fatalf("build config.example.yaml: %v", err)
	}
	want := sampleshop.Mapping()
	if diff := cmp.Diff(want.Queries, set.Daemon.Shop.Queries); diff != "" {
		t.Errorf("shop.queries differ from sampleshop.Mapping() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Params, set.Daemon.Shop.Params); diff != "" {
		t.Errorf("shop.params differ (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sampleshop.WorkTypes(), set.Daemon.Shop.WorkTypes); diff != "" {
		t.Errorf("shop.work_types differ (-want +got):\n%s", diff)
	}
	if got, want := set.Daemon.Sync.Schedule, "@every 1m"; got != want {
		t.Errorf("sync.schedule = %q, want %q", got, want)
	}
	if got, want := set.Metrics.Listen, ""; got != want {
		t.Errorf("metrics.listen = %q, want %q (off by default)", got, want)
	}
	if !strings.HasSuffix(set.TokenFrom, "/token") || !strings.HasSuffix(set.PasswordFrom, "/db-password") {
		t.Errorf("secrets from %q and %q, want the credentials directory's token and db-password", set.TokenFrom, set.PasswordFrom)
	}
	if got, want := set.Daemon.Insurers[0].Remote.BookingDateLayout, time.DateOnly; got != want {
		t.Errorf("remote.booking_date_layout = %q, want %q", got, want)
	}
}

// yamlKeys lists the key paths of the file structs ("remote.token.file");
// maps and lists are leaves.
func yamlKeys(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		path := strings.TrimPrefix(prefix+"."+name, ".")
		out = append(out, path)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ft != reflect.TypeFor[Decimal]() {
			out = append(out, yamlKeys(ft, path)...)
		}
	}
	return out
}

// nodeKeys lists the key paths present in a YAML mapping node.
func nodeKeys(n *yaml.Node, prefix string, into map[string]bool) {
	if n.Kind == yaml.DocumentNode {
		for _, c := range n.Content {
			nodeKeys(c, prefix, into)
		}
		return
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		path := strings.TrimPrefix(prefix+"."+n.Content[i].Value, ".")
		into[path] = true
		nodeKeys(n.Content[i+1], path, into)
	}
}

// TestExampleDocumentsEveryKey fails when a key of the file structs is
// missing from config.example.yaml, so the documentation cannot drift from
// the code. A key counts when it is set, or, for the alternatives and the
// refused keys (remote.token.env, shop.password), when it appears
// commented out ("# env:") in its section.
func TestExampleDocumentsEveryKey(t *testing.T) {
	data, err := os.ReadFile(exampleConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	nodeKeys(&doc, "", present)
	text := string(data)
	keys := yamlKeys(reflect.TypeFor[File](), "")
	if len(keys) < 60 {
		t.Fatalf("found only %d keys in File; the reflection walk is broken", len(keys))
	}
	for _, k := range keys {
		if present[k] {
			continue
		}
		leaf := k[strings.LastIndex(k, ".")+1:]
		commented := regexp.MustCompile(`(?m)^\s*(#\s*)+` + regexp.QuoteMeta(leaf) + `:`)
		if !commented.MatchString(text) {
			t.Errorf("config.example.yaml does not document %s (set it, or show it commented out as '# %s: …')", k, leaf)
		}
	}
	// And the other way round: every key set in the example exists.
	known := map[string]bool{}
	for _, k := range keys {
		known[k] = true
	}
	for k := range present {
		if known[k] || strings.HasPrefix(k, "shop.params.") || strings.HasPrefix(k, "shop.work_types.") || strings.HasPrefix(k, "quote.rates.") {
			continue
		}
		t.Errorf("config.example.yaml sets %s, which the file structs do not have", k)
	}
}

// TestParseConfigErrors feeds broken files to the strict decoder and the
// validation; each error must name the line or the key, and the fix.
func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // substrings of the error
	}{
		{"UnknownKey", "remote:\n  base_url: https://x.example\n  base_ulr: y\n", []string{"line 3", "unknown key base_ulr", "config.example.yaml"}},
		{"WrongType", "sync:\n  concurrency: four\n", []string{"line 2", "four"}},
		{"BareDuration", "remote:\n  timeout: 30\n", []string{"line 2", "duration such as 30s"}},
		{"BadRate", "quote:\n  rates:\n    RepairLabour: cheap\n", []string{"line 3", "is not a number"}},
		{"TwoDocuments", "log:\n  level: info\n---\nlog:\n  level: debug\n", []string{"more than one YAML document"}},
		{"LiteralToken", baseYAML + "  token:\n    value: tok-LITERAL-9f2e\n", []string{"remote.token.value", "must not be written in the YAML"}},
		{"LiteralPassword", strings.Replace(baseYAML, "shop:\n", "shop:\n  password: pw-LITERAL-41aa\n", 1) + "  token: {file: /run/token}\n", []string{"shop.password", "password_file"}},
		{"TwoTokenSources", baseYAML + "  token: {file: /a, env: B}\n", []string{"remote.token: set exactly one"}},
		{"NonLoopbackMetrics", baseYAML + "  token: {env: T}\nmetrics:\n  listen: 0.0.0.0:9464\n", []string{"metrics.listen", "not a loopback address", "metrics.users_file", "quotesync passwd", "metrics.auth: none"}},
		{"MetricsNoPort", baseYAML + "  token: {env: T}\nmetrics:\n  listen: 127.0.0.1\n", []string{"metrics.listen", "host:port"}},
		{"BadLogLevel", baseYAML + "  token: {env: T}\nlog:\n  level: loud\n", []string{"log.level", "debug, info, warn or error"}},
		{"BadSchedule", baseYAML + "  token: {env: T}\nsync:\n  schedule: every minute\n", []string{"sync.schedule"}},
		{"MissingBaseURL", "remote:\n  token: {env: T}\n", []string{"remote.base_url: required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc, err := Parse(strings.NewReader(tt.yaml))
			if err == nil {
				_, err = fc.Build(BuildOptions{Getenv: func(string) string { return "" }, Scope: NoSecrets})
			}
			if err == nil {
				t.Fatalf("no error for:\n%s", tt.yaml)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			for _, secret := range []string{"tok-LITERAL-9f2e", "pw-LITERAL-41aa"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q repeats the secret", err)
				}
			}
		})
	}
}

// baseYAML is the start of a file whose remote section is valid once a
// token line follows; the shop section is valid too.
const baseYAML = `shop:
  user: quotesync
  database: shop
  work_types: {PART: Parts}
  queries:
    find_job: SELECT job FROM j WHERE claim = :claim_number
    line_items: SELECT job, line_id, line_no, code, description, quantity, price FROM l WHERE job IN (:jobs)
    estimate_state: SELECT job, final FROM s WHERE job IN (:jobs)
remote:
  base_url: https://api.insurer.example
`

// TestBuildAcceptsVariants covers the valid corners of validation.
func TestBuildAcceptsVariants(t *testing.T) {
	tests := []struct{ name, yaml string }{
		{"LoopbackV6", baseYAML + "  token: {env: T}\nmetrics:\n  listen: \"[::1]:9464\"\n"},
		{"Localhost", baseYAML + "  token: {env: T}\nmetrics:\n  listen: localhost:0\n"},
		{"AllowedNonLoopback", baseYAML + "  token: {env: T}\nmetrics:\n  listen: 0.0.0.0:9464\n  allow_non_loopback: true\n"},
		{"OAuth2", baseYAML + "  token:\n    oauth2: {token_url: https://auth.example/token, client_id: c, client_secret_env: S}\n"},
		{"Empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc, err := Parse(strings.NewReader(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if tt.name == "Empty" {
				if diff := cmp.Diff(&File{}, fc, cmp.AllowUnexported(Decimal{}, File{})); diff != "" {
					t.Errorf("an empty file is not all defaults:\n%s", diff)
				}
				return
			}
			if _, err := fc.Build(BuildOptions{Getenv: func(string) string { return "" }, Scope: NoSecrets}); err != nil {
				t.Fatalf("build: %v", err)
			}
		})
	}
}

// TestSecretsComeFromFiles resolves ${CREDENTIALS_DIRECTORY} and reports a
// missing variable or file by key and path, never by content.
func TestSecretsComeFromFiles(t *testing.T) {
	const secret = "pw-SECRET-0c9d"
	yml := strings.Replace(baseYAML, "shop:\n", "shop:\n  password_file: ${CREDENTIALS_DIRECTORY}/db-password\n", 1) +
		"  token: {file: \"${CREDENTIALS_DIRECTORY}/token\"}\n"
	fc, err := Parse(strings.NewReader(yml))
	if err != nil {
		t.Fatal(err)
	}
	env := cfgExampleEnv(t, "tok-SECRET-5b1e", secret)
	set, err := fc.Build(BuildOptions{Getenv: env, Scope: AllSecrets})
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Daemon.Shop.Password; got != secret {
		t.Errorf("password = %q, want the file's content", got)
	}
	if s := set.Daemon.Shop.String(); strings.Contains(s, secret) {
		t.Errorf("shopdb.Config.String() shows the password: %s", s)
	}
	_, err = fc.Build(BuildOptions{Getenv: func(string) string { return "" }, Scope: AllSecrets})
	if err == nil || !strings.Contains(err.Error(), "CREDENTIALS_DIRECTORY") {
		t.Errorf("error without CREDENTIALS_DIRECTORY = %v, want it named", err)
	}
	// status and retry read the password only: no token needed.
	noToken := func(k string) string {
		if k == "CREDENTIALS_DIRECTORY" {
			return env(k)
		}
		return ""
	}
	if err := os.Remove(filepath.Join(env("CREDENTIALS_DIRECTORY"), "token")); err != nil {
		t.Fatal(err)
	}
	if _, err := fc.Build(BuildOptions{Getenv: noToken, Scope: ShopSecrets}); err != nil {
		t.Errorf("build with the shop's secrets only: %v", err)
	}
}

// TestExampleCopyIsCurrent: the embedded copy the demo starts from is
// config.example.yaml byte for byte (`go generate ./cmd/internal/config`
// copies it).
func TestExampleCopyIsCurrent(t *testing.T) {
	orig, err := os.ReadFile(exampleConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(orig) != string(Example) {
		t.Fatal("cmd/internal/config/example.yaml differs from config.example.yaml: run go generate ./cmd/internal/config")
	}
}

// TestParseRefusesHugeFile: a file over MaxFileBytes is refused, with the
// limit named, before it is decoded.
func TestParseRefusesHugeFile(t *testing.T) {
	huge := strings.Repeat("# padding\n", MaxFileBytes/10+1)
	_, err := Parse(strings.NewReader(huge))
	if err == nil || !strings.Contains(err.Error(), "larger than 1024 KiB") {
		t.Fatalf("Parse of %d bytes: %v, want it refused naming the limit", len(huge), err)
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(huge), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "is this the right file") {
		t.Fatalf("Load of a huge file: %v, want it refused naming the file", err)
	}
}
