package remote

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/shopspring/decimal"
)

// Money and quantities travel as JSON numbers written from the decimal's
// own text, never through float64, keeping their scale (95.5000).
// Decoding accepts numbers and quoted numbers.

// maxDecimalExponent bounds a decoded decimal's exponent: a hostile
// 1e999999999 must not become a billion digits when it is sent back.
const maxDecimalExponent = 32

// decodeDecimal decodes a JSON number or quoted number; null gives zero.
func decodeDecimal(raw json.RawMessage) (decimal.Decimal, error) {
	if isNull(raw) {
		return decimal.Decimal{}, nil
	}
	var (
		text string
		err  error
	)
	if raw = bytes.TrimSpace(raw); raw[0] == '"' {
		text, err = decodeString(raw)
	} else {
		var n json.Number
		n, err = decodeNumber(raw)
		text = n.String()
	}
	switch {
	case err != nil:
		return decimal.Decimal{}, err
	case len(text) > maxNumberLen:
		return decimal.Decimal{}, fmt.Errorf("number longer than %d characters", maxNumberLen)
	}
	d, err := decimal.NewFromString(text)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("want a decimal number, got %q", clip(text))
	}
	if e := d.Exponent(); e > maxDecimalExponent || e < -maxDecimalExponent {
		return decimal.Decimal{}, fmt.Errorf("decimal %q out of range", clip(text))
	}
	return d, nil
}

// formatDecimal writes d as a JSON number keeping its scale.
func formatDecimal(d decimal.Decimal) string {
	if e := d.Exponent(); e < 0 {
		return d.StringFixed(-e)
	}
	return d.String()
}

// wireDecimal is a decimal that marshals as a JSON number (formatDecimal).
type wireDecimal decimal.Decimal

func (d wireDecimal) MarshalJSON() ([]byte, error) {
	return []byte(formatDecimal(decimal.Decimal(d))), nil
}

// isQuoteKey reports whether k is a member of a quote this package
// models; everything else goes to Quote.Extra.
func isQuoteKey(k string) bool {
	return slices.Contains([]string{"type", "status", "referenceId", "rates", "items"}, k)
}

// UnmarshalJSON decodes a quote; members beyond type, status, referenceId,
// rates and items are kept raw in Extra (nil when there are none).
func (q *Quote) UnmarshalJSON(data []byte) error {
	m, err := decodeObject(data)
	if err != nil {
		return fmt.Errorf("decode quote: %w", err)
	}
	var out Quote
	err = cmp.Or(field(m, "type", &out.Type, decodeString), field(m, "status", &out.Status, decodeString),
		field(m, "referenceId", &out.ReferenceID, decodeID),
		field(m, "rates", &out.Rates, listOf(decodeRate)), field(m, "items", &out.Items, listOf(decodeItem)))
	if err != nil {
		return fmt.Errorf("decode quote: %w", err)
	}
	maps.DeleteFunc(m, func(k string, _ json.RawMessage) bool { return isQuoteKey(k) })
	if len(m) > 0 {
		out.Extra = m // the members left
	}
	*q = out
	return nil
}

// MarshalJSON writes type, status, referenceId (omitted when empty), rates
// and items (empty arrays rather than null), then the Extra members in key
// order. Extra members named like a modelled field are not written: the
// field wins.
func (q Quote) MarshalJSON() ([]byte, error) {
	rates, items := append([]Rate{}, q.Rates...), append([]Item{}, q.Items...) // [], never null
	b, err := json.Marshal(struct {
		Type        string `json:"type"`
		Status      string `json:"status"`
		ReferenceID string `json:"referenceId,omitempty"`
		Rates       []Rate `json:"rates"`
		Items       []Item `json:"items"`
	}{q.Type, q.Status, q.ReferenceID, rates, items})
	if err != nil {
		return nil, fmt.Errorf("encode quote: %w", err)
	}
	extra := make(map[string]json.RawMessage)
	for k, v := range q.Extra {
		if !isQuoteKey(k) && len(bytes.TrimSpace(v)) > 0 {
			if !json.Valid(v) {
				return nil, fmt.Errorf("encode quote %s: not valid JSON", k)
			}
			extra[k] = v
		}
	}
	if len(extra) == 0 {
		return b, nil
	}
	e, err := json.Marshal(extra) // a map's keys are written sorted
	if err != nil {
		return nil, fmt.Errorf("encode quote: %w", err)
	}
	return append(append(b[:len(b)-1], ','), e[1:]...), nil
}

// listOf decodes a JSON array element by element with one; null gives
// nil. Errors name the element: "[2].price".
func listOf[T any](one func(json.RawMessage) (T, error)) func(json.RawMessage) ([]T, error) {
	return func(raw json.RawMessage) ([]T, error) {
		if isNull(raw) {
			return nil, nil
		}
		raw = bytes.TrimSpace(raw)
		if raw[0] != '[' {
			return nil, fmt.Errorf("want an array, got %s", describe(raw))
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return nil, err
		}
		out := make([]T, 0, len(elems))
		for i, e := range elems {
			v, err := one(e)
			if err != nil {
				return nil, fieldErr("["+strconv.Itoa(i)+"]", err)
			}
			out = append(out, v)
		}
		return out, nil
	}
}

// UnmarshalJSON decodes a rate: {"type": "...", "rate": 55.00}.
func (r *Rate) UnmarshalJSON(data []byte) error {
	return into(r, "rate", data, decodeRate)
}

// MarshalJSON writes the rate with its decimal as a JSON number.
func (r Rate) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type string      `json:"type"`
		Rate wireDecimal `json:"rate"`
	}{r.Type, wireDecimal(r.Rate)})
}

func decodeRate(data json.RawMessage) (Rate, error) {
	m, err := decodeObject(data)
	if err != nil {
		return Rate{}, err
	}
	var r Rate
	err = cmp.Or(field(m, "type", &r.Type, decodeString), field(m, "rate", &r.Rate, decodeDecimal))
	return r, err
}

// UnmarshalJSON decodes an item tolerantly: id as a string or number,
// decimals as numbers or quoted numbers, metadata values other than strings
// kept as their JSON text. Members not modelled by Item are dropped.
func (it *Item) UnmarshalJSON(data []byte) error {
	return into(it, "item", data, decodeItem)
}

type wireItem struct {
	ID          string            `json:"id,omitempty"`
	Order       int               `json:"order"`
	Type        string            `json:"type"`
	Description string            `json:"description"`
	Quantity    wireDecimal       `json:"quantity"`
	Price       wireDecimal       `json:"price"`
	Total       wireDecimal       `json:"total"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	PartNumber  string            `json:"partNumber,omitempty"`
	Markup      *wireDecimal      `json:"markup,omitempty"`
	IsOnReport  *bool             `json:"isOnReport,omitempty"`
}

// MarshalJSON writes the item; id, metadata, partNumber, markup and
// isOnReport are omitted when empty or nil.
func (it Item) MarshalJSON() ([]byte, error) {
	return json.Marshal(wireItem{ID: it.ID, Order: it.Order, Type: it.Type, Description: it.Description,
		Quantity: wireDecimal(it.Quantity), Price: wireDecimal(it.Price), Total: wireDecimal(it.Total),
		Metadata: it.Metadata, PartNumber: it.PartNumber, Markup: (*wireDecimal)(it.Markup),
		IsOnReport: it.IsOnReport})
}

func decodeItem(data json.RawMessage) (Item, error) {
	m, err := decodeObject(data)
	if err != nil {
		return Item{}, err
	}
	var it Item
	err = cmp.Or(
		field(m, "id", &it.ID, decodeID),
		field(m, "type", &it.Type, decodeString),
		field(m, "description", &it.Description, decodeString),
		field(m, "partNumber", &it.PartNumber, decodeID),
		field(m, "order", &it.Order, decodeInt),
		field(m, "quantity", &it.Quantity, decodeDecimal),
		field(m, "price", &it.Price, decodeDecimal),
		field(m, "total", &it.Total, decodeDecimal),
		field(m, "markup", &it.Markup, optional(decodeDecimal)),
		field(m, "isOnReport", &it.IsOnReport, optional(decodeBool)),
		field(m, "metadata", &it.Metadata, decodeMetadata),
	)
	return it, err
}

// decodeMetadata decodes a string → string object; other values are kept
// as their compact JSON text, null as "".
func decodeMetadata(raw json.RawMessage) (map[string]string, error) {
	if isNull(raw) {
		return nil, nil
	}
	m, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	for k := range m {
		var s string
		if err := field(m, k, &s, metadataValue); err != nil {
			return nil, err
		}
		out[k] = s
	}
	return out, nil
}

func metadataValue(v json.RawMessage) (string, error) {
	if v = bytes.TrimSpace(v); isNull(v) || v[0] == '"' {
		return decodeString(v)
	}
	c, err := compact(v)
	return string(c), err
}
