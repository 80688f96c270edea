package store

// StateFingerprint is the scalar subquery that sums quotesync's state up in
// one value: how many rows each phase has and their newest change (the
// (phase, updated_at) index answers it without reading the rows), of every
// insurer, for shopdb.DB.Fingerprint to read in the statement of
// shop.queries.shop_changed.
func (st *Store) StateFingerprint() string {
	return "SELECT COALESCE(GROUP_CONCAT(CONCAT(phase, ':', n, ':', m) ORDER BY phase SEPARATOR ' '), '') FROM " +
		"(SELECT phase, COUNT(*) AS n, MAX(updated_at) AS m FROM " + st.t.requests + " GROUP BY phase) AS f"
}
