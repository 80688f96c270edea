package redact_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/remote/redact"
)

// TestOneRedactor: no code of the module but this package writes the
// mark or keeps a minimum length of its own: a second redactor (remote
// had one, with the bearer token only) is a side door the set does not
// cover. Tests may name the mark.
func TestOneRedactor(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			filepath.Dir(path) == filepath.Join(root, "remote", "redact") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, own := range []string{redact.Mark, "minRedactLen", "redacted ="} {
			if strings.Contains(string(b), own) {
				t.Errorf("%s holds %q: redact text with the process's one set (remote/redact) instead", path, own)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
