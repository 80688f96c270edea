package shopdb

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// FuzzParseLine feeds arbitrary column text to the row validation: it never
// panics, a valid line has the invariants the quote builder relies on, and
// an invalid one names its job and a known column.
func FuzzParseLine(f *testing.F) {
	f.Add("1234", "7", "R&R", "Remove bumper", "", "1.500", "95.5000", "", "", "", "", false)
	f.Add("1", "1", "PART", "Panel", "P-1", "1", "412.3750", "412.38", "12.50", "1", "blue", false)
	f.Add("", "x", "???", " ", "", "-1", "NaN", "1e400", "-1", "yes", " ", true)
	f.Add("9", "2.5", "PNT", "d", "", "1e3", "-0.0001", "abc", "1e30", "FALSE", "x", true)
	f.Add("9", "2", "PNT", "d", "", "1", "1", "", "0.1234567890123456", "true", "", false)
	// Amounts in the forms a shop's column types write, and odd ones.
	for _, a := range []string{"0", "-0.00", "95.5000", "0012.340", "-1.5", "1e30", "0.0001", "123456789012345678", "1234567890123456789", "1.", ".5", "+5", "-"} {
		f.Add("7", "3", "R&R", "d", "", a, "1.005", "", a, "", "", true)
	}
	wt := map[string]string{"R&R": "RemoveReplaceLabour", "PART": "Parts", "PNT": "RefinishLabour"}
	db := &DB{pool: &pool{cfg: Config{WorkTypes: wt}}, workTypes: wt, workKey: workTypesKey}
	cols := []string{"job", "line_id", "line_no", "code", "description", "part_number", "quantity", "price", "total", "markup", "is_on_report", "meta_Colour"}
	idx, err := columnIndex("line_items", cols, lineColumnsRequired, lineColumnsOptional)
	if err != nil {
		f.Fatal(err)
	}
	meta := metaColumns(cols)
	f.Fuzz(func(t *testing.T, lineID, lineNo, code, desc, part, qty, price, total, markup, onReport, colour string, credits bool) {
		db.cfg.AllowCredits = credits
		vals := []any{[]byte("RO-1")}
		for _, v := range []string{lineID, lineNo, code, desc, part, qty, price, total, markup, onReport, colour} {
			if v == "" {
				vals = append(vals, nil) // NULL
			} else {
				vals = append(vals, []byte(v))
			}
		}
		l, rerr := db.parseLine("RO-1", idx, meta, vals)
		fast := fastLine(db, idx, meta, vals)
		if fast != nil && rerr != nil {
			t.Fatalf("LineTexts takes a row LineItems refuses (%v): %+v", rerr, *fast)
		}
		if rerr != nil {
			var re *RowError
			if !errors.As(error(rerr), &re) || re.Job != "RO-1" || !contains(cols, re.Column) ||
				!strings.HasPrefix(rerr.Error(), "job RO-1 line ") {
				t.Fatalf("bad error %#v: %v", rerr, rerr)
			}
			return
		}
		if l.LineID == "" || l.Description == "" || l.WorkType == "" {
			t.Fatalf("valid line with empty fields: %+v", l)
		}
		if !credits && (l.Quantity.IsNegative() || l.Price.IsNegative() || (l.Markup != nil && l.Markup.IsNegative())) {
			t.Fatalf("negative amount accepted without credits: %+v", l)
		}
		if total == "" && !l.Total.Equal(l.Quantity.Mul(l.Price).Round(2)) {
			t.Fatalf("derived total %s, want %s", l.Total, l.Quantity.Mul(l.Price).Round(2))
		}
		lim := db.limits()
		for i, d := range []decimal.Decimal{l.Quantity, l.Price, l.Total} {
			if d.Abs().GreaterThan(lim.max[i]) || sigDigits(d.String()) > lim.maxDigits {
				t.Fatalf("amount %s out of bounds accepted: %+v", d, l)
			}
		}
		if m := l.Markup; (m == nil) != (markup == "") || m != nil && (m.Abs().GreaterThan(lim.max[amountPrice]) || sigDigits(m.String()) > lim.maxDigits) {
			t.Fatalf("markup %q read as %v", markup, m)
		}
		if (l.OnReport == nil) != (onReport == "") {
			t.Fatalf("is_on_report %q read as %v", onReport, l.OnReport)
		}
		if v, ok := l.Metadata["Colour"]; ok != (strings.TrimSpace(colour) != "") || v != strings.TrimSpace(colour) || len(l.Metadata) > 1 {
			t.Fatalf("meta_Colour %q read as %v", colour, l.Metadata)
		}
		if fast == nil {
			return // left to LineItems: slower, never wrong
		}
		want := LineText{LineID: l.LineID, WorkType: l.WorkType, Description: l.Description, PartNumber: l.PartNumber,
			Order: l.Order, Quantity: l.Quantity.String(), Price: l.Price.String(), Total: l.Total.String()}
		if l.Markup != nil {
			want.Markup = l.Markup.String()
		}
		if l.OnReport != nil {
			want.OnReport = strconv.FormatBool(*l.OnReport)
		}
		for k, v := range l.Metadata {
			want.Metadata = append(want.Metadata, MetaValue{k, v})
		}
		if !reflect.DeepEqual(*fast, want) {
			t.Fatalf("LineTexts reads\n%+v\nLineItems\n%+v", *fast, want)
		}
	})
}

// fastLine runs LineTexts' row reading on vals (column 0 the job): the
// line it keeps, or nil when it leaves the row to LineItems.
func fastLine(db *DB, idx map[string]int, meta []metaCol, vals []any) *LineText {
	r := lineReader{db: db, lim: db.limits(), cols: newLineCols(idx, meta), unsure: []bool{false}}
	cells := make([]cell, len(vals))
	for i, v := range vals {
		if err := cells[i].Scan(v); err != nil {
			panic(err)
		}
	}
	if !r.valid(0, cells) {
		return nil
	}
	var got *LineText
	r.set = jobSet{list: []string{"RO-1"}}
	r.deliver(func(_ string, lines []LineText) { got = &lines[0] })
	return got
}
