package shopdb

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	gosync "sync"

	"github.com/shopspring/decimal"
)

// Columns of line_items and estimate_state.
var (
	lineColumnsRequired = []string{"job", "line_id", "line_no", "code", "description", "quantity", "price"}
	lineColumnsOptional = []string{"part_number", "total", colMarkup, colOnReport, metaPattern}
	stateColumnsReq     = []string{"job"}
	stateColumnsOpt     = []string{"final", "marker"}
)

// RowError is an invalid estimate line: the job it belongs to is skipped
// until the shop fixes the row. Error() names job, line and column, and says
// what a valid value is.
type RowError struct {
	Job    string
	Line   string // line_no as the shop returned it; "NULL" when missing
	LineID string // "NULL" when missing
	Column string
	Reason string // what is wrong and what is needed
	// UnmappedCode is the line's operation code when the error is that the
	// code is not under shop.work_types; "" otherwise.
	UnmappedCode string
	// Kind says which setting can lift the error: RowUnmapped (an entry
	// under shop.work_types), RowCredit (shop.allow_credits), RowBounds
	// (shop.limits); "" when only the shop's data can.
	Kind string
}

// Kinds of RowError that a configuration change can lift.
const (
	RowUnmapped = "unmapped_code"
	RowCredit   = "credit"
	RowBounds   = "bounds"
)

// Error implements error.
func (e *RowError) Error() string {
	return fmt.Sprintf("job %s line %s (line_id %s): column %s %s", e.Job, e.Line, e.LineID, e.Column, e.Reason)
}

// columnIndex maps the result columns onto the names a query must and may
// return; a missing required or an unknown column is an error.
func columnIndex(key string, cols, required, optional []string) (map[string]int, error) {
	idx := make(map[string]int, len(cols))
	for i, c := range cols {
		name := strings.ToLower(c)
		meta := isMetaColumn(name) && contains(optional, metaPattern)
		if meta && name == metaPrefix {
			return nil, fmt.Errorf("%s returns column %q, which names no metadata key; alias it as %s (the item's metadata key)", key, c, metaPattern)
		}
		if !meta && !contains(required, name) && !contains(optional, name) {
			return nil, fmt.Errorf("%s returns column %q, which quotesync does not know; it returns %s and optionally %s", key, c, strings.Join(required, ", "), strings.Join(optional, ", "))
		}
		if _, dup := idx[name]; dup {
			return nil, fmt.Errorf("%s returns column %q twice", key, c)
		}
		idx[name] = i
	}
	for _, r := range required {
		if _, ok := idx[r]; !ok {
			return nil, fmt.Errorf("%s returns no column %q; it must return %s (alias with AS)", key, r, strings.Join(required, ", "))
		}
	}
	return idx, nil
}

// scanRows calls f with the values of every row (the slice is reused).
func scanRows(rows *sql.Rows, key string, f func(vals []any) error) error {
	return scanRowsAs(rows, key, false, f)
}

// driverValue is a scan destination that keeps the driver's value as it
// is: a []byte is the driver's buffer, valid until the next row.
type driverValue struct{ v any }

// Scan implements sql.Scanner.
func (d *driverValue) Scan(src any) error {
	d.v = src
	return nil
}

// scanRowsAs is scanRows; with raw set a []byte value is the driver's
// buffer, valid only until f returns (a read of ten thousand rows copies
// none of the values it does not keep).
func scanRowsAs(rows *sql.Rows, key string, raw bool, f func(vals []any) error) error {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return fmt.Errorf("read columns of %s: %w", key, err)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	dvs := make([]driverValue, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
		if raw {
			ptrs[i] = &dvs[i]
		}
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("read %s: %w", key, err)
		}
		if raw {
			for i := range dvs {
				vals[i] = dvs[i].v
			}
		}
		if err := f(vals); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	return nil
}

// scanJobRows runs q (line_items or estimate_state) for the jobs of set in
// one statement, checks its columns against required and optional, and
// calls f for each row that names a job asked for and not already in bad.
// Rows with a NULL job are an error for the query as a whole.
func (db *DB) scanJobRows(ctx context.Context, q *namedQuery, set jobSet, required, optional []string, bad map[string]error,
	f func(job string, idx map[string]int, cols []string, vals []any) error) error {
	return db.scanJobRowsAs(ctx, q, set, required, optional, bad, false, f)
}

// scanJobRowsAs is scanJobRows; with raw set a []byte value f is given
// is valid only until f returns (see scanRowsAs).
func (db *DB) scanJobRowsAs(ctx context.Context, q *namedQuery, set jobSet, required, optional []string, bad map[string]error,
	raw bool, f func(job string, idx map[string]int, cols []string, vals []any) error) error {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	rows, err := q.query(ctx, db.x, map[string]any{ParamJobs: set.list})
	if err != nil {
		return err
	}
	cols, err := rows.Columns()
	if err != nil {
		rows.Close()
		return fmt.Errorf("read columns of %s: %w", q.key, err)
	}
	idx, err := columnIndex(q.key, cols, required, optional)
	if err != nil {
		rows.Close()
		return err
	}
	jobCol := idx["job"]
	return scanRowsAs(rows, q.key, raw, func(vals []any) error {
		var job string
		var ok bool
		if b, isBytes := vals[jobCol].([]byte); isBytes {
			job, ok = set.resolveBytes(b)
		} else {
			name, notNull := text(vals[jobCol])
			if !notNull {
				return fmt.Errorf("%s returned a row with a NULL job", q.key)
			}
			job, ok = set.resolve(name)
		}
		if !ok || bad[job] != nil {
			return nil
		}
		return f(job, idx, cols, vals)
	})
}

// jobSet dedupes jobs and resolves the job a row names to one that was
// asked for (exactly, else ignoring case as a case-insensitive collation
// would).
type jobSet struct {
	exact map[string]string // each job to itself
	list  []string
	// fold maps the jobs in lower case to them, made when a row first
	// names a job that is not one asked for exactly (most reads never
	// need it).
	fold *foldedJobs
}

type foldedJobs struct {
	once gosync.Once
	m    map[string]string
}

func newJobSet(jobs []string) jobSet {
	s := jobSet{exact: make(map[string]string, len(jobs)), fold: &foldedJobs{}}
	for _, j := range jobs {
		if _, dup := s.exact[j]; j == "" || dup {
			continue
		}
		s.exact[j] = j
		s.list = append(s.list, j)
	}
	return s
}

func (s jobSet) resolve(job string) (string, bool) {
	if j, ok := s.exact[job]; ok {
		return j, true
	}
	return s.resolveFold(job)
}

// resolveBytes is resolve for a job as the driver reads it; it allocates
// nothing when the job is one asked for exactly.
func (s jobSet) resolveBytes(job []byte) (string, bool) {
	if j, ok := s.exact[string(job)]; ok {
		return j, true
	}
	return s.resolveFold(string(job))
}

func (s jobSet) resolveFold(job string) (string, bool) {
	if s.fold == nil { // a jobSet not made by newJobSet knows no job
		return "", false
	}
	s.fold.once.Do(func() {
		s.fold.m = make(map[string]string, len(s.list))
		for _, j := range s.list {
			s.fold.m[strings.ToLower(j)] = j
		}
	})
	j, ok := s.fold.m[strings.ToLower(job)]
	return j, ok
}

// LineItems runs line_items for jobs in one statement. Valid lines come
// back per job ordered by line_no, then by line_id (numerically when both
// ids are integers), whatever order the query returns them in; a job with
// any invalid row is in bad (a *RowError) and not in lines. Jobs without
// lines are in neither. Rows for jobs that were not asked for are ignored.
// err is for the query as a whole (the database, or columns that do not
// fit).
func (db *DB) LineItems(ctx context.Context, jobs []string) (lines map[string][]Line, bad map[string]error, err error) {
	set := newJobSet(jobs)
	lines, bad = map[string][]Line{}, map[string]error{}
	if len(set.list) == 0 {
		return lines, bad, nil
	}
	seen := map[string]map[string]bool{}
	var meta []metaCol
	metaRead := false
	err = db.scanJobRows(ctx, &db.q.lineItems, set, lineColumnsRequired, lineColumnsOptional, bad, func(job string, idx map[string]int, cols []string, vals []any) error {
		if !metaRead {
			meta, metaRead = metaColumns(cols), true
		}
		l, rerr := db.parseLine(job, idx, meta, vals)
		if rerr == nil {
			if seen[job] == nil {
				seen[job] = map[string]bool{}
			}
			if seen[job][l.LineID] {
				rerr = &RowError{Job: job, Line: fmt.Sprint(l.Order), LineID: l.LineID, Column: "line_id",
					Reason: "appears twice; line ids must be unique within a job"}
			}
			seen[job][l.LineID] = true
		}
		if rerr != nil {
			bad[job] = rerr
			delete(lines, job)
			return nil
		}
		lines[job] = append(lines[job], l)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for _, ls := range lines {
		slices.SortStableFunc(ls, compareLines)
	}
	return lines, bad, nil
}

// compareLines orders a job's lines by Order (line_no), then by LineID, so
// that lines with the same line_no come in the same order whatever order
// the query returned them in (the quote hash depends on it).
func compareLines(a, b Line) int {
	if c := cmp.Compare(a.Order, b.Order); c != 0 {
		return c
	}
	return compareLineIDs(a.LineID, b.LineID)
}

// compareLineIDs orders two line ids: numerically when both are integers
// (ties such as "7" and "07" broken by their text), as strings when
// neither is, and integers before the rest when only one is. Comparing a
// mixed pair as strings would not be transitive ("9" < "10" numerically,
// "10" < "1a" and "1a" < "9" as strings), and a sort needs a total order.
func compareLineIDs(a, b string) int {
	ai, bi := isInteger(a), isInteger(b)
	switch {
	case ai && bi:
		if c := compareIntegers(a, b); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	case ai:
		return -1
	case bi:
		return 1
	}
	return strings.Compare(a, b)
}

// isInteger reports whether s is an optional sign and one or more ASCII
// digits, of any length.
func isInteger(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// compareIntegers compares two strings for which isInteger holds by their
// values, without a size limit.
func compareIntegers(a, b string) int {
	aneg, amag := splitSign(a)
	bneg, bmag := splitSign(b)
	switch {
	case aneg && !bneg:
		return -1
	case !aneg && bneg:
		return 1
	}
	c := cmp.Compare(len(amag), len(bmag))
	if c == 0 {
		c = strings.Compare(amag, bmag)
	}
	if aneg {
		return -c
	}
	return c
}

// splitSign returns whether an integer's text is negative and its digits
// without leading zeros ("" for zero, which is never negative).
func splitSign(s string) (neg bool, mag string) {
	neg = s[0] == '-'
	if s[0] == '+' || s[0] == '-' {
		s = s[1:]
	}
	mag = strings.TrimLeft(s, "0")
	return neg && mag != "", mag
}

// parseLine validates one row of line_items.
// meta are its metadata columns (metaColumns).
func (db *DB) parseLine(job string, idx map[string]int, meta []metaCol, vals []any) (Line, *RowError) {
	get := func(col string) (string, bool) {
		i, ok := idx[col]
		if !ok {
			return "", false
		}
		return text(vals[i])
	}
	lineNo, okNo := get("line_no")
	lineID, okID := get("line_id")
	e := &RowError{Job: job, Line: "NULL", LineID: "NULL"}
	if okNo {
		e.Line = lineNo
	}
	if okID {
		e.LineID = lineID
	}
	fail := func(col, reason string) (Line, *RowError) {
		e.Column, e.Reason = col, reason
		return Line{}, e
	}
	l := Line{Job: job, LineID: strings.TrimSpace(lineID)}
	if !okID || l.LineID == "" {
		return fail("line_id", "is NULL or empty; every line needs a stable id (it becomes the remote item id)")
	}
	if !okNo {
		return fail("line_no", "is NULL; every line needs a line number (the item's order)")
	}
	order, ok := lineNumber(strings.TrimSpace(lineNo))
	if !ok {
		return fail("line_no", fmt.Sprintf("is %q; a line number is a whole number", lineNo))
	}
	l.Order = order
	code, ok := get("code")
	l.Code = strings.TrimSpace(code)
	if !ok || l.Code == "" {
		return fail("code", "is NULL or empty; every line needs an operation code listed under "+db.workKey)
	}
	if l.WorkType, ok = db.workTypes[l.Code]; !ok {
		_, err := fail("code", fmt.Sprintf("is %q, which is not under %s; add it there or leave such lines out in line_items", l.Code, db.workKey))
		err.UnmappedCode, err.Kind = l.Code, RowUnmapped
		return Line{}, err
	}
	desc, ok := get("description")
	l.Description = strings.TrimSpace(desc)
	if !ok || l.Description == "" {
		return fail("description", "is NULL or empty; every line needs a description")
	}
	l.PartNumber, _ = get("part_number")
	l.PartNumber = strings.TrimSpace(l.PartNumber)
	var problem, kind string
	q, qok := get("quantity")
	if l.Quantity, problem, kind = db.amount(q, qok, "every line needs a numeric quantity"); problem != "" {
		_, err := fail("quantity", problem)
		err.Kind = kind
		return Line{}, err
	}
	p, pok := get("price")
	if l.Price, problem, kind = db.amount(p, pok, "every line needs a unit price"); problem != "" {
		_, err := fail("price", problem)
		err.Kind = kind
		return Line{}, err
	}
	total, ok := get("total")
	switch {
	case !ok:
		l.Total = l.Quantity.Mul(l.Price).Round(2)
	default:
		var err error
		if l.Total, err = decimal.NewFromString(strings.TrimSpace(total)); err != nil {
			return fail("total", fmt.Sprintf("is %q, which is not a number; return a number or NULL (quotesync then computes quantity × price)", total))
		}
	}
	if err := db.checkBounds(l, e, q, p, total); err != nil {
		return Line{}, err
	}
	if err := db.parseExtras(&l, e, get, vals, meta); err != nil {
		return Line{}, err
	}
	return l, nil
}

// lineNumber parses a line_no: a whole number of at most 2^31 in size
// (in any form decimal.NewFromString reads, "7", "7.00" or "7e0").
func lineNumber(s string) (int, bool) {
	n, err := decimal.NewFromString(s)
	if err != nil || !n.IsInteger() || n.Abs().GreaterThan(decimal.NewFromInt(1<<31)) {
		return 0, false
	}
	return int(n.IntPart()), true
}

// amount parses a quantity or price; negative ones only with AllowCredits.
// problem is "" for a valid amount, else the reason, ending with need;
// kind is the RowError kind of the problem.
func (db *DB) amount(s string, ok bool, need string) (d decimal.Decimal, problem, kind string) {
	if !ok {
		return d, "is NULL; " + need, ""
	}
	d, err := decimal.NewFromString(strings.TrimSpace(s))
	if err != nil {
		return d, fmt.Sprintf("is %q, which is not a number; %s", s, need), ""
	}
	if d.IsNegative() && !db.cfg.AllowCredits {
		return d, fmt.Sprintf("is %s: negative, and shop.allow_credits is false; set it to true to accept credit lines", s), RowCredit
	}
	return d, "", ""
}
