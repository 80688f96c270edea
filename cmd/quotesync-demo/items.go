package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	qsync "github.com/quotesync/quotesync/sync"
)

// shopItems is what the remote must hold for the shop's live lines, worked
// out from the shop's rows and the sample mapping, not by quotesync: the
// id is the line id, the type the mapped operation code, the total the
// shop's line total or else quantity × price rounded half up to cents.
func shopItems(lines []sampleshop.Line, workTypes map[string]string) ([]remote.Item, error) {
	out := make([]remote.Item, 0, len(lines))
	for _, l := range lines {
		typ, ok := workTypes[l.Code]
		if !ok {
			return nil, fmt.Errorf("shop line %d has operation code %q, which the mapping does not know", l.LineID, l.Code)
		}
		if !l.UnitPrice.Valid {
			return nil, fmt.Errorf("shop line %d has no unit price", l.LineID)
		}
		total := l.Qty.Mul(l.UnitPrice.Decimal).Round(2)
		if l.LineTotal.Valid {
			total = l.LineTotal.Decimal
		}
		out = append(out, remote.Item{
			ID: strconv.FormatInt(l.LineID, 10), Order: l.LineNo, Type: typ, Description: l.Description,
			PartNumber: l.PartNo, Quantity: l.Qty, Price: l.UnitPrice.Decimal, Total: total,
		})
	}
	return out, nil
}

// quoteItems decodes the items of a quote body, numbers exactly (a
// decimal decodes a JSON number from its text, a numeric id into its
// decimal string).
func quoteItems(body []byte) ([]remote.Item, error) {
	var q remote.Quote
	if err := json.Unmarshal(body, &q); err != nil {
		return nil, fmt.Errorf("decode the remote quote: %w", err)
	}
	return q.Items, nil
}

// diffItems lists the differences between the items the shop wants and
// the items the remote holds, matched by id; nil when they are equal.
func diffItems(want, got []remote.Item) []string {
	w, g := byID(want), byID(got)
	var out []string
	if len(got) != len(g) {
		out = append(out, fmt.Sprintf("the remote quote repeats an item id (%s, %s)", qsync.Plural(len(got), "item"), qsync.Plural(len(g), "id")))
	}
	for _, id := range slices.Sorted(maps.Keys(w)) {
		gi, ok := g[id]
		if !ok {
			out = append(out, fmt.Sprintf("line %s (%s) is missing on the remote", id, w[id].Description))
		} else if d := diffItem(w[id], gi); d != "" {
			out = append(out, fmt.Sprintf("line %s differs: %s", id, d))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(g)) {
		if _, ok := w[id]; !ok {
			out = append(out, fmt.Sprintf("the remote holds item %s (%s), which the shop does not have (or deleted)", id, g[id].Description))
		}
	}
	return out
}

func byID(items []remote.Item) map[string]remote.Item {
	m := make(map[string]remote.Item, len(items))
	for _, it := range items {
		m[it.ID] = it
	}
	return m
}

// diffItem names the first field in which two items differ. Amounts
// compare as numbers: a decimal's String has no trailing zeros.
func diffItem(want, got remote.Item) string {
	q := strconv.Quote
	for _, f := range [][3]string{
		{"order", q(strconv.Itoa(want.Order)), q(strconv.Itoa(got.Order))},
		{"type", q(want.Type), q(got.Type)},
		{"description", q(want.Description), q(got.Description)},
		{"partNumber", q(want.PartNumber), q(got.PartNumber)},
		{"quantity", want.Quantity.String(), got.Quantity.String()},
		{"price", want.Price.String(), got.Price.String()},
		{"total", want.Total.String(), got.Total.String()},
	} {
		if f[1] != f[2] {
			return fmt.Sprintf("%s %s, the shop has %s", f[0], f[2], f[1])
		}
	}
	return ""
}
