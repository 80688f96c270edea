package shopdb

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// SQLMode is the sql_mode quotesync's sessions run with: the server's
// default, which quotesync leaves as it is (the mapping's statements run
// under the rules the shop's own program has).
func (db *DB) SQLMode(ctx context.Context) (string, error) {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	var mode string
	if err := db.x.QueryRowContext(ctx, "SELECT @@SESSION.sql_mode").Scan(&mode); err != nil {
		return "", fmt.Errorf("read the session's sql_mode: %w", err)
	}
	return mode, nil
}

// StrictMode reports whether a sql_mode refuses a value that does not fit
// its column (STRICT_TRANS_TABLES or STRICT_ALL_TABLES) rather than
// cutting it to fit with a warning.
func StrictMode(mode string) bool {
	return slices.ContainsFunc(strings.Split(strings.ToUpper(mode), ","), func(m string) bool {
		return m == "STRICT_TRANS_TABLES" || m == "STRICT_ALL_TABLES"
	})
}
