package shopdb_test

import (
	"context"
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
