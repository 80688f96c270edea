package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHugeSecretFile: a secret file that is not a secret (a log, a dump,
// a device) is refused naming the key, the file and the cap, without
// being read whole; a real one still reads.
func TestHugeSecretFile(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "db-password")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(100 << 20); err != nil { // 100 MB, sparse
		t.Fatal(err)
	}
	f.Close()
	text := strings.Replace(baseYAML, "shop:\n", "shop:\n  password_file: "+huge+"\n", 1) + "  token: {env: T}\n"
	fc, err := Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string { return map[string]string{"T": "tok"}[k] }
	_, err = fc.Build(BuildOptions{Getenv: getenv, Scope: AllSecrets})
	for _, w := range []string{"shop.password_file", huge, "larger than 64 KiB", "is this the right file"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Build with a 100 MB password file: %v, want it refused naming %q", err, w)
		}
	}
	if err := os.WriteFile(huge, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := fc.Build(BuildOptions{Getenv: getenv, Scope: AllSecrets})
	if err != nil || set.Daemon.Shop.Password != "s3cret" {
		t.Errorf("Build with a real password file: %v", err)
	}
}
