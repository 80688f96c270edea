package sync

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/remote"
)

// TestHashQuoteGolden pins the hash of one quote: the pushed hashes stored
// in every shop's database were made with this byte stream, and a change
// to it would re-push every Draft once after an upgrade.
func TestHashQuoteGolden(t *testing.T) {
	on, markup := true, decimal.RequireFromString("12.50")
	q := remote.Quote{Type: "Estimate", Status: "Draft", ReferenceID: "RO-50001",
		Rates: []remote.Rate{{Type: "RepairLabour", Rate: decimal.RequireFromString("95.5000")}},
		Items: []remote.Item{
			{ID: "11", Order: 1, Type: "RepairLabour", Description: "Bumper", Quantity: decimal.RequireFromString("2.000"),
				Price: decimal.RequireFromString("12.3456"), Total: decimal.RequireFromString("24.69"), PartNumber: "P-1"},
			{ID: "12", Order: 2, Type: "Parts", Description: "Clip", Quantity: decimal.RequireFromString("-1"),
				Price: decimal.RequireFromString("0.0500"), Total: decimal.RequireFromString("-0.05"),
				Markup: &markup, IsOnReport: &on, Metadata: map[string]string{"b": "2", "a": "1"}},
		}}
	if got, want := hashQuote(q), goldenHash; got != want {
		t.Errorf("hashQuote = %s, want %s", got, want)
	}
}

const goldenHash = "f3364c56a68a31313297247af44cd550cced9e9adc281344fa90b52668f5c079"
