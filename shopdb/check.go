package shopdb

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// QueryCheck is the verdict on one mapping query from CheckQueries.
type QueryCheck struct {
	Key     string   // YAML key, e.g. "shop.queries.line_items" or "shop.queries.create_job[1]"
	Columns []string // result columns seen when it ran read-only; nil when it did not run
	Note    string   // what was checked
	Err     error    // nil when the query passed
}

// probe is the placeholder value CheckQueries binds to every parameter.
const probe = "quotesync-check"

// CheckQueries has the server prepare every mapping query (which checks
// syntax, tables and columns), then runs each query that returns rows in a
// READ ONLY transaction with placeholder parameters and checks the names of
// the columns it returns against what quotesync reads. Statements of
// create_job other than the last are prepared only; nothing is written.
func (db *DB) CheckQueries(ctx context.Context) []QueryCheck {
	vals := map[string]any{
		ParamRequestID: probe, ParamClaimNumber: probe, ParamExpiry: now().Add(24 * time.Hour),
		ParamJob: probe, ParamJobs: []string{probe}, ParamJobCreated: false,
	}
	for name := range db.cfg.Params {
		vals[name] = nil
	}
	var out []QueryCheck
	if q := db.q.findJob; q != nil {
		out = append(out, db.checkQuery(ctx, q, vals, func(cols []string) error {
			_, err := jobColumn(cols, q.key)
			return err
		}))
	}
	for i := range db.q.createJob {
		q := &db.q.createJob[i]
		if i < len(db.q.createJob)-1 {
			out = append(out, db.checkQuery(ctx, q, vals, nil))
			continue
		}
		out = append(out, db.checkQuery(ctx, q, vals, func(cols []string) error {
			_, err := jobColumn(cols, q.key)
			return err
		}))
	}
	for i := range db.q.releaseJob {
		out = append(out, db.checkQuery(ctx, &db.q.releaseJob[i], vals, nil))
	}
	if q := db.q.bookingDate; q != nil {
		out = append(out, db.checkQuery(ctx, q, vals, func(cols []string) error {
			if len(cols) != 1 {
				return fmt.Errorf("%s returns %d columns; it must return one (the date)", q.key, len(cols))
			}
			return nil
		}))
	}
	out = append(out, db.checkQuery(ctx, &db.q.lineItems, vals, func(cols []string) error {
		_, err := columnIndex(db.q.lineItems.key, cols, lineColumnsRequired, lineColumnsOptional)
		return err
	}))
	out = append(out, db.checkQuery(ctx, &db.q.estimateState, vals, func(cols []string) error {
		_, err := columnIndex(db.q.estimateState.key, cols, stateColumnsReq, stateColumnsOpt)
		return err
	}))
	return out
}

// checkQuery prepares q and, when columns is set, runs it read-only and
// passes the result's column names to columns.
func (db *DB) checkQuery(ctx context.Context, q *namedQuery, vals map[string]any, columns func([]string) error) QueryCheck {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	c := QueryCheck{Key: q.key, Note: "prepared"}
	text, args, err := q.bind(vals)
	if err != nil {
		c.Err = err
		return c
	}
	st, err := db.x.PrepareContext(ctx, text)
	if err != nil {
		c.Err = fmt.Errorf("prepare %s: %w", q.key, explainPrivilege(err, db.cfg))
		return c
	}
	_ = st.Close()
	if columns == nil {
		return c
	}
	tx, err := db.x.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		c.Err = fmt.Errorf("begin read-only transaction: %w", err)
		return c
	}
	defer func() { _ = tx.Rollback() }()
	rows, err := tx.QueryContext(ctx, text, args...)
	if mysqlErrno(err) == errReadOnlyTx {
		c.Note = "prepared; not run because it writes, so its columns are not checked"
		return c
	}
	if err != nil {
		c.Err = fmt.Errorf("run %s read-only: %w", q.key, explainPrivilege(err, db.cfg))
		return c
	}
	c.Columns, err = rows.Columns()
	rows.Close()
	if err != nil {
		c.Err = fmt.Errorf("read columns of %s: %w", q.key, err)
		return c
	}
	c.Note = "prepared; ran read-only; columns match"
	if c.Err = columns(c.Columns); c.Err != nil {
		c.Note = "prepared; ran read-only"
	}
	return c
}
