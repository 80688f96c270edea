package discover

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

const (
	// DefaultSampleTimeout bounds each sample statement on the server.
	DefaultSampleTimeout = 5 * time.Second
	// sampleWindow is how many of a table's newest rows the value counts
	// look at: enough to see every status and code in use.
	sampleWindow = 5000
)

// ValueCount is one distinct value of a column and how often it occurs
// (in the rows looked at).
type ValueCount struct {
	Value string
	Null  bool
	Count int64
}

// Sampler reads a few rows of the shop's tables, all in one READ ONLY
// transaction, each statement under a time limit the server enforces
// (max_statement_time on MariaDB, the MAX_EXECUTION_TIME hint on MySQL).
// Results are kept: asking twice costs one read.
type Sampler struct {
	tx      *sql.Tx
	mariadb bool
	limit   time.Duration
	cache   map[string]any
}

// NewSampler starts the read-only transaction. server is VERSION() (it
// says which time limit the server understands); timeout bounds each
// statement (DefaultSampleTimeout when 0).
func NewSampler(ctx context.Context, db *sql.DB, server string, timeout time.Duration) (*Sampler, error) {
	if timeout <= 0 {
		timeout = DefaultSampleTimeout
	}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("start a read-only transaction: %w", err)
	}
	return &Sampler{tx: tx, mariadb: strings.Contains(strings.ToLower(server), "mariadb"), limit: timeout, cache: map[string]any{}}, nil
}

// Close ends the transaction (a rollback: it wrote nothing).
func (s *Sampler) Close() error {
	if s == nil || s.tx == nil {
		return nil
	}
	return s.tx.Rollback()
}

func (s *Sampler) query(ctx context.Context, query string, row func(vals []sql.NullString)) error {
	ctx, cancel := context.WithTimeout(ctx, s.limit+2*time.Second)
	defer cancel()
	if s.mariadb {
		query = fmt.Sprintf("SET STATEMENT max_statement_time=%g FOR %s", s.limit.Seconds(), query)
	} else {
		query = strings.Replace(query, "SELECT ", fmt.Sprintf("SELECT /*+ MAX_EXECUTION_TIME(%d) */ ", s.limit.Milliseconds()), 1)
	}
	rows, err := s.tx.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		row(vals)
	}
	return rows.Err()
}

// window is the FROM clause over the table's newest rows (by its
// primary key), or over any sampleWindow rows when it has none.
func window(t *Table, cols ...*Column) string {
	names := mapped(cols, func(c *Column) string { return quoteIdent(c.Name) })
	order := ""
	if pk := t.SinglePK(); pk != nil {
		order = " ORDER BY " + quoteIdent(pk.Name) + " DESC"
	}
	return fmt.Sprintf("(SELECT %s FROM %s%s LIMIT %d) qs_sample", strings.Join(names, ", "), quoteIdent(t.Name), order, sampleWindow)
}

// Distinct returns the distinct values of c among the table's newest rows
// with their counts, most frequent first, at most limit of them.
func (s *Sampler) Distinct(ctx context.Context, t *Table, c *Column, limit int) ([]ValueCount, error) {
	key := fmt.Sprintf("distinct %s.%s %d", t.Name, c.Name, limit)
	if v, ok := s.cache[key]; ok {
		return v.([]ValueCount), nil
	}
	q := fmt.Sprintf("SELECT %s, COUNT(*) FROM %s GROUP BY %s ORDER BY COUNT(*) DESC, %s LIMIT %d",
		quoteIdent(c.Name), window(t, c), quoteIdent(c.Name), quoteIdent(c.Name), limit)
	var out []ValueCount
	err := s.query(ctx, q, func(v []sql.NullString) {
		var n int64
		fmt.Sscan(v[1].String, &n)
		out = append(out, ValueCount{Value: v[0].String, Null: !v[0].Valid, Count: n})
	})
	if err != nil {
		return nil, fmt.Errorf("sample the values of %s.%s: %w", t.Name, c.Name, err)
	}
	s.cache[key] = out
	return out, nil
}

// Rows returns up to limit of the table's newest rows, the columns cols
// of each as text (NULL as not Valid).
func (s *Sampler) Rows(ctx context.Context, t *Table, cols []*Column, limit int) ([][]sql.NullString, error) {
	key := fmt.Sprintf("rows %s %v %d", t.Name, cols, limit)
	if v, ok := s.cache[key]; ok {
		return v.([][]sql.NullString), nil
	}
	q := fmt.Sprintf("SELECT * FROM %s LIMIT %d", window(t, cols...), limit)
	var out [][]sql.NullString
	err := s.query(ctx, q, func(v []sql.NullString) { out = append(out, v) })
	if err != nil {
		return nil, fmt.Errorf("sample rows of %s: %w", t.Name, err)
	}
	s.cache[key] = out
	return out, nil
}

// Mixed counts, among the table's newest rows, the distinct values of
// group (jobs) and how many of them have rows of more than one value of
// c (a status that differs between a job's lines).
func (s *Sampler) Mixed(ctx context.Context, t *Table, group, c *Column) (mixed, groups int, err error) {
	q := fmt.Sprintf("SELECT COUNT(*), COALESCE(SUM(CASE WHEN n > 1 THEN 1 ELSE 0 END), 0) FROM (SELECT COUNT(DISTINCT %s) AS n FROM %s GROUP BY %s) qs_groups",
		quoteIdent(c.Name), window(t, group, c), quoteIdent(group.Name))
	err = s.query(ctx, q, func(v []sql.NullString) {
		fmt.Sscan(v[0].String, &groups)
		fmt.Sscan(v[1].String, &mixed)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("sample the values of %s.%s by %s: %w", t.Name, c.Name, group.Name, err)
	}
	return mixed, groups, nil
}
