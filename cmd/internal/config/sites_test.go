package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckSiteName(t *testing.T) {
	for _, ok := range []string{"north", "north-yard", "site_07", "a", "eu.west.3", strings.Repeat("s", 64)} {
		if err := CheckSiteName(ok); err != nil {
			t.Errorf("CheckSiteName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "..", ".hidden", "-x", "a/b", "north yard", `north\x2dyard`, "nörd", strings.Repeat("s", 65)} {
		if err := CheckSiteName(bad); err == nil {
			t.Errorf("CheckSiteName(%q) = nil, want an error", bad)
		}
	}
}

func TestSiteDefaults(t *testing.T) {
	if got, want := SitePath("north"), "/etc/quotesync/sites/north.yaml"; got != want {
		t.Errorf("SitePath = %q, want %q", got, want)
	}
	c := ControlSection{}
	if got, def := c.SocketFor("north"); got != "/run/quotesync@north/control.sock" || !def {
		t.Errorf("SocketFor(north) = %q, %v; want the site's runtime directory, default", got, def)
	}
	if got, def := c.SocketFor(""); got != DefaultControlSocket || !def {
		t.Errorf("SocketFor(\"\") = %q, %v; want %s, default", got, def, DefaultControlSocket)
	}
	c.Socket = "/run/x.sock"
	if got, def := c.SocketFor("north"); got != "/run/x.sock" || def {
		t.Errorf("SocketFor with control.socket set = %q, %v; want the file's", got, def)
	}
	es, err := Effective(writeFile(t, ""), "north", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range es {
		if e.Key == "control.socket" {
			found = true
			if e.Value != SiteControlSocket("north") {
				t.Errorf("control.socket = %q, want the site's default", e.Value)
			}
		}
	}
	if !found {
		t.Error("no control.socket entry")
	}
}

func TestSiblings(t *testing.T) {
	root := t.TempDir()
	touch := func(rel string) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	single := touch("config.yaml")
	north, south := touch("sites/north.yaml"), touch("sites/south.yaml")
	touch("sites/north/token") // a site's secrets: not a configuration
	touch("sites/notes.txt")
	if err := os.Mkdir(filepath.Join(root, "sites", "dir.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(north, filepath.Join(root, "sites", "alias.yaml")); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		path string
		want []string
	}{
		{single, []string{filepath.Join(root, "sites", "alias.yaml"), north, south}},
		// alias.yaml is north.yaml itself.
		{north, []string{single, south}},
		{south, []string{single, filepath.Join(root, "sites", "alias.yaml"), north}},
	}
	for _, tc := range cases {
		got, err := Siblings(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Siblings(%s) (-want +got):\n%s", tc.path, diff)
		}
	}
}
