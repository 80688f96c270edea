package main

import (
	"strings"
	"testing"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/remote/emulator"
)

// TestCheckNamesTheInsurer: with remotes:, check's lines of a failing
// insurer name it (acme), alone in the list or beside another, not only
// its place in the list (remotes[0]): the refused token, the unreadable
// token file and the wrong address each say whose they are.
func TestCheckNamesTheInsurer(t *testing.T) {
	t.Parallel()
	_, bbSrv := mustEmulator(t, emulator.Options{Token: bbToken, Seed: 7})
	// acme makes the file's remote: the entry acme of remotes:, changed
	// by edit, the only one.
	acme := func(edit func(a *config.RemoteEntry)) func(fc *config.File) {
		return func(fc *config.File) {
			a := config.RemoteEntry{Name: "acme", RemoteSection: fc.Remote}
			edit(&a)
			fc.Remotes, fc.Remote = []config.RemoteEntry{a}, config.RemoteSection{}
		}
	}
	for _, tc := range []struct {
		name  string
		edit  func(fc *config.File)
		lines []string // lines of check's output that must be there
	}{
		{"OneRefusedToken", acme(func(a *config.RemoteEntry) {
			a.Token = config.TokenSection{File: "${CREDENTIALS_DIRECTORY}/acme-token"}
		}), []string{"FAIL  remote (acme)", "the service refused the token from file"}},
		{"OneWrongAddress", acme(func(a *config.RemoteEntry) { a.BaseURL += "/nothing-here" }), []string{"FAIL  remote (acme)", "check remotes[0].base_url (acme)"}},
		{"OneTokenFileMissing", acme(func(a *config.RemoteEntry) {
			a.Token = config.TokenSection{File: "${CREDENTIALS_DIRECTORY}/no-such-token"}
		}), []string{"FAIL  secrets", "remotes[0].token (acme): no token from file"}},
		{"SecondOfTwo", func(fc *config.File) {
			bb := config.RemoteEntry{Name: "bb", RemoteSection: fc.Remote}
			bb.BaseURL = bbSrv.URL + "/nothing-here"
			bb.Token = config.TokenSection{File: "${CREDENTIALS_DIRECTORY}/bb-token"}
			acme(func(*config.RemoteEntry) {})(fc)
			fc.Remotes = append(fc.Remotes, bb)
		}, []string{"ok    remote (acme)", "FAIL  remote (bb)", "check remotes[1].base_url (bb)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCLIEnv(t, tc.edit)
			e.writeSecret("acme-token", "tok-SECRET-stale-acme")
			e.writeSecret("bb-token", bbToken)
			r := e.run("check", "--config", e.Conf)
			if r.Code != exitFailure {
				t.Fatalf("exit %d, want 1:\n%s", r.Code, r)
			}
			for _, want := range tc.lines {
				if !strings.Contains(r.Stdout, want) {
					t.Errorf("check does not say %q:\n%s", want, r.Stdout)
				}
			}
		})
	}
}
