package shopdb

import (
	"slices"
	"testing"

	"github.com/shopspring/decimal"
)

func TestCompareLineIDs(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"9", "10", -1},
		{"10", "9", 1},
		{"10", "10", 0},
		{"007", "7", -1}, // equal values: by text
		{"7", "007", 1},
		{"-3", "2", -1},
		{"-10", "-9", -1},
		{"-0", "0", -1}, // equal values: by text
		{"+5", "4", 1},
		{"123456789012345678901234567890", "99", 1}, // beyond int64
		{"10", "1a", -1}, // integers first
		{"1a", "9", 1},
		{"a", "b", -1},
		{"A-10", "A-9", -1}, // not integers: as strings
		{"-", "0", 1},       // a lone sign is not an integer
		{"", "0", 1},
	}
	for _, c := range cases {
		if got := compareLineIDs(c.a, c.b); got != c.want {
			t.Errorf("compareLineIDs(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestCompareLineIDsTotalOrder: compareLineIDs is antisymmetric and
// transitive over a mix of ids, so every input order sorts the same.
func TestCompareLineIDsTotalOrder(t *testing.T) {
	ids := []string{"9", "10", "1a", "a", "0010", "-1", "+1", "1", "01", "b", "A-9", "A-10", "", "-", "99999999999999999999"}
	for _, a := range ids {
		for _, b := range ids {
			if ab, ba := compareLineIDs(a, b), compareLineIDs(b, a); ab != -ba || (ab == 0) != (a == b) {
				t.Fatalf("compare(%q, %q) = %d, compare(%q, %q) = %d", a, b, ab, b, a, ba)
			}
			for _, c := range ids {
				if compareLineIDs(a, b) < 0 && compareLineIDs(b, c) < 0 && compareLineIDs(a, c) >= 0 {
					t.Fatalf("not transitive: %q < %q < %q but not %q < %q", a, b, c, a, c)
				}
			}
		}
	}
	want := slices.Clone(ids)
	slices.SortFunc(want, compareLineIDs)
	got := slices.Clone(ids)
	slices.Reverse(got)
	slices.SortFunc(got, compareLineIDs)
	if !slices.Equal(got, want) {
		t.Errorf("sorting the reversed input gave %q, want %q", got, want)
	}
}

// TestLineNumberPlainDigits: a line_no of plain digits, read without a
// decimal, is what the decimal reading gives, at the bounds too.
func TestLineNumberPlainDigits(t *testing.T) {
	for _, s := range []string{"7", "+7", "-7", "007", "0", "-0", "2147483648", "-2147483648", "2147483649", "-2147483649",
		"9223372036854775807", "9223372036854775808", "-9223372036854775809", "", "+", "-", "7.00", "7e0", "0x7", "1_0", "٣"} {
		n, err := decimal.NewFromString(s)
		wantOK := err == nil && n.IsInteger() && !n.Abs().GreaterThan(decimal.NewFromInt(1<<31))
		want := 0
		if wantOK {
			want = int(n.IntPart())
		}
		if got, ok := lineNumber(s); got != want || ok != wantOK {
			t.Errorf("lineNumber(%q) = %d, %v; the decimal reading gives %d, %v", s, got, ok, want, wantOK)
		}
	}
}
