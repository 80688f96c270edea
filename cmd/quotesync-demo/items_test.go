package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// decimalEqual compares decimals as numbers, for cmp.
var decimalEqual = cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })

func TestShopItems(t *testing.T) {
	lines := []sampleshop.Line{
		{LineID: 1, LineNo: 1, Code: "R&R", Description: "Bumper", Qty: dec("1.500"), UnitPrice: price("95.5000")},
		{LineID: 2, LineNo: 2, Code: "PART", Description: "Cover", PartNo: "52119", Qty: dec("1"), UnitPrice: price("412.3750"), LineTotal: price("412.38")},
		{LineID: 3, LineNo: 3, Code: "RPR", Description: "Bracket", Qty: dec("0.333"), UnitPrice: price("10.0150")},
	}
	got, err := shopItems(lines, sampleshop.WorkTypes())
	if err != nil {
		t.Fatal(err)
	}
	want := []remote.Item{
		{ID: "1", Order: 1, Type: "RemoveReplaceLabour", Description: "Bumper", Quantity: dec("1.5"), Price: dec("95.5"), Total: dec("143.25")},
		{ID: "2", Order: 2, Type: "Parts", Description: "Cover", PartNumber: "52119", Quantity: dec("1"), Price: dec("412.375"), Total: dec("412.38")},
		// 0.333 × 10.015 = 3.334995: half up to cents is 3.33.
		{ID: "3", Order: 3, Type: "RepairLabour", Description: "Bracket", Quantity: dec("0.333"), Price: dec("10.015"), Total: dec("3.33")},
	}
	if diff := cmp.Diff(want, got, decimalEqual); diff != "" {
		t.Errorf("shopItems (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name string
		line sampleshop.Line
		want string
	}{
		{"NullPrice", sampleshop.Line{LineID: 9, Code: "PART", Qty: dec("1")}, "shop line 9 has no unit price"},
		{"UnmappedCode", sampleshop.Line{LineID: 8, Code: "XX", Qty: dec("1"), UnitPrice: price("1")}, `operation code "XX"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := shopItems([]sampleshop.Line{tc.line}, sampleshop.WorkTypes())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestQuoteItems(t *testing.T) {
	body := `{"type":"Estimate","status":"Draft","items":[
		{"id":"11","order":2,"type":"Parts","description":"Cover","quantity":1.000,"price":389.0000,"total":389.00,"partNumber":"71501"},
		{"id":12,"order":3,"type":"Miscellaneous","description":"Levy","quantity":1,"price":0.1234567890123456789,"total":0.12}]}`
	got, err := quoteItems([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []remote.Item{
		{ID: "11", Order: 2, Type: "Parts", Description: "Cover", PartNumber: "71501", Quantity: dec("1"), Price: dec("389"), Total: dec("389")},
		{ID: "12", Order: 3, Type: "Miscellaneous", Description: "Levy", Quantity: dec("1"), Price: dec("0.1234567890123456789"), Total: dec("0.12")},
	}
	if diff := cmp.Diff(want, got, decimalEqual); diff != "" {
		t.Errorf("quoteItems (-want +got):\n%s", diff)
	}
	if _, err := quoteItems([]byte(`{"items":[{"id":"1","quantity":"x"}]}`)); err == nil {
		t.Error("quoteItems accepted a quantity that is not a number")
	}
}

func TestDiffItems(t *testing.T) {
	base := remote.Item{ID: "1", Order: 1, Type: "Parts", Description: "Cover", PartNumber: "P1",
		Quantity: dec("1"), Price: dec("95.5"), Total: dec("95.50")}
	with := func(f func(*remote.Item)) remote.Item {
		it := base
		f(&it)
		return it
	}
	for _, tc := range []struct {
		name      string
		want, got []remote.Item
		diffs     []string
	}{
		{"Equal", []remote.Item{base}, []remote.Item{with(func(it *remote.Item) { it.Price = dec("95.5000") })}, nil},
		{"BothEmpty", nil, nil, nil},
		{"Missing", []remote.Item{base}, nil, []string{"line 1 (Cover) is missing on the remote"}},
		{"Extra", nil, []remote.Item{base}, []string{"the remote holds item 1 (Cover), which the shop does not have (or deleted)"}},
		{"Repeated", []remote.Item{base}, []remote.Item{base, base}, []string{"the remote quote repeats an item id (2 items, 1 id)"}},
		{"Quantity", []remote.Item{base}, []remote.Item{with(func(it *remote.Item) { it.Quantity = dec("1.5") })},
			[]string{"line 1 differs: quantity 1.5, the shop has 1"}},
		{"Total", []remote.Item{base}, []remote.Item{with(func(it *remote.Item) { it.Total = dec("95.49") })},
			[]string{"line 1 differs: total 95.49, the shop has 95.5"}},
		{"Description", []remote.Item{base}, []remote.Item{with(func(it *remote.Item) { it.Description = "Cover (price to be confirmed)" })},
			[]string{`line 1 differs: description "Cover (price to be confirmed)", the shop has "Cover"`}},
		{"Type", []remote.Item{base}, []remote.Item{with(func(it *remote.Item) { it.Type = "RemoveReplace" })},
			[]string{`line 1 differs: type "RemoveReplace", the shop has "Parts"`}},
		{"PartNumber", []remote.Item{base}, []remote.Item{with(func(it *remote.Item) { it.PartNumber = "" })},
			[]string{`line 1 differs: partNumber "", the shop has "P1"`}},
		{"Order", []remote.Item{base}, []remote.Item{with(func(it *remote.Item) { it.Order = 2 })},
			[]string{`line 1 differs: order "2", the shop has "1"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.diffs, diffItems(tc.want, tc.got)); diff != "" {
				t.Errorf("diffItems (-want +got):\n%s", diff)
			}
		})
	}
}
