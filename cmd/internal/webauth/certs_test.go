package webauth

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/cmd/internal/webauth/webauthtest"
)

// TestLoadKeyPairRefusesReadableKey: a key file every user of the machine
// may read is refused, naming the file, its mode and chmod 600, without
// the key; one the owner and its group may read (the service's group) is
// loaded.
func TestLoadKeyPairRefusesReadableKey(t *testing.T) {
	t.Parallel()
	c := webauthtest.WriteCert(t, t.TempDir(), "perm")
	key, err := os.ReadFile(c.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		mode os.FileMode
		ok   bool
	}{{0o600, true}, {0o640, true}, {0o400, true}, {0o644, false}, {0o604, false}, {0o666, false}} {
		if err := os.Chmod(c.KeyFile, tt.mode); err != nil {
			t.Fatal(err)
		}
		pair, err := LoadKeyPair(c.CertFile, c.KeyFile)
		if tt.ok {
			if err != nil || pair == nil {
				t.Errorf("mode %04o: %v, want the pair loaded", tt.mode, err)
			}
			continue
		}
		if !errors.Is(err, errKeyReadable) {
			t.Fatalf("mode %04o: %v, want it refused as readable by every user", tt.mode, err)
		}
		for _, want := range []string{c.KeyFile, fmt.Sprintf("(mode %04o)", tt.mode), "chmod 600 " + c.KeyFile} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("mode %04o: %q lacks %q", tt.mode, err, want)
			}
		}
		if strings.Contains(err.Error(), "PRIVATE KEY") || strings.Contains(err.Error(), strings.Split(string(key), "\n")[1]) {
			t.Errorf("mode %04o: the error shows the key", tt.mode)
		}
	}
}
