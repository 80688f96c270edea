package shopdb_test

import (
	"context"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb"
)

func testContext(tb testing.TB) context.Context {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// trips returns a function giving the round trips since trips was called.
func trips(db *shopdb.DB) func() int64 {
	start := db.RoundTrips()
	return func() int64 { return db.RoundTrips() - start }
}
