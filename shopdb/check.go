package shopdb

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quotesync/quotesync/shopdb/internal/server"
)

// QueryCheck is the verdict on one mapping query from CheckQueries.
type QueryCheck struct {
	Key     string   // YAML key, e.g. "shop.queries.line_items" or "shop.queries.create_job[1]"
	Columns []string // result columns seen when it ran read-only; nil when it did not run
	Note    string   // what was checked
	Err     error    // nil when the query passed
	// Warn, when set, is a problem that does not stop quotesync but will
	// slow every pass down (a query that reads a whole large table).
	Warn string
}

// NoFinalWarning is check's word on an estimate_state with no final column.
const NoFinalWarning = "no final column: no estimate is ever final, so quotesync pushes Drafts and submits nothing; " +
	"return final (1 when the shop marks the estimate final) once you know which status means final"

// probe is the placeholder value CheckQueries binds to every parameter.
const probe = "quotesync-check"

// CheckQueries has the server prepare every mapping query (which checks
// syntax, tables and columns), then runs each query that returns rows in a
// READ ONLY transaction with placeholder parameters and checks the names of
// the columns it returns against what quotesync reads. Statements of
// create_job other than the last are prepared only; nothing is written. A
// statement of create_job or release_job that writes a table ignoring
// transactions (MyISAM) is warned about, with what that means.
// jobs are job numbers of the shop for EXPLAIN to plan the job queries
// with (those quotesync tracks; none: a placeholder no index finds), and
// state the subquery Fingerprint reads beside shop_changed (quotesync's
// store's, when its tables exist; "": shop_changed is run alone).
func (db *DB) CheckQueries(ctx context.Context, jobs []string, state string) []QueryCheck {
	vals := map[string]any{
		ParamRequestID: probe, ParamClaimNumber: probe, ParamExpiry: now().Add(24 * time.Hour),
		ParamJob: probe, ParamJobs: []string{probe}, ParamJobCreated: false, ParamInsurer: db.insurer,
	}
	for name := range db.cfg.Params {
		vals[name] = nil
	}
	returnsJob := func(q *namedQuery) func([]string) error {
		return func(cols []string) error {
			_, err := jobColumn(cols, q.key)
			return err
		}
	}
	returns := func(q *namedQuery, required, optional []string) func([]string) error {
		return func(cols []string) error {
			_, err := columnIndex(q.key, cols, required, optional)
			return err
		}
	}
	jobVals := maps.Clone(vals)
	if len(jobs) > 0 {
		jobVals[ParamJobs] = jobs // EXPLAIN plans for real jobs, not for a probe no index finds
	}
	// jobsQuery checks a query every pass runs for many jobs, and EXPLAINs it.
	jobsQuery := func(q *namedQuery, cols func([]string) error) QueryCheck {
		c := db.checkQuery(ctx, q, vals, cols)
		if c.Err == nil {
			c.Warn = db.explainScan(ctx, q, jobVals)
		}
		return c
	}
	var out []QueryCheck
	if q := db.q.findJob; q != nil {
		out = append(out, db.checkQuery(ctx, q, vals, returnsJob(q)))
	}
	for i := range db.q.createJob {
		q := &db.q.createJob[i]
		var cols func([]string) error // the statements before the last are prepared only
		if i == len(db.q.createJob)-1 {
			cols = returnsJob(q)
		}
		c := db.checkQuery(ctx, q, vals, cols)
		db.warnNonTransactional(ctx, &c, q.text, nonTxCreateJob)
		out = append(out, c)
	}
	for i := range db.q.releaseJob {
		c := db.checkQuery(ctx, &db.q.releaseJob[i], vals, nil)
		db.warnNonTransactional(ctx, &c, db.q.releaseJob[i].text, nonTxReleaseJob)
		out = append(out, c)
	}
	if q := db.q.bookingDate; q != nil {
		out = append(out, db.checkQuery(ctx, q, vals, func(cols []string) error {
			if len(cols) != 1 {
				return fmt.Errorf("%s returns %d columns; it must return one (the date)", q.key, len(cols))
			}
			return nil
		}))
	}
	out = append(out, jobsQuery(&db.q.lineItems, returns(&db.q.lineItems, lineColumnsRequired, lineColumnsOptional)))
	c := jobsQuery(&db.q.estimateState, returns(&db.q.estimateState, stateColumnsReq, stateColumnsOpt))
	if c.Err == nil {
		db.checkDerived(ctx, &c, jobVals[ParamJobs].([]string))
		if !slices.ContainsFunc(c.Columns, func(col string) bool { return strings.EqualFold(col, "final") }) {
			c.Warn = strings.TrimPrefix(c.Warn+"; "+NoFinalWarning, "; ")
		}
	}
	out = append(out, c)
	if q := db.q.quoteFields; q != nil {
		out = append(out, jobsQuery(q, func(cols []string) error {
			_, _, err := quoteFieldColumns(q.key, cols)
			return err
		}))
	}
	if q := db.q.sampleJobs; q != nil {
		out = append(out, db.checkQuery(ctx, q, vals, returns(q, []string{"job", ParamClaimNumber}, sortedKeys(db.cfg.Params))))
	}
	if q := db.q.shopChanged; q != nil {
		c := db.checkQuery(ctx, q, vals, nil)
		if c.Err == nil {
			// Read as Fingerprint reads it, with state (with none when "").
			if _, err := db.Fingerprint(ctx, cmp.Or(state, "NULL")); err != nil {
				c.Err = err
			} else {
				c.Note = "prepared; ran read-only; returns one row"
			}
		}
		out = append(out, c)
	}
	return out
}

// checkDerived says, for an estimate_state without a marker column, how
// idle passes tell that lines did not change: by markers derived from the
// lines (tried on jobs), or, a warning, by reading every job's lines.
func (db *DB) checkDerived(ctx context.Context, c *QueryCheck, jobs []string) {
	if slices.ContainsFunc(c.Columns, func(col string) bool { return strings.EqualFold(col, "marker") }) {
		return
	}
	slow := "; every pass reads every tracked job's lines: return a marker column that changes with the lines"
	if db.q.quoteFields != nil {
		c.Warn = strings.TrimPrefix(c.Warn+"; no marker column, and quote_fields is set (derived markers do not cover it)"+slow, "; ")
		return
	}
	// One job is enough to have the sums' statement run (a probe job, on a
	// fresh install: it finds no lines, but the server runs it).
	job := probe
	if set := newJobSet(jobs); len(set.list) > 0 {
		job = set.list[0]
	}
	if _, _, err := db.JobStates(ctx, []string{job}); err != nil {
		c.Warn = strings.TrimPrefix(c.Warn+"; no marker column, and deriving one failed ("+err.Error()+")"+slow, "; ")
		return
	}
	switch form, why := db.DerivedMarkers(); {
	case form != "":
		c.Note += "; no marker column: quotesync derives one from line_items (" + form + " sums per job, computed by the database)"
	case why != "":
		c.Warn = strings.TrimPrefix(c.Warn+"; no marker column, and quotesync cannot derive one: "+why+slow, "; ")
	default:
		c.Note += "; no marker column: quotesync derives one from line_items (sums per job, computed by the database)"
	}
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
	if mysqlErrno(err) == server.ErrReadOnlyTx {
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

// scanRowsWarn is how many rows a table must have for a full scan of it,
// on every pass, to be worth a warning.
const scanRowsWarn = 1000

// explainScan has the server EXPLAIN q, which every pass runs, and returns
// a warning naming each table of at least scanRowsWarn rows it reads in
// full (EXPLAIN type ALL), or "" (also when EXPLAIN itself fails: the
// query was checked already; this is advice).
func (db *DB) explainScan(ctx context.Context, q *namedQuery, vals map[string]any) string {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	stmt, args, err := q.bind(vals)
	if err != nil {
		return ""
	}
	rows, err := db.x.QueryxContext(ctx, "EXPLAIN "+stmt, args...)
	if err != nil {
		return ""
	}
	defer rows.Close()
	var scans []string
	for rows.Next() {
		row := map[string]any{}
		if err := rows.MapScan(row); err != nil {
			return ""
		}
		typ, _ := text(row["type"])
		table, _ := text(row["table"])
		n, _ := text(row["rows"])
		count, _ := strconv.ParseInt(n, 10, 64)
		if strings.EqualFold(typ, "ALL") && count >= scanRowsWarn {
			scans = append(scans, fmt.Sprintf("%s (about %d rows)", table, count))
		}
	}
	if rows.Err() != nil || len(scans) == 0 {
		return ""
	}
	return fmt.Sprintf("EXPLAIN shows it reads every row of %s on every pass: index the columns it joins and filters that table on (see docs/mapping.md: a shop with many jobs)", strings.Join(scans, " and "))
}
