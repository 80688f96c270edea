package shopdb

import (
	"errors"
	"slices"
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
	db := &DB{pool: &pool{cfg: Config{WorkTypes: wt}, lim: newBounds(Limits{})}, workTypes: wt, workKey: workTypesKey}
	cols := []string{"job", "line_id", "line_no", "code", "description", "part_number", "quantity", "price", "total", "markup", "is_on_report", "meta_Colour"}
	idx, err := columnIndex("line_items", cols, lineColumnsRequired, lineColumnsOptional)
	if err != nil {
		f.Fatal(err)
	}
	r := lineRow{db: db, meta: metaColumns(cols)}
	for _, c := range lineColumns {
		r.at = append(r.at, idx[c.name])
	}
	f.Fuzz(func(t *testing.T, lineID, lineNo, code, desc, part, qty, price, total, markup, onReport, colour string, credits bool) {
		db.cfg.AllowCredits = credits
		r.lim = db.lim
		cells := []cell{{b: []byte("RO-1")}}
		for _, v := range []string{lineID, lineNo, code, desc, part, qty, price, total, markup, onReport, colour} {
			cells = append(cells, cell{b: []byte(v), null: v == ""}) // "" is NULL
		}
		l, rerr := r.parse("RO-1", cells)
		if rerr != nil {
			var re *RowError
			if !errors.As(error(rerr), &re) || re.Job != "RO-1" || !slices.Contains(cols, re.Column) ||
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
		lim := db.lim
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
	})
}
