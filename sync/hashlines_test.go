package sync

import (
	"fmt"
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
	}
	for _, cfg := range []QuoteConfig{
		{Type: "Estimate"},
		{Type: "Estimate", OmitReferenceID: true, Rates: map[string]decimal.Decimal{"RepairLabour": dec("95.5000"), "Parts": dec("0")}},
	} {
		c := DefaultConfig()
		c.Quote = cfg
		e := testEngine(t, c)
		w := &canonWriter{}
		for n := range len(lines) + 1 {
			texts := make([]shopdb.LineText, n)
			for i, l := range lines[:n] {
				texts[i] = shopdb.LineText{LineID: l.LineID, WorkType: l.WorkType, Description: l.Description, PartNumber: l.PartNumber,
					Order: l.Order, Quantity: l.Quantity.String(), Price: l.Price.String(), Total: l.Total.String()}
			}
			t.Run(fmt.Sprintf("%v/%dLines", cfg.OmitReferenceID, n), func(t *testing.T) {
				if got, want := e.hashLines(w, "RO-1", texts), hashQuote(e.buildQuote("RO-1", lines[:n])); got != want {
					t.Errorf("hashLines = %s, want hashQuote's %s", got, want)
				}
			})
		}
	}
}
