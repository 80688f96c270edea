package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/shopdb/sampleshop"
	qsync "github.com/quotesync/quotesync/sync"
)

// item is one quote item in a form the shop's lines and the remote's
// quote can both be put in and compared. Amounts compare as numbers
// (95.5 equals 95.5000).
type item struct {
	ID          string          `json:"-"`
	Order       int             `json:"order"`
	Type        string          `json:"type"`
	Description string          `json:"description"`
	PartNumber  string          `json:"partNumber"`
	Quantity    decimal.Decimal `json:"quantity"`
	Price       decimal.Decimal `json:"price"`
	Total       decimal.Decimal `json:"total"`
}

// shopItems is what the remote must hold for the shop's live lines,
// worked out here from the shop's rows and the sample mapping, not by
// quotesync: the id is the line id, the type the mapped operation code,
// the total the shop's line total or else quantity × price rounded half up
// to cents.
func shopItems(lines []sampleshop.Line, workTypes map[string]string) ([]item, error) {
	out := make([]item, 0, len(lines))
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
		out = append(out, item{
			ID: strconv.FormatInt(l.LineID, 10), Order: l.LineNo, Type: typ, Description: l.Description,
			PartNumber: l.PartNo, Quantity: l.Qty, Price: l.UnitPrice.Decimal, Total: total,
		})
	}
	return out, nil
}

// quoteItems decodes the items of a quote body, numbers exactly (a
// decimal decodes a JSON number from its text).
func quoteItems(body []byte) ([]item, error) {
	var q struct {
		Items []struct {
			ID json.RawMessage `json:"id"`
			item
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &q); err != nil {
		return nil, fmt.Errorf("decode the remote quote: %w", err)
	}
	out := make([]item, len(q.Items))
	for i, w := range q.Items {
		out[i] = w.item
		if json.Unmarshal(w.ID, &out[i].ID) != nil {
			out[i].ID = string(w.ID) // a numeric id
		}
	}
	return out, nil
}

// diffItems lists the differences between the items the shop wants and
// the items the remote holds, matched by id; nil when they are equal.
func diffItems(want, got []item) []string {
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

func byID(items []item) map[string]item {
	m := make(map[string]item, len(items))
	for _, it := range items {
		m[it.ID] = it
	}
	return m
}

// diffItem names the first field in which two items differ. Amounts
// compare as numbers: a decimal's String has no trailing zeros.
func diffItem(want, got item) string {
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
