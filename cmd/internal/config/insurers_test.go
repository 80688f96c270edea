package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	qsync "github.com/quotesync/quotesync/sync"
)

// shopYAML is baseYAML without its remote block.
var shopYAML = strings.TrimSuffix(baseYAML, "remote:\n  base_url: https://api.insurer.example\n")

const twoRemotes = `remotes:
  - name: aa
    base_url: https://aa.insurer.example
    token: {env: TA}
  - name: bb-2
    base_url: https://bb.insurer.example
    token: {env: TB}
    status_path: auto
    schedule: "@every 5m"
    concurrency: 2
    work_types: {GLASS: Miscellaneous, PART: Miscellaneous}
`

func buildYAML(t *testing.T, text string) (*Settings, error) {
	t.Helper()
	fc, err := Parse(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return fc.Build(BuildOptions{Getenv: func(k string) string { return "tok-" + k }, Scope: AllSecrets})
}

// TestInsurersLoneRemote: a lone remote: is one insurer, named default,
// with the shop's work types and the sync section's schedule.
func TestInsurersLoneRemote(t *testing.T) {
	set, err := buildYAML(t, baseYAML+"  token: {env: T}\n")
	if err != nil {
		t.Fatal(err)
	}
	ins := set.Daemon.Insurers
	if len(ins) != 1 || ins[0].Name != qsync.DefaultInsurer || ins[0].Key != "remote" || ins[0].WorkTypes != nil ||
		ins[0].Schedule != "" || ins[0].Remote.BaseURL != "https://api.insurer.example" || ins[0].TokenFrom != "environment variable T" {
		t.Errorf("insurers of a lone remote: = %+v, want one, %s", ins, qsync.DefaultInsurer)
	}
}

// TestInsurersRemotes: each entry of remotes: is an insurer with its own
// service, token, schedule, concurrency and work types merged over the
// shop's (its entry winning for a code).
func TestInsurersRemotes(t *testing.T) {
	set, err := buildYAML(t, shopYAML+twoRemotes)
	if err != nil {
		t.Fatal(err)
	}
	ins := set.Daemon.Insurers
	if len(ins) != 2 {
		t.Fatalf("insurers = %+v, want 2", ins)
	}
	if ins[0].Name != "aa" || ins[0].Key != "remotes[0]" || ins[0].WorkTypes != nil || ins[0].Remote.BaseURL != "https://aa.insurer.example" {
		t.Errorf("remotes[0] = %+v", ins[0])
	}
	b := ins[1]
	if b.Name != "bb-2" || b.Key != "remotes[1]" || b.Schedule != "@every 5m" || b.Concurrency != 2 || b.Remote.StatusPath != "auto" {
		t.Errorf("remotes[1] = %+v", b)
	}
	if diff := cmp.Diff(map[string]string{"GLASS": "Miscellaneous", "PART": "Miscellaneous"}, b.WorkTypes); diff != "" {
		t.Errorf("remotes[1]'s merged work types (-want +got):\n%s", diff)
	}
	for i, name := range []string{"TA", "TB"} {
		tok, err := ins[i].Tokens.Token(t.Context())
		if err != nil || tok != "tok-"+name {
			t.Errorf("%s's token = %q, %v; want its own, tok-%s", ins[i].Name, tok, err, name)
		}
	}
	if got := set.Daemon.Names(); !cmp.Equal(got, []string{"aa", "bb-2"}) {
		t.Errorf("Names = %v", got)
	}
}

// TestInsurersInvalid: every problem of remotes: names its key (by its
// index: a name may be what is wrong) and the fix.
func TestInsurersInvalid(t *testing.T) {
	entry := func(lines string) string {
		return shopYAML + "remotes:\n  - name: aa\n    base_url: https://aa.insurer.example\n    token: {env: TA}\n" + lines
	}
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"Both", baseYAML + "  token: {env: T}\n" + strings.TrimPrefix(twoRemotes, ""), []string{"and remotes: set one, not both"}},
		// An empty remote: beside remotes: decodes to nothing: refused all
		// the same, naming its line, not ignored.
		{"BothEmptyRemote", shopYAML + "remote: {}\n" + twoRemotes, []string{fmt.Sprintf("remote (line %d) and remotes: set one, not both", strings.Count(shopYAML, "\n")+1), "delete the remote: key"}},
		{"BothBareRemote", shopYAML + twoRemotes + "remote:\n", []string{fmt.Sprintf("remote (line %d) and remotes: set one, not both", strings.Count(shopYAML+twoRemotes, "\n")+1), "delete the remote: key"}},
		{"NoName", entry("  - base_url: https://bb.insurer.example\n    token: {env: TB}\n"), []string{"remotes[1].name: required", "choose it for good"}},
		{"BadName", entry("  - name: b/b\n    base_url: https://bb.insurer.example\n    token: {env: TB}\n"), []string{`remotes[1].name: "b/b" is not an insurer name`, "letters, digits, - or _"}},
		{"LongName", entry("  - name: " + strings.Repeat("x", 33) + "\n    base_url: https://bb.insurer.example\n    token: {env: TB}\n"), []string{"remotes[1].name:", "1 to 32"}},
		{"Twice", entry("  - name: aa\n    base_url: https://bb.insurer.example\n    token: {env: TB}\n"), []string{`remotes[1].name: "aa" is remotes[0]'s name too`}},
		{"BaseURL", entry("  - name: bb\n    base_url: ftp://bb\n    token: {env: TB}\n"), []string{`remotes[1].base_url: "ftp://bb" must be an http(s) URL`}},
		{"NoToken", entry("  - name: bb\n    base_url: https://bb.insurer.example\n"), []string{"remotes[1].token: set exactly one of file"}},
		{"Schedule", entry("  - name: bb\n    base_url: https://bb.insurer.example\n    token: {env: TB}\n    schedule: \"@every 10ms\"\n"), []string{`remotes[1].schedule: "@every 10ms" asks for a pass every 10ms`}},
		{"Concurrency", entry("  - name: bb\n    base_url: https://bb.insurer.example\n    token: {env: TB}\n    concurrency: 300\n"), []string{"remotes[1].concurrency: 300 is out of range"}},
		{"WorkType", entry("  - name: bb\n    base_url: https://bb.insurer.example\n    token: {env: TB}\n    work_types: {GLASS: \"\"}\n"), []string{"remotes[1].work_types.GLASS: code and work type must both be non-empty"}},
		{"StatusPath", entry("  - name: bb\n    base_url: https://bb.insurer.example\n    token: {env: TB}\n    status_path: /x\n"), []string{`remotes[1].status_path: "/x" must be one of`}},
		{"TokenValue", entry("  - name: bb\n    base_url: https://bb.insurer.example\n    token: {value: secret-in-yaml}\n"), []string{"remotes[1].token.value: the token must not be written in the YAML"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := buildYAML(t, tt.yaml)
			if err == nil {
				t.Fatalf("build accepted:\n%s", tt.yaml)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "secret-in-yaml") {
				t.Errorf("error %q shows the token", err)
			}
		})
	}
}

// TestEffectiveRemotes: `quotesync config` shows each insurer's keys under
// its name, with the origin, and the defaults of remote: for the keys it
// leaves out; the lone form keeps remote.* and shows no remotes.
func TestEffectiveRemotes(t *testing.T) {
	path := writeFile(t, shopYAML+twoRemotes)
	es, err := Effective(path, "", func(k string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	got := entryMap(es)
	checkEntries(t, got, []wantEntry{
		{"remotes[aa].base_url", "https://aa.insurer.example", OriginFile, ""},
		{"remotes[aa].timeout", "30s", OriginDefault, ""},
		{"remotes[aa].schedule", "sync.schedule", OriginDefault, ""},
		{"remotes[aa].token", hiddenValue, OriginEnvironment, "named by remotes[aa].token.env"},
		{"remotes[bb-2].schedule", "@every 5m", OriginFile, ""},
		{"remotes[bb-2].status_path", "auto", OriginFile, ""},
		{"remotes[bb-2].work_types.GLASS", "Miscellaneous", OriginFile, ""},
	})
	for k := range got {
		if strings.HasPrefix(k, "remote.") || strings.HasPrefix(k, "remotes[0]") {
			t.Errorf("%s listed: the file uses remotes:, each insurer by its name", k)
		}
	}
	lone, err := Effective(writeFile(t, baseYAML+"  token: {env: T}\n"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range lone {
		if strings.HasPrefix(e.Key, "remotes") {
			t.Errorf("%s listed for a lone remote:", e.Key)
		}
	}
	if _, ok := entryMap(lone)["remote.base_url"]; !ok {
		t.Error("remote.base_url not listed for a lone remote:")
	}
}
