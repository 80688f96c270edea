package shopdb

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/shopspring/decimal"
)

// LineText is one valid line as a hash of the quote reads it: the texts
// LineItems would give, and the amounts in their canonical text (the
// String of the decimal LineItems would give: "95.5000" is "95.5").
type LineText struct {
	LineID, WorkType, Description, PartNumber string
	Order                                     int
	Quantity, Price, Total                    string
	// Markup is the canonical text of the markup, "" when none.
	Markup string
	// OnReport is "true" or "false", "" when the shop does not say.
	OnReport string
	// Metadata are the item metadata ordered by key, nil when none.
	Metadata []MetaValue
}

// LineTexts reads the lines of jobs in one statement of line_items, for a
// caller that only needs to tell whether they changed: the texts of the
// lines (amounts parsed, then kept as text), no Line values, no map of
// every job's lines. f is called once for each job
// whose lines are all valid, with its lines in LineItems' order (the slice
// is reused after f returns; its strings are not). Jobs without lines get
// no call. A job with a row LineItems would refuse (or that this reading
// cannot vouch for) is in unsure, and LineItems tells what is wrong.
// err is for the query as a whole.
func (db *DB) LineTexts(ctx context.Context, jobs []string, f func(job string, lines []LineText)) (unsure []string, err error) {
	set := newJobSet(jobs)
	if len(set.list) == 0 {
		return nil, nil
	}
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	rows, err := db.q.lineItems.query(ctx, db.x, map[string]any{ParamJobs: set.list})
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("read columns of %s: %w", db.q.lineItems.key, err)
	}
	idx, err := columnIndex(db.q.lineItems.key, names, lineColumnsRequired, lineColumnsOptional)
	if err != nil {
		return nil, err
	}
	r := lineReader{db: db, set: set, lim: db.limits(), unsure: make([]bool, len(set.list)),
		index: make(map[string]int32, len(set.list)), cols: newLineCols(idx, metaColumns(names))}
	rows1000, bytes1000 := db.lineHint.perJob()
	r.recs = make([]lineRec, 0, len(set.list)*rows1000/1000+16)
	r.arena = make([]byte, 0, len(set.list)*bytes1000/1000+1024)
	defer func() { db.lineHint.keep(len(set.list), len(r.recs), len(r.arena)) }()
	for i, j := range set.list {
		r.index[j] = int32(i)
	}
	cells := make([]cell, len(names))
	ptrs := make([]any, len(names))
	for i := range cells {
		ptrs[i] = &cells[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("read %s: %w", db.q.lineItems.key, err)
		}
		if err := r.add(cells); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", db.q.lineItems.key, err)
	}
	return r.deliver(f), nil
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

// lineCols are the indexes of line_items' columns, -1 for an optional one
// the query does not return.
type lineCols struct {
	job, id, no, code, desc, part, qty, price, total int
	markup, onReport                                 int
	meta                                             []metaCol
}

func newLineCols(idx map[string]int, meta []metaCol) lineCols {
	opt := func(name string) int {
		if i, ok := idx[name]; ok {
			return i
		}
		return -1
	}
	return lineCols{job: idx["job"], id: idx["line_id"], no: idx["line_no"], code: idx["code"], desc: idx["description"],
		part: opt("part_number"), qty: idx["quantity"], price: idx["price"], total: opt("total"),
		markup: opt(colMarkup), onReport: opt(colOnReport), meta: meta}
}

// span is a piece of lineReader.arena.
type span struct{ off, n uint32 }

// lineRec is one valid row, its texts in the arena.
type lineRec struct {
	job                               int32 // index in set.list
	order                             int
	id, desc, part, qty, price, total span
	workType                          string
	markup                            span
	hasMarkup                         bool
	onReport                          uint8  // 0 none, 1 false, 2 true
	metaOff, metaN                    uint32 // in lineReader.meta
}

// lineHint remembers how many rows and bytes of text LineTexts kept per
// job the last time (in thousandths), so that the next call allocates
// its buffers once instead of growing them row by row: a pass reads chunk
// after chunk of the same shop.
type lineHint struct{ rows, bytes atomic.Int64 }

func (h *lineHint) perJob() (rows1000, bytes1000 int) {
	return int(h.rows.Load()), int(h.bytes.Load())
}

func (h *lineHint) keep(jobs, rows, bytes int) {
	if jobs > 0 {
		h.rows.Store(int64(rows * 1000 / jobs))
		h.bytes.Store(int64(bytes * 1000 / jobs))
	}
}

// lineReader collects the rows of one LineTexts statement: every text
// kept in one growing buffer, not a string each.
type lineReader struct {
	db     *DB
	set    jobSet
	lim    bounds
	cols   lineCols
	index  map[string]int32
	unsure []bool
	arena  []byte
	recs   []lineRec
	meta   []metaRef
}

// keep appends b to the arena.
func (r *lineReader) keep(b []byte) span {
	s := span{uint32(len(r.arena)), uint32(len(b))}
	r.arena = append(r.arena, b...)
	return s
}

// add takes one row: kept when valid, else its job is unsure.
func (r *lineReader) add(c []cell) error {
	jc := c[r.cols.job]
	if jc.null {
		return fmt.Errorf("%s returned a row with a NULL job", r.db.q.lineItems.key)
	}
	j, ok := r.index[string(jc.b)]
	if !ok {
		name, ok := r.set.resolve(string(jc.b))
		if !ok {
			return nil
		}
		j = r.index[name]
	}
	if r.unsure[j] {
		return nil
	}
	if !r.valid(j, c) {
		r.unsure[j] = true
	}
	return nil
}

// valid keeps the row as a lineRec and reports true when LineItems would
// take it as it is; false leaves the job to LineItems.
func (r *lineReader) valid(j int32, c []cell) bool {
	rec := lineRec{job: j}
	nonEmpty := func(i int) ([]byte, bool) {
		if c[i].null {
			return nil, false
		}
		b := bytes.TrimSpace(c[i].b)
		return b, len(b) > 0
	}
	id, ok := nonEmpty(r.cols.id)
	if !ok {
		return false
	}
	no, ok := nonEmpty(r.cols.no)
	if !ok {
		return false
	}
	if rec.order, ok = lineNumber(string(no)); !ok {
		return false
	}
	code, ok := nonEmpty(r.cols.code)
	if !ok {
		return false
	}
	if rec.workType, ok = r.db.workTypes[string(code)]; !ok {
		return false
	}
	desc, ok := nonEmpty(r.cols.desc)
	if !ok {
		return false
	}
	var part []byte
	if r.cols.part >= 0 && !c[r.cols.part].null {
		part = bytes.TrimSpace(c[r.cols.part].b)
	}
	qty, okq := r.amount(c[r.cols.qty])
	price, okp := r.amount(c[r.cols.price])
	if !okq || !okp {
		return false
	}
	total := qty.Mul(price).Round(2)
	if r.cols.total >= 0 && !c[r.cols.total].null {
		var err error
		if total, err = decimal.NewFromString(string(bytes.TrimSpace(c[r.cols.total].b))); err != nil {
			return false
		}
	}
	rec.id, rec.desc, rec.part = r.keep(id), r.keep(desc), r.keep(part)
	for _, a := range [...]struct {
		kind int
		d    decimal.Decimal
		s    *span
	}{{amountQuantity, qty, &rec.qty}, {amountPrice, price, &rec.price}, {amountTotal, total, &rec.total}} {
		canon := a.d.String()
		*a.s = r.keep([]byte(canon))
		if !within(r.lim, a.kind, canon) {
			return false
		}
	}
	if !r.extras(&rec, c) {
		return false
	}
	r.recs = append(r.recs, rec)
	return true
}

// amount parses a quantity or price that LineItems would take.
func (r *lineReader) amount(c cell) (decimal.Decimal, bool) {
	d, problem, _ := r.db.amount(string(c.b), !c.null, "")
	return d, problem == ""
}

// deliver calls f per job with its kept rows in LineItems' order, and
// returns the unsure jobs. The rows are grouped by job with a counting
// sort of their indexes (rows are never moved), and a job's few rows are
// sorted only when the query did not return them in order.
func (r *lineReader) deliver(f func(job string, lines []LineText)) (unsure []string) {
	all := string(r.arena) // one copy; every text is a piece of it
	str := func(s span) string { return all[s.off : s.off+s.n] }
	start := make([]int32, len(r.set.list)+1)
	for i := range r.recs {
		start[r.recs[i].job+1]++
	}
	for j := 1; j < len(start); j++ {
		start[j] += start[j-1]
	}
	order := make([]int32, len(r.recs))
	next := slices.Clone(start[:len(start)-1])
	for i := range r.recs {
		j := r.recs[i].job
		order[next[j]] = int32(i)
		next[j]++
	}
	cmpRec := func(a, b int32) int {
		ra, rb := &r.recs[a], &r.recs[b]
		if ra.order != rb.order {
			if ra.order < rb.order {
				return -1
			}
			return 1
		}
		return compareLineIDs(str(ra.id), str(rb.id))
	}
	var lines []LineText
	seen := map[string]bool{}
	for j := range r.set.list {
		group := order[start[j]:start[j+1]]
		if r.unsure[j] || len(group) == 0 {
			continue
		}
		if !slices.IsSortedFunc(group, cmpRec) {
			slices.SortFunc(group, cmpRec)
		}
		lines = lines[:0]
		clear(seen)
		for _, i := range group {
			rec := &r.recs[i]
			id := str(rec.id)
			if seen[id] {
				r.unsure[j] = true // LineItems names the duplicate id
				break
			}
			seen[id] = true
			lines = append(lines, r.lineText(rec, str))
		}
		if !r.unsure[j] {
			f(r.set.list[j], lines)
		}
	}
	for j, u := range r.unsure {
		if u {
			unsure = append(unsure, r.set.list[j])
		}
	}
	return unsure
}
