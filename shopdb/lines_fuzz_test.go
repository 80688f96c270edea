package shopdb

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseLine feeds arbitrary column text to the row validation: it never
// panics, a valid line has the invariants the quote builder relies on, and
// an invalid one names its job and a known column.
func FuzzParseLine(f *testing.F) {
	f.Add("1234", "7", "R&R", "Remove bumper", "", "1.500", "95.5000", "", false)
	f.Add("1", "1", "PART", "Panel", "P-1", "1", "412.3750", "412.38", false)
	f.Add("", "x", "???", " ", "", "-1", "NaN", "1e400", true)
	f.Add("9", "2.5", "PNT", "d", "", "1e3", "-0.0001", "abc", true)
	db := &DB{cfg: Config{WorkTypes: map[string]string{"R&R": "RemoveReplaceLabour", "PART": "Parts", "PNT": "RefinishLabour"}}}
	cols := []string{"job", "line_id", "line_no", "code", "description", "part_number", "quantity", "price", "total"}
	idx := map[string]int{}
	for i, c := range cols {
		idx[c] = i
	}
	f.Fuzz(func(t *testing.T, lineID, lineNo, code, desc, part, qty, price, total string, credits bool) {
		db.cfg.AllowCredits = credits
		vals := []any{[]byte("RO-1")}
		for _, v := range []string{lineID, lineNo, code, desc, part, qty, price, total} {
			if v == "" {
				vals = append(vals, nil) // NULL
			} else {
				vals = append(vals, []byte(v))
			}
		}
		l, rerr := db.parseLine("RO-1", idx, vals)
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
		if !credits && (l.Quantity.IsNegative() || l.Price.IsNegative()) {
			t.Fatalf("negative amount accepted without credits: %+v", l)
		}
		if total == "" && !l.Total.Equal(l.Quantity.Mul(l.Price).Round(2)) {
			t.Fatalf("derived total %s, want %s", l.Total, l.Quantity.Mul(l.Price).Round(2))
		}
	})
}
