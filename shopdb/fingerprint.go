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

// stateFingerprint is the subquery of quotesync's state: row count and
// newest change per phase (the (phase, updated_at) index answers it
// without reading the rows).
func (db *DB) stateFingerprint() string {
	return "SELECT COALESCE(GROUP_CONCAT(CONCAT(phase, ':', n, ':', m) ORDER BY phase SEPARATOR ' '), '') FROM " +
		"(SELECT phase, COUNT(*) AS n, MAX(updated_at) AS m FROM " + db.t.requests + " GROUP BY phase) AS f"
}

// Fingerprint reads the state's and the shop's fingerprints in one
// statement. It needs shop.queries.shop_changed (HasShopChanged).
func (db *DB) Fingerprint(ctx context.Context) (Fingerprint, error) {
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
	rows, err := db.x.QueryContext(ctx, "SELECT ("+db.stateFingerprint()+") AS quotesync_state, x.* FROM ("+stmt+") AS x", args...)
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

// shopFingerprint runs shop_changed alone (for check).
func (db *DB) shopFingerprint(ctx context.Context) (string, error) {
	fp, err := db.Fingerprint(ctx)
	if mysqlErrno(err) == errNoSuchTable {
		// quotesync's tables do not exist yet: check shop_changed alone.
		q := db.q.shopChanged
		stmt, args, berr := q.bind(map[string]any{})
		if berr != nil {
			return "", berr
		}
		rows, qerr := db.x.QueryContext(ctx, stmt, args...)
		if qerr != nil {
			return "", fmt.Errorf("run %s: %w", q.key, qerr)
		}
		n := 0
		if err := scanRows(rows, q.key, func([]any) error { n++; return nil }); err != nil {
			return "", err
		}
		if n != 1 {
			return "", fmt.Errorf("%s returned %d rows; it must return exactly one", q.key, n)
		}
		return "", nil
	}
	return fp.Shop, err
}
