package shopdb_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

func testContext(tb testing.TB) context.Context {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// trips returns a function giving the round trips since trips was called.
func trips(db *shopdb.DB) func() int64 {
	start := shopdbtest.RoundTrips(db)
	return func() int64 { return shopdbtest.RoundTrips(db) - start }
}

// warmPool leaves n connections idle in db's pool, so that n statements
// at once open none (a new connection's session set-up is a round trip).
func warmPool(tb testing.TB, db *shopdb.DB, n int) {
	tb.Helper()
	conns := make([]*sql.Conn, n)
	for i := range conns {
		c, err := db.SQL().Conn(context.Background())
		if err != nil {
			tb.Fatal(err)
		}
		conns[i] = c
	}
	for _, c := range conns {
		_ = c.Close()
	}
}
