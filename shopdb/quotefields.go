package shopdb

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// ReservedQuoteFields are the quote fields quotesync writes itself, which
// shop.queries.quote_fields may not return (in any letter case).
func ReservedQuoteFields() []string {
	return []string{"type", "status", "referenceId", "rates", "items"}
}

// quoteFieldColumns checks the columns of quote_fields: job, and any other
// column, each a quote field of that name (as the query spells it). It
// returns the index of job and the fields ordered by name.
func quoteFieldColumns(key string, cols []string) (job int, fields []metaCol, err error) {
	job = -1
	seen := map[string]bool{}
	for i, c := range cols {
		name := strings.ToLower(c)
		if seen[name] {
			return 0, nil, fmt.Errorf("%s returns column %q twice", key, c)
		}
		seen[name] = true
		if name == "job" {
			job = i
			continue
		}
		if slices.ContainsFunc(ReservedQuoteFields(), func(r string) bool { return strings.EqualFold(c, r) }) {
			return 0, nil, fmt.Errorf("%s returns column %q, a quote field quotesync writes itself (%s); alias it with another name",
				key, c, strings.Join(ReservedQuoteFields(), ", "))
		}
		if strings.TrimSpace(c) == "" {
			return 0, nil, fmt.Errorf("%s returns a column without a name; alias it with AS (the name is the quote field's)", key)
		}
		fields = append(fields, metaCol{key: c, i: i})
	}
	if job < 0 {
		return 0, nil, fmt.Errorf("%s returns no column \"job\"; it must return job and the quote fields (alias with AS)", key)
	}
	slices.SortFunc(fields, func(a, b metaCol) int { return strings.Compare(a.key, b.key) })
	return job, fields, nil
}

// QuoteFields runs quote_fields (shop.queries.quote_fields) for jobs in one
// statement: the quote-level fields of each job, by name, their values as
// text. A NULL or empty value leaves its field out; a job without a row has
// none. A job with two rows is in bad (its quote cannot be told) and not in
// fields. Without the query it returns nothing and costs nothing. err is
// for the query as a whole (the database, or columns that do not fit).
func (db *DB) QuoteFields(ctx context.Context, jobs []string) (fields map[string]map[string]string, bad map[string]error, err error) {
	fields, bad = map[string]map[string]string{}, map[string]error{}
	q := db.q.quoteFields
	set := newJobSet(jobs)
	if q == nil || len(set.list) == 0 {
		return fields, bad, nil
	}
	var cs []metaCol
	seen := map[string]bool{}
	err = db.scanJobRows(ctx, q, set, bad, func(names []string) (map[string]int, error) {
		job, cols, err := quoteFieldColumns(q.key, names)
		cs = cols
		return map[string]int{"job": job}, err
	}, func(job string, _ map[string]int, vals []any) error {
		if seen[job] {
			bad[job] = fmt.Errorf("job %s: %s returns two rows for it; it must return at most one row per job (GROUP BY the job)", job, q.key)
			delete(fields, job)
			return nil
		}
		seen[job] = true
		for _, c := range cs {
			v, ok := text(vals[c.i])
			if v = strings.TrimSpace(v); !ok || v == "" {
				continue
			}
			if fields[job] == nil {
				fields[job] = make(map[string]string, len(cs))
			}
			fields[job][c.key] = v
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return fields, bad, nil
}
