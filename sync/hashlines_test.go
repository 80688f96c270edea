package sync

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/shopdb"
)

func ptr[T any](v T) *T { return &v }

// TestHashLineExtras: a line without markup, is_on_report or metadata
// hashes as it did before the shop could supply them (no Draft is
// re-pushed after an upgrade), and each of them, once there, is part of
// the hash (a change of markup re-pushes the Draft).
func TestHashLineExtras(t *testing.T) {
	dec := decimal.RequireFromString
	e := testEngine(t, DefaultConfig())
	plain := []shopdb.Line{{LineID: "11", Order: 1, WorkType: "Parts", Description: "Clip", PartNumber: "P-1",
		Quantity: dec("2"), Price: dec("1.25"), Total: dec("2.50")}}
	// The hash of this quote as the releases before these fields made it.
	const before = "78a30b21a77b6647c3e1e341bc56ed6eaea28bf17dd122c203cdf07ff559547e"
	base := hashQuote(e.buildQuote("RO-1", plain, nil))
	if base != before {
		t.Errorf("hash of a line without extras = %s, want the earlier %s", base, before)
	}
	with := func(f func(l *shopdb.Line)) string {
		ls := slices.Clone(plain)
		f(&ls[0])
		return hashQuote(e.buildQuote("RO-1", ls, nil))
	}
	if got := with(func(l *shopdb.Line) { l.Metadata = map[string]string{} }); got != base {
		t.Errorf("empty metadata changed the hash: %s", got)
	}
	markup := with(func(l *shopdb.Line) { l.Markup = ptr(dec("10")) })
	for name, f := range map[string]func(l *shopdb.Line){
		"markup 10.5":     func(l *shopdb.Line) { l.Markup = ptr(dec("10.5")) },
		"markup 0":        func(l *shopdb.Line) { l.Markup = ptr(dec("0")) },
		"on report":       func(l *shopdb.Line) { l.OnReport = ptr(true) },
		"not on report":   func(l *shopdb.Line) { l.OnReport = ptr(false) },
		"metadata":        func(l *shopdb.Line) { l.Metadata = map[string]string{"colour": "blue"} },
		"metadata value":  func(l *shopdb.Line) { l.Metadata = map[string]string{"colour": "red"} },
		"markup 10.00 is": func(l *shopdb.Line) { l.Markup = ptr(dec("10.00")) },
	} {
		got := with(f)
		if name == "markup 10.00 is" {
			if got != markup {
				t.Errorf("markup 10.00 hashes %s, markup 10 %s: the same amount", got, markup)
			}
			continue
		}
		if got == base || got == markup {
			t.Errorf("%s: hash unchanged", name)
		}
	}
}

// TestHashQuoteFields: no quote-level fields (none configured, or none for
// the job) hash as before; each field and its value is part of the hash.
func TestHashQuoteFields(t *testing.T) {
	e := testEngine(t, DefaultConfig())
	lines := sampleLines()
	base := hashQuote(e.buildQuote("RO-1", lines, nil))
	if got := hashQuote(e.buildQuote("RO-1", lines, map[string]string{})); got != base {
		t.Errorf("empty fields changed the hash")
	}
	seen := map[string]string{base: "none"}
	for name, fields := range map[string]map[string]string{
		"one":       {"claimNote": "rear"},
		"value":     {"claimNote": "front"},
		"name":      {"assessor": "rear"},
		"two":       {"claimNote": "rear", "assessor": "J"},
		"htmlchars": {"claimNote": "<&>"},
	} {
		q := e.buildQuote("RO-1", lines, fields)
		for k, v := range fields {
			var got string
			if err := json.Unmarshal(q.Extra[k], &got); err != nil || got != v {
				t.Errorf("%s: field %s = %s (%v), want the JSON string %q", name, k, q.Extra[k], err, v)
			}
		}
		h := hashQuote(q)
		if other, dup := seen[h]; dup {
			t.Errorf("fields %s hash like %s", name, other)
		}
		seen[h] = name
	}
}
