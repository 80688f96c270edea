package sync

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/shopdb"
)

// TestHashLinesIsHashQuote: the hash of a job's lines read as text
// (shopdb.LineTexts) is the hash of the quote built from the same lines
// read as values (shopdb.LineItems), with rates, a reference or none, no
// lines, and amounts whose text has trailing zeros. A difference would
// re-push every Draft on every pass without a change marker.
func TestHashLinesIsHashQuote(t *testing.T) {
	dec := decimal.RequireFromString
	lines := []shopdb.Line{
		{LineID: "7", Order: -3, WorkType: "RepairLabour", Description: "Bumper", Quantity: dec("1.500"), Price: dec("95.5000"), Total: dec("143.25")},
		{LineID: "07", Order: 1, WorkType: "Parts", Description: "Clip, ×4", PartNumber: "P-1", Quantity: dec("-1"), Price: dec("0.0500"), Total: dec("-0.05")},
		{LineID: "x", Order: 2, WorkType: "Parts", Description: "Big", Quantity: dec("100000"), Price: dec("1e3"), Total: dec("100000000.00")},
		{LineID: "y", Order: 3, WorkType: "Parts", Description: "Marked up", Quantity: dec("1"), Price: dec("2"), Total: dec("2"),
			Markup: ptr(dec("12.500")), OnReport: ptr(false), Metadata: map[string]string{"supplier": "OEM", "colour": "blue"}},
		{LineID: "z", Order: 4, WorkType: "Parts", Description: "On report", Quantity: dec("1"), Price: dec("2"), Total: dec("2"),
			OnReport: ptr(true)},
	}
	for i, cfg := range []QuoteConfig{
		{Type: "Estimate"},
		{Type: "Estimate", OmitReferenceID: true, Rates: map[string]decimal.Decimal{"RepairLabour": dec("95.5000"), "Parts": dec("0")}},
		{Type: "Estimate"},
	} {
		var fields map[string]string
		if i == 2 {
			fields = map[string]string{"claimNote": `<"Bumper" & more>`, "assessor": "J. Smith"}
		}
		c := DefaultConfig()
		c.Quote = cfg
		e := testEngine(t, c)
		w := &canonWriter{}
		for n := range len(lines) + 1 {
			texts := make([]shopdb.LineText, n)
			for i, l := range lines[:n] {
				texts[i] = shopdb.LineText{LineID: l.LineID, WorkType: l.WorkType, Description: l.Description, PartNumber: l.PartNumber,
					Order: l.Order, Quantity: l.Quantity.String(), Price: l.Price.String(), Total: l.Total.String()}
				if l.Markup != nil {
					texts[i].Markup = l.Markup.String()
				}
				if l.OnReport != nil {
					texts[i].OnReport = fmt.Sprint(*l.OnReport)
				}
				for _, k := range slices.Sorted(maps.Keys(l.Metadata)) {
					texts[i].Metadata = append(texts[i].Metadata, shopdb.MetaValue{Key: k, Value: l.Metadata[k]})
				}
			}
			t.Run(fmt.Sprintf("%d/%dLines", i, n), func(t *testing.T) {
				if got, want := e.hashLines(w, "RO-1", texts, fields), hashQuote(e.buildQuote("RO-1", lines[:n], fields)); got != want {
					t.Errorf("hashLines = %s, want hashQuote's %s", got, want)
				}
			})
		}
	}
}

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
	if got := e.hashLines(&canonWriter{}, "RO-1", []shopdb.LineText{{LineID: "11", Order: 1, WorkType: "Parts", Description: "Clip",
		PartNumber: "P-1", Quantity: "2", Price: "1.25", Total: "2.5"}}, nil); got != before {
		t.Errorf("hashLines of a line without extras = %s, want the earlier %s", got, before)
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
