package shopdb

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// The optional item fields of line_items beyond the amounts: a markup (a
// decimal under the rules of a price), whether the item is on the report,
// and item metadata from the columns named meta_<key>. A NULL leaves the
// field out of the quote, as a query without the column does.
const (
	colMarkup   = "markup"
	colOnReport = "is_on_report"
	// metaPrefix starts the name of a metadata column: meta_colour gives
	// the item the metadata key "colour" (the key as the query spells it).
	metaPrefix = "meta_"
	// metaPattern stands for the metadata columns in the optional columns
	// of line_items (and in the error that lists them).
	metaPattern = metaPrefix + "<key>"
)

// MetaValue is one metadata entry of a line.
type MetaValue struct{ Key, Value string }

// metaCol is a metadata column of line_items: its key and index.
type metaCol struct {
	key string
	i   int
}

// metaColumns returns the metadata columns of cols, ordered by key (the
// order the quote hash writes them in).
func metaColumns(cols []string) []metaCol {
	var meta []metaCol
	for i, c := range cols {
		if isMetaColumn(c) {
			meta = append(meta, metaCol{key: c[len(metaPrefix):], i: i})
		}
	}
	sortMeta(meta)
	return meta
}

// sortMeta orders columns by key.
func sortMeta(cols []metaCol) {
	slices.SortFunc(cols, func(a, b metaCol) int { return strings.Compare(a.key, b.key) })
}

// isMetaColumn reports whether a column name starts with meta_ (in any
// case).
func isMetaColumn(name string) bool {
	return len(name) >= len(metaPrefix) && strings.EqualFold(name[:len(metaPrefix)], metaPrefix)
}

// parseOnReport reads is_on_report: 1/0 or true/false (any case).
func parseOnReport(s []byte) (on, ok bool) {
	switch {
	case bytes.Equal(s, []byte("1")), bytes.EqualFold(s, []byte("true")):
		return true, true
	case bytes.Equal(s, []byte("0")), bytes.EqualFold(s, []byte("false")):
		return false, true
	}
	return false, false
}

// parseExtras reads the markup, is_on_report and metadata of a row into
// l; a value that is not valid is a RowError naming its column.
func (db *DB) parseExtras(l *Line, e *RowError, get func(string) (string, bool), vals []any, meta []metaCol) *RowError {
	fail := func(col, reason, kind string) *RowError {
		e.Column, e.Reason, e.Kind = col, reason, kind
		return e
	}
	if m, ok := get(colMarkup); ok {
		d, problem, kind := db.amount(m, true, "return a number or NULL (no markup)")
		if problem != "" {
			return fail(colMarkup, problem, kind)
		}
		lim := db.limits()
		if canon := d.String(); !within(lim, amountPrice, canon) {
			return fail(colMarkup, lim.problem(amountPrice, m, canon), RowBounds)
		}
		l.Markup = &d
	}
	if r, ok := get(colOnReport); ok {
		on, valid := parseOnReport(bytes.TrimSpace([]byte(r)))
		if !valid {
			return fail(colOnReport, fmt.Sprintf("is %q; return 1 or 0 (true or false), or NULL to leave it out", r), "")
		}
		l.OnReport = &on
	}
	for _, m := range meta {
		v, ok := text(vals[m.i])
		if v = strings.TrimSpace(v); !ok || v == "" {
			continue
		}
		if l.Metadata == nil {
			l.Metadata = make(map[string]string, len(meta))
		}
		l.Metadata[m.key] = v
	}
	return nil
}

// extras reads the markup, is_on_report and metadata of a row as
// LineTexts keeps them; false when LineItems would refuse the row.
func (r *lineReader) extras(rec *lineRec, c []cell) bool {
	if i := r.cols.markup; i >= 0 && !c[i].null {
		d, ok := r.amount(c[i])
		if !ok {
			return false
		}
		canon := d.String()
		rec.markup, rec.hasMarkup = r.keep([]byte(canon)), true
		if !within(r.lim, amountPrice, canon) {
			return false
		}
	}
	if i := r.cols.onReport; i >= 0 && !c[i].null {
		on, ok := parseOnReport(bytes.TrimSpace(c[i].b))
		if !ok {
			return false
		}
		rec.onReport = 1
		if on {
			rec.onReport = 2
		}
	}
	rec.metaOff = uint32(len(r.meta))
	for k, m := range r.cols.meta {
		if c[m.i].null {
			continue
		}
		if v := bytes.TrimSpace(c[m.i].b); len(v) > 0 {
			r.meta = append(r.meta, metaRef{col: uint32(k), val: r.keep(v)})
		}
	}
	rec.metaN = uint32(len(r.meta)) - rec.metaOff
	return true
}

// metaRef is a metadata value LineTexts kept: its column in
// lineCols.meta and its text in the arena.
type metaRef struct {
	col uint32
	val span
}

// lineText makes the LineText of rec; str reads the arena.
func (r *lineReader) lineText(rec *lineRec, str func(span) string) LineText {
	l := LineText{LineID: str(rec.id), WorkType: rec.workType, Description: str(rec.desc),
		PartNumber: str(rec.part), Order: rec.order, Quantity: str(rec.qty), Price: str(rec.price), Total: str(rec.total)}
	if rec.hasMarkup {
		l.Markup = str(rec.markup)
	}
	switch rec.onReport {
	case 1:
		l.OnReport = "false"
	case 2:
		l.OnReport = "true"
	}
	if rec.metaN > 0 {
		l.Metadata = make([]MetaValue, rec.metaN)
		for k, m := range r.meta[rec.metaOff : rec.metaOff+rec.metaN] {
			l.Metadata[k] = MetaValue{Key: r.cols.meta[m.col].key, Value: str(m.val)}
		}
	}
	return l
}
