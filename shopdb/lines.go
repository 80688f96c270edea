package shopdb

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	gosync "sync"

	"github.com/shopspring/decimal"
)

// Columns of estimate_state.
var (
	stateColumnsReq = []string{"job"}
	stateColumnsOpt = []string{"final", "marker"}
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
		meta := isMetaColumn(name) && slices.Contains(optional, metaPattern)
		if meta && name == metaPrefix {
			return nil, fmt.Errorf("%s returns column %q, which names no metadata key; alias it as %s (the item's metadata key)", key, c, metaPattern)
		}
		if !meta && !slices.Contains(required, name) && !slices.Contains(optional, name) {
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

// scanRows calls f with the values of every row (the slice is reused): a
// []byte value is the driver's buffer, valid only until f returns (a read
// of ten thousand rows copies none of the values it does not keep).
func scanRows(rows *sql.Rows, key string, f func(vals []any) error) error {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return fmt.Errorf("read columns of %s: %w", key, err)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	dvs := make([]driverValue, len(cols))
	for i := range ptrs {
		ptrs[i] = &dvs[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("read %s: %w", key, err)
		}
		for i := range dvs {
			vals[i] = dvs[i].v
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

// driverValue is a scan destination that keeps the driver's value as it
// is: a []byte is the driver's buffer, valid until the next row.
type driverValue struct{ v any }

// Scan implements sql.Scanner.
func (d *driverValue) Scan(src any) error {
	d.v = src
	return nil
}

// scanJobRows runs q (estimate_state, or it joined with the sums, or
// quote_fields) for the jobs of set in one statement, has columns check
// the result's column names and index them (job among them), and calls f
// for each row that names a job asked for and not already in bad; a
// []byte value f is given is valid only until f returns (see scanRows).
// Rows with a NULL job are an error for the query as a whole.
func (db *DB) scanJobRows(ctx context.Context, q *namedQuery, set jobSet, bad map[string]error,
	columns func(names []string) (map[string]int, error), f func(job string, idx map[string]int, vals []any) error) error {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	rows, names, err := q.queryColumns(ctx, db.x, map[string]any{ParamJobs: set.list, ParamInsurer: db.insurer})
	if err != nil {
		return err
	}
	idx, err := columns(names)
	if err != nil {
		rows.Close()
		return err
	}
	jobCol := idx["job"]
	return scanRows(rows, q.key, func(vals []any) error {
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
		return f(job, idx, vals)
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
	// need it); nil in a jobSet not made by newJobSet, which knows no job.
	fold func() map[string]string
}

func newJobSet(jobs []string) jobSet {
	s := jobSet{exact: make(map[string]string, len(jobs))}
	for _, j := range jobs {
		if _, dup := s.exact[j]; j == "" || dup {
			continue
		}
		s.exact[j] = j
		s.list = append(s.list, j)
	}
	s.fold = gosync.OnceValue(func() map[string]string {
		m := make(map[string]string, len(s.list))
		for _, j := range s.list {
			m[strings.ToLower(j)] = j
		}
		return m
	})
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
	if s.fold == nil {
		return "", false
	}
	j, ok := s.fold()[strings.ToLower(job)]
	return j, ok
}

// JobLines is every row line_items returns for one job: the valid lines,
// in a quote's order, and the rows that hold the job back, each with its
// reason. A pass pushes nothing for a job while it has a bad row.
type JobLines struct {
	Lines []Line
	Bad   []*RowError
}

// Err is the first row that holds the job back, nil when none does.
func (jl JobLines) Err() error {
	if len(jl.Bad) == 0 {
		return nil
	}
	return jl.Bad[0]
}

// Lines runs line_items for jobs in one statement: the one reading of a
// job's lines, for a pass, `preview`, `check` and `init`. Each job with
// rows gets its valid lines ordered by line_no, then by line_id
// (numerically when both ids are integers), whatever order the query
// returns them in, and its invalid rows (RowError), in the order the
// query returned them. Jobs without rows are not in the map, and rows for
// jobs that were not asked for are ignored. err is for the query as a
// whole (the database, a row with a NULL job, columns that do not fit).
func (db *DB) Lines(ctx context.Context, jobs []string) (map[string]JobLines, error) {
	out := make(map[string]JobLines, len(jobs))
	if err := db.readLines(ctx, jobs, false, func(job string, jl JobLines) { out[job] = jl }); err != nil {
		return nil, err
	}
	return out, nil
}

// EachLines is Lines calling f with each job's lines when the statement
// moves on to another job, keeping none: when the query returns a job's
// rows together, as a join driven by the jobs does, a pass holds one
// job's lines at a time, not a chunk's (BenchmarkOnceIdle10k,
// idle-daemon-after-full-read). The jobs whose rows come apart are read
// again in one more statement, within the same query timeout, and f is
// called for them again: a job's last call holds all its rows, and f
// may have been called for some jobs when an error is returned. After
// that, this DB's EachLines (shared by the insurers of its pool) hands
// over every job at the statement's end, as Lines, for the life of the
// process.
func (db *DB) EachLines(ctx context.Context, jobs []string, f func(job string, jl JobLines)) error {
	return db.readLines(ctx, jobs, true, f)
}

// readLines reads the lines of jobs for Lines (f called for each job
// once the statement ends) and EachLines (each: f called as a job's run
// of rows ends).
func (db *DB) readLines(ctx context.Context, jobs []string, each bool, f func(job string, jl JobLines)) error {
	each = each && !db.linesApart.Load()
	set := newJobSet(jobs)
	if len(set.list) == 0 {
		return nil
	}
	qctx, cancel := db.timeout(ctx)
	defer cancel()
	rows, names, err := db.q.lineItems.queryColumns(qctx, db.x, map[string]any{ParamJobs: set.list})
	if err != nil {
		return err
	}
	defer rows.Close()
	key := db.q.lineItems.key
	idx, err := columnIndex(key, names, lineColumnsRequired, lineColumnsOptional)
	if err != nil {
		return err
	}
	r := lineRow{db: db, lim: db.lim, meta: metaColumns(names), at: make([]int, len(lineColumns))}
	for i, c := range lineColumns {
		r.at[i] = -1
		if n, ok := idx[c.name]; ok {
			r.at[i] = n
		}
	}
	index := make(map[string]int32, len(set.list))
	for i, j := range set.list {
		index[j] = int32(i)
	}
	got := make([]JobLines, len(set.list))
	// done is 1 for a job f was given, 2 for one of those whose rows then
	// came apart (each): again lists those, read again.
	done := make([]int8, len(set.list))
	var again []string
	run := int32(-1) // the job of the run of rows being read
	deliver := func(j int32) {
		if jl := got[j]; done[j] == 0 && (jl.Lines != nil || jl.Bad != nil) {
			if !slices.IsSortedFunc(jl.Lines, compareLines) {
				slices.SortStableFunc(jl.Lines, compareLines)
			}
			f(set.list[j], jl)
		}
		got[j], done[j] = JobLines{}, max(done[j], 1)
	}
	rowCount, jobCount := 0, 0
	cells := make([]cell, len(names))
	ptrs := make([]any, len(names))
	for i := range cells {
		ptrs[i] = &cells[i]
	}
	jobCol := idx["job"]
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("read %s: %w", key, err)
		}
		jc := cells[jobCol]
		if jc.null {
			return fmt.Errorf("%s returned a row with a NULL job", key)
		}
		j, ok := index[string(jc.b)]
		if !ok {
			name, ok := set.resolve(string(jc.b))
			if !ok {
				continue
			}
			j = index[name]
		}
		job := set.list[j]
		if each && j != run {
			if run >= 0 {
				deliver(run)
			}
			if run = j; done[j] == 1 {
				done[j], again = 2, append(again, job)
			}
		}
		if done[j] != 0 {
			continue // read again
		}
		l, rerr := r.parse(job, cells)
		if rerr == nil && slices.ContainsFunc(got[j].Lines, func(o Line) bool { return o.LineID == l.LineID }) {
			// A job's few lines compared one by one: no map of every
			// line of the statement.
			rerr = &RowError{Job: job, Line: fmt.Sprint(l.Order), LineID: l.LineID, Column: "line_id",
				Reason: "appears twice; line ids must be unique within a job"}
		}
		if rerr != nil {
			got[j].Bad = append(got[j].Bad, rerr)
			continue
		}
		if got[j].Lines == nil {
			got[j].Lines = make([]Line, 0, max(1, db.linesPerJob.Load()))
			jobCount++
		}
		got[j].Lines = append(got[j].Lines, l)
		rowCount++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	if jobCount > 0 {
		db.linesPerJob.Store(int64((rowCount + jobCount - 1) / jobCount))
	}
	for j := range got {
		deliver(int32(j))
	}
	if len(again) == 0 {
		return nil
	}
	db.linesApart.Store(true)
	// The jobs read again, with every spelling asked that folds like one
	// of them, in the order asked: a row resolves to the job it did in
	// the first statement. Only the jobs read again get a call, a job
	// whose rows are gone meanwhile one with no lines: its last call is
	// the second statement's.
	want := make(map[string]bool, len(again))
	fold := make(map[string]bool, len(again))
	for _, j := range again {
		want[j], fold[strings.ToLower(j)] = true, true
	}
	var reread []string
	for _, j := range set.list {
		if want[j] || fold[strings.ToLower(j)] {
			reread = append(reread, j)
		}
	}
	if err := db.readLines(qctx, reread, false, func(job string, jl JobLines) {
		if want[job] {
			delete(want, job)
			f(job, jl)
		}
	}); err != nil {
		return err
	}
	for _, j := range again {
		if want[j] {
			f(j, JobLines{})
		}
	}
	return nil
}

// cell is one column of a row as text, without a copy: the driver's bytes
// (valid until the next row), or, for a value the driver returns typed,
// its text as text() writes it, in a buffer the cell reuses.
type cell struct {
	b    []byte
	null bool
	own  []byte
}

// Scan implements sql.Scanner.
func (c *cell) Scan(src any) error {
	c.null = false
	switch t := src.(type) {
	case nil:
		c.null, c.b = true, nil
	case []byte:
		c.b = t
	case int64:
		c.own = strconv.AppendInt(c.own[:0], t, 10)
		c.b = c.own
	default:
		s, _ := text(t)
		c.own = append(c.own[:0], s...)
		c.b = c.own
	}
	return nil
}

// lineColumn is a column of line_items beside job, and how its value
// becomes a field of a Line.
type lineColumn struct {
	name     string
	required bool
	// read sets the column's field of l from v, the value as the shop
	// returned it (null: NULL, or an optional column the query does not
	// return). It returns what is wrong ("" when nothing is), ending with
	// what is needed, and the RowError kind.
	read func(r *lineRow, l *Line, v string, null bool) (problem, kind string)
}

// lineColumns are line_items' columns beside job, in the order a row is
// validated (total after quantity and price). A new field of a quote's
// item is one more entry here, its field in Line, and its place in the
// quote (sync/quote.go).
var lineColumns = []lineColumn{
	{"line_id", true, func(_ *lineRow, l *Line, v string, _ bool) (string, string) {
		if l.LineID = strings.TrimSpace(v); l.LineID == "" {
			return "is NULL or empty; every line needs a stable id (it becomes the remote item id)", ""
		}
		return "", ""
	}},
	{"line_no", true, func(_ *lineRow, l *Line, v string, null bool) (string, string) {
		var ok bool
		switch l.Order, ok = lineNumber(strings.TrimSpace(v)); {
		case null:
			return "is NULL; every line needs a line number (the item's order)", ""
		case !ok:
			return fmt.Sprintf("is %q; a line number is a whole number", v), ""
		}
		return "", ""
	}},
	{"code", true, func(r *lineRow, l *Line, v string, _ bool) (string, string) {
		var ok bool
		switch l.Code = strings.TrimSpace(v); {
		case l.Code == "":
			return "is NULL or empty; every line needs an operation code listed under " + r.db.workKey, ""
		default:
			if l.WorkType, ok = r.db.workTypes[l.Code]; !ok {
				return fmt.Sprintf("is %q, which is not under %s; add it there or leave such lines out in line_items", l.Code, r.db.workKey), RowUnmapped
			}
		}
		return "", ""
	}},
	{"description", true, func(_ *lineRow, l *Line, v string, _ bool) (string, string) {
		if l.Description = strings.TrimSpace(v); l.Description == "" {
			return "is NULL or empty; every line needs a description", ""
		}
		return "", ""
	}},
	{"part_number", false, func(_ *lineRow, l *Line, v string, _ bool) (string, string) {
		l.PartNumber = strings.TrimSpace(v)
		return "", ""
	}},
	{"quantity", true, func(r *lineRow, l *Line, v string, null bool) (string, string) {
		return r.amount(&l.Quantity, amountQuantity, v, null, "every line needs a numeric quantity")
	}},
	{"price", true, func(r *lineRow, l *Line, v string, null bool) (string, string) {
		return r.amount(&l.Price, amountPrice, v, null, "every line needs a unit price")
	}},
	{"total", false, func(r *lineRow, l *Line, v string, null bool) (string, string) {
		if null {
			l.Total = l.Quantity.Mul(l.Price).Round(2)
			if canon, ok := r.within(amountTotal, l.Total); !ok {
				return r.lim.problem(amountTotal, canon+" (quantity × price)", canon), RowBounds
			}
			return "", ""
		}
		var err error
		if l.Total, err = decimal.NewFromString(strings.TrimSpace(v)); err != nil {
			return fmt.Sprintf("is %q, which is not a number; return a number or NULL (quotesync then computes quantity × price)", v), ""
		}
		if canon, ok := r.within(amountTotal, l.Total); !ok {
			return r.lim.problem(amountTotal, v, canon), RowBounds
		}
		return "", ""
	}},
	// A markup follows the rules of a price; NULL leaves it out.
	{"markup", false, func(r *lineRow, l *Line, v string, null bool) (string, string) {
		if null {
			return "", ""
		}
		l.Markup = new(decimal.Decimal)
		return r.amount(l.Markup, amountPrice, v, false, "return a number or NULL (no markup)")
	}},
	{"is_on_report", false, func(_ *lineRow, l *Line, v string, null bool) (string, string) {
		if null {
			return "", ""
		}
		var on bool
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "1", "true":
			on = true
		case "0", "false":
		default:
			return fmt.Sprintf("is %q; return 1 or 0 (true or false), or NULL to leave it out", v), ""
		}
		l.OnReport = &on
		return "", ""
	}},
}

// metaPrefix starts the name of a metadata column: meta_colour gives the
// item the metadata key "colour" (the key as the query spells it); a NULL
// or empty value leaves the key out. metaPattern stands for them among
// line_items' optional columns (and in the error that lists them).
const (
	metaPrefix  = "meta_"
	metaPattern = metaPrefix + "<key>"
)

// The columns line_items must and may return.
var lineColumnsRequired, lineColumnsOptional = func() (req, opt []string) {
	req = []string{"job"}
	for _, c := range lineColumns {
		if c.required {
			req = append(req, c.name)
		} else {
			opt = append(opt, c.name)
		}
	}
	return req, append(opt, metaPattern)
}()

// metaCol is a metadata column of line_items: its key and index.
type metaCol struct {
	key string
	i   int
}

// metaColumns returns the metadata columns of cols, ordered by key.
func metaColumns(cols []string) []metaCol {
	var meta []metaCol
	for i, c := range cols {
		if isMetaColumn(c) {
			meta = append(meta, metaCol{key: c[len(metaPrefix):], i: i})
		}
	}
	slices.SortFunc(meta, func(a, b metaCol) int { return strings.Compare(a.key, b.key) })
	return meta
}

// isMetaColumn reports whether a column name starts with meta_ (in any
// case).
func isMetaColumn(name string) bool {
	return len(name) >= len(metaPrefix) && strings.EqualFold(name[:len(metaPrefix)], metaPrefix)
}

// lineRow reads the rows of one statement of line_items.
type lineRow struct {
	db    *DB
	lim   bounds
	at    []int // the index of each of lineColumns in the row, -1 when absent
	meta  []metaCol
	buf   []byte
	ends  []int
	canon []byte
	line  Line // the row being read
}

// parse validates one row of job: its texts are one string, cut.
func (r *lineRow) parse(job string, c []cell) (Line, *RowError) {
	r.buf, r.ends = r.buf[:0], r.ends[:0]
	for _, i := range r.at {
		if i >= 0 {
			r.buf = append(r.buf, c[i].b...)
		}
		r.ends = append(r.ends, len(r.buf))
	}
	texts := string(r.buf)
	value := func(k int) (string, bool) {
		start := 0
		if k > 0 {
			start = r.ends[k-1]
		}
		return texts[start:r.ends[k]], r.at[k] < 0 || c[r.at[k]].null
	}
	// The line is read into r's own (a Line given to the columns' readers
	// by address would escape to the heap, one allocation a row) and the
	// error is made only for a bad row: BenchmarkIdlePass10k/marker-moved
	// reads 300,000 rows a pass.
	l := &r.line
	*l = Line{Job: job}
	for k, col := range lineColumns {
		v, null := value(k)
		if problem, kind := col.read(r, l, v, null); problem != "" {
			e := &RowError{Job: job, Line: "NULL", LineID: "NULL", Column: col.name, Reason: problem, Kind: kind}
			if v, null := value(0); !null { // line_id
				e.LineID = v
			}
			if v, null := value(1); !null { // line_no
				e.Line = v
			}
			if kind == RowUnmapped {
				e.UnmappedCode = l.Code
			}
			return Line{}, e
		}
	}
	for _, m := range r.meta {
		if c[m.i].null {
			continue
		}
		if v := strings.TrimSpace(string(c[m.i].b)); v != "" {
			if l.Metadata == nil {
				l.Metadata = make(map[string]string, len(r.meta))
			}
			l.Metadata[m.key] = v
		}
	}
	return *l, nil
}

// amount parses a quantity, price or markup into d: a number within the
// bounds of kind, negative only with AllowCredits.
func (r *lineRow) amount(d *decimal.Decimal, kind int, v string, null bool, need string) (problem, rowKind string) {
	if null {
		return "is NULL; " + need, ""
	}
	var err error
	if *d, err = decimal.NewFromString(strings.TrimSpace(v)); err != nil {
		return fmt.Sprintf("is %q, which is not a number; %s", v, need), ""
	}
	if d.IsNegative() && !r.db.cfg.AllowCredits {
		return fmt.Sprintf("is %s: negative, and shop.allow_credits is false; set it to true to accept credit lines", v), RowCredit
	}
	if canon, ok := r.within(kind, *d); !ok {
		return r.lim.problem(kind, v, canon), RowBounds
	}
	return "", ""
}

// within reports whether d is within the bounds of kind; canon is its
// canonical text when it is not.
func (r *lineRow) within(kind int, d decimal.Decimal) (canon string, ok bool) {
	r.canon = AppendAmount(r.canon[:0], d)
	if within(r.lim, kind, r.canon) {
		return "", true
	}
	return string(r.canon), false
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

// lineNumber parses a line_no: a whole number of at most 2^31 in size
// (in any form decimal.NewFromString reads, "7", "7.00" or "7e0"). Plain
// digits are read without a decimal: three allocations a row less.
func lineNumber(s string) (int, bool) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil && i >= -1<<31 && i <= 1<<31 {
		return int(i), true
	}
	n, err := decimal.NewFromString(s)
	if err != nil || !n.IsInteger() || n.Abs().GreaterThan(decimal.NewFromInt(1<<31)) {
		return 0, false
	}
	return int(n.IntPart()), true
}
