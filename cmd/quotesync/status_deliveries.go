package main

import (
	"context"
	"fmt"
	"io"

	"github.com/quotesync/quotesync/remote/redact"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// printDeliveries adds the outbox to status when a write-back or a
// notification is not made yet: how many, how many failed, the last
// failure (the secrets of set redacted before it is bounded). Nothing
// when every delivery was made.
func printDeliveries(ctx context.Context, w io.Writer, st *store.Store, set *redact.Secrets) {
	ds, err := st.DeliveryStats(ctx)
	switch {
	case err != nil:
		fmt.Fprintf(w, "deliveries: %s\n", flat(err.Error()))
	case ds.Pending > 0:
		fmt.Fprintf(w, "deliveries (write-back, notifications): %s\n", flat(qsync.DeliveryLine(set, ds)))
	}
}
