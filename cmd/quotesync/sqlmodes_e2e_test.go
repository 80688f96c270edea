package main

// The representative end-to-end tests again, under the sql_modes shops'
// servers run with that MariaDB's default is not: MySQL 8's default
// (ONLY_FULL_GROUP_BY, NO_ZERO_DATE and NO_ZERO_IN_DATE beside the strict
// mode) and the empty one of old servers. The mode is the server's own
// (a server of these tests', started once for the package), so every
// session has it: the shop's rows are written under it, quotesync's
// statements and the mapping init proposes run under it.

import (
	"errors"
	"strings"
	gosync "sync"
	"testing"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/discover/testshops"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// sqlModes are the modes, by the name of their subtests.
var sqlModes = []struct{ name, mode string }{
	{"MySQL8", shopdbtest.MySQL8Mode},
	{"Empty", shopdbtest.EmptyMode},
}

// The servers of the modes, each started on first use (the modes'
// tests may start theirs at once) and stopped by TestMain.
var (
	modeMu      gosync.Mutex
	modeServers = map[string]*modeStart{}
)

type modeStart struct {
	once gosync.Once
	srv  *shopdbtest.Server
	err  error
}

// modeServer returns the package's server running with mode.
func modeServer(tb testing.TB, mode string) *shopdbtest.Server {
	tb.Helper()
	modeMu.Lock()
	m := modeServers[mode]
	if m == nil {
		m = &modeStart{}
		modeServers[mode] = m
	}
	modeMu.Unlock()
	m.once.Do(func() {
		mode := mode
		m.srv, m.err = shopdbtest.LaunchServer(shopdbtest.ServerOptions{SQLMode: &mode})
	})
	if errors.Is(m.err, shopdbtest.ErrNoServerBinary) {
		tb.Skipf("SKIPPED, NOT RUN: the tests under sql_mode %q start a MariaDB server of their own and %v", mode, m.err)
	}
	if m.err != nil {
		tb.Fatalf("start a server with sql_mode %q: %v", mode, m.err)
	}
	return m.srv
}

// stopModeServers ends the servers of the modes (TestMain).
func stopModeServers() {
	modeMu.Lock()
	defer modeMu.Unlock()
	for _, m := range modeServers {
		if m.srv != nil {
			m.srv.Stop()
		}
	}
}

// TestE2EUnderSQLModes: under each mode, a request's whole life
// (TestE2ELifecycle), init on the sample shop and on each held-out shape
// with check, preview and a pass on what it proposes
// (TestInitOnSchemasUnlikeTheSample), and check on the sample shop's
// example configuration.
func TestE2EUnderSQLModes(t *testing.T) {
	t.Parallel()
	for _, m := range sqlModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			srv := modeServer(t, m.mode)
			if srv.Mode != m.mode {
				t.Fatalf("the server runs with sql_mode %q, want %q", srv.Mode, m.mode)
			}
			t.Run("Lifecycle", func(t *testing.T) { testE2ELifecycle(t, e2eOptions{Server: srv}) })
			for _, shop := range append([]testshops.Shop{testshops.Sample}, testshops.Shops...) {
				t.Run("Init/"+shop.Name, func(t *testing.T) { testInitOnShop(t, srv, shop, emulator.ModeSpec) })
			}
			t.Run("Check", func(t *testing.T) {
				e := newCLIEnvOn(t, srv, nil)
				e.Emu.AddRequests(emulator.SeedRequest{ClaimNumber: sampleshop.ClaimDraft})
				r := e.run("check", "--config", e.Conf)
				if r.Code != exitOK {
					t.Fatalf("check on the example configuration: %s", r)
				}
				// The empty mode cuts a value too long for its column:
				// check says what that means for requests.
				if warned := strings.Contains(r.Stdout, "warn  sql_mode"); warned != (m.mode == shopdbtest.EmptyMode) {
					t.Errorf("check under sql_mode %q warns of it: %v, want %v:\n%s", m.mode, warned, m.mode == shopdbtest.EmptyMode, r.Stdout)
				}
			})
		})
	}
}
