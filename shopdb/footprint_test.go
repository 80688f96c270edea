package shopdb_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
)

func TestFootprintShares(t *testing.T) {
	base := shopdb.Config{Addr: "db.example.net:3306", Database: "shop_north"}
	cases := []struct {
		name              string
		edit              func(*shopdb.Config)
		wantTables, wantL bool
	}{
		{"SameConfig", func(*shopdb.Config) {}, true, true},
		{"OtherSchema", func(c *shopdb.Config) { c.Database = "shop_south" }, false, false},
		{"OtherPrefix", func(c *shopdb.Config) { c.TablePrefix = "qs_south_" }, false, false},
		{"OtherServer", func(c *shopdb.Config) { c.Addr = "db2.example.net:3306" }, false, false},
		{"OtherPort", func(c *shopdb.Config) { c.Addr = "db.example.net:3307" }, false, false},
		{"DefaultPort", func(c *shopdb.Config) { c.Addr = "DB.example.net" }, true, true},
		{"SchemaCase", func(c *shopdb.Config) { c.Database = "Shop_North" }, true, true},
		// Another schema, the same lock name set by hand: one of the two
		// would stand by for ever.
		{"SameLockName", func(c *shopdb.Config) { c.Database, c.LockName = "shop_south", "quotesync.shop_north.quotesync_" }, false, true},
		// The same tables under another lock: both would work them at once.
		{"OtherLockName", func(c *shopdb.Config) { c.LockName = "mine" }, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			other := base
			tc.edit(&other)
			tables, lock := base.Footprint().Shares(other.Footprint())
			if tables != tc.wantTables || lock != tc.wantL {
				t.Errorf("Shares = tables %v, lock %v; want %v, %v", tables, lock, tc.wantTables, tc.wantL)
			}
		})
	}

	local := []string{"127.0.0.1:3306", "localhost:3306", "[::1]:3306", "/run/mysqld/mysqld.sock", "127.0.0.1:3307", "localhost"}
	for _, a := range local {
		for _, b := range local {
			f := shopdb.Config{Addr: a, Database: "shop"}.Footprint()
			g := shopdb.Config{Addr: b, Database: "shop"}.Footprint()
			if tables, lock := f.Shares(g); !tables || !lock {
				t.Errorf("%s and %s: tables %v, lock %v; want both: one host's server", a, b, tables, lock)
			}
		}
	}
}

func TestFootprintDefaults(t *testing.T) {
	f := shopdb.Config{Database: "shop"}.Footprint()
	want := shopdb.Footprint{Addr: shopdb.DefaultAddr, Database: "shop", TablePrefix: shopdb.DefaultTablePrefix, LockName: "quotesync.shop.quotesync_"}
	if f != want {
		t.Errorf("Footprint = %+v, want %+v", f, want)
	}
	long := shopdb.Config{Database: strings.Repeat("s", 64)}.Footprint()
	if len(long.LockName) > 64 || !strings.HasPrefix(long.LockName, "quotesync.") {
		t.Errorf("lock name of a long schema %q: want a quotesync. name of at most 64 characters", long.LockName)
	}
}

// TestSitesOnOneServerKeepApart: two sites with every default, each in
// its own schema of one server, both hold their lock at once and each
// has its own tables; two configurations of one schema meet (the second
// stands by), as Shares says.
func TestSitesOnOneServerKeepApart(t *testing.T) {
	ctx := testContext(t)
	north, south := shopdbtest.NewSampleShop(t), shopdbtest.NewSampleShop(t)
	nc, sc := north.Config(), south.Config()
	nc.TablePrefix, nc.LockName, sc.TablePrefix, sc.LockName = "", "", "", "" // the defaults
	if tables, lock := nc.Footprint().Shares(sc.Footprint()); tables || lock {
		t.Fatalf("two schemas share tables %v, lock %v", tables, lock)
	}
	n, s := north.Open(t, nc), south.Open(t, sc)
	ln, err := store.New(n).AcquireLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Release() }()
	ls, err := store.New(s).AcquireLock(ctx)
	if err != nil {
		t.Fatalf("the second site's lock: %v, want it held beside the first's", err)
	}
	defer func() { _ = ls.Release() }()
	for _, d := range []*shopdbtest.Database{north, south} {
		var n int
		if err := d.SQL.GetContext(ctx, &n, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'quotesync_requests'", d.Name); err != nil || n != 1 {
			t.Errorf("%s: quotesync_requests %d (%v), want its own", d.Name, n, err)
		}
	}

	again := north.Open(t, nc)
	if tables, lock := nc.Footprint().Shares(nc.Footprint()); !tables || !lock {
		t.Fatalf("one schema: tables %v, lock %v; want both shared", tables, lock)
	}
	if l, err := store.New(again).AcquireLock(ctx); !errors.Is(err, store.ErrNotLeader) {
		if err == nil {
			_ = l.Release()
		}
		t.Errorf("a second configuration of the first site's schema: %v, want ErrNotLeader", err)
	}
}
