package shopdb

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Fingerprint is what a pass compares with the last one to tell that
// nothing changed: quotesync's state (how many rows, and the newest change
// of each phase) and the shop's (shop.queries.shop_changed's row).
type Fingerprint struct {
	State string
	Shop  string
}

// HasShopChanged reports whether the mapping has shop.queries.shop_changed,
// without which Fingerprint cannot say the shop did not change.
func (db *DB) HasShopChanged() bool { return db.q.shopChanged != nil }

// Fingerprint reads shop.queries.shop_changed's row and, in the same
// statement, state: a scalar subquery on the same database whose value is
// the Fingerprint's State (store.Store.StateFingerprint), so that an idle
// pass is one round trip. It needs shop_changed (HasShopChanged).
func (db *DB) Fingerprint(ctx context.Context, state string) (Fingerprint, error) {
	q := db.q.shopChanged
	if q == nil {
		return Fingerprint{}, errors.New("read fingerprint: no shop.queries.shop_changed is configured")
	}
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	stmt, args, err := q.bind(map[string]any{})
	if err != nil {
		return Fingerprint{}, err
	}
	rows, err := db.x.QueryContext(ctx, "SELECT ("+state+") AS quotesync_state, x.* FROM ("+stmt+") AS x", args...)
	if err != nil {
		return Fingerprint{}, fmt.Errorf("read fingerprint (%s): %w", q.key, err)
	}
	var fp Fingerprint
	n := 0
	err = scanRows(rows, q.key, func(vals []any) error {
		n++
		var b strings.Builder
		for i, v := range vals {
			s, ok := text(v)
			if !ok {
				s = "NULL"
			}
			if i == 0 {
				fp.State = s
				continue
			}
			fmt.Fprintf(&b, "%d:%s|", len(s), s)
		}
		fp.Shop = b.String()
		return nil
	})
	if err != nil {
		return Fingerprint{}, err
	}
	if n != 1 {
		return Fingerprint{}, fmt.Errorf("%s returned %d rows; it must return exactly one", q.key, n)
	}
	return fp, nil
}
