package emulator

import (
	"bytes"
	"encoding/json"
	"slices"
)

// Quote statuses of the seed.
const (
	StatusDraft     = "Draft"
	StatusSubmitted = "Submitted"
)

// quoteTypeEstimate is the quote the {status} path forms change when a job
// has several quotes.
const quoteTypeEstimate = "Estimate"

// quote is a Quote as stored: the known fields decoded, numbers kept as the
// exact text the client sent, unknown quote fields kept as raw JSON (the
// seed calls the quote open-ended; rates and items are closed). Rates and
// Items are never nil: decodeQuote makes them empty.
type quote struct {
	Type        string                     `json:"type"`
	Status      string                     `json:"status"`
	ReferenceID *string                    `json:"referenceId,omitempty"` // nil when the client sent none
	Rates       []rate                     `json:"rates"`
	Items       []item                     `json:"items"`
	Extra       map[string]json.RawMessage `json:"-"`
}

// rate is one Rate of a quote.
type rate struct {
	Type string      `json:"type"`
	Rate json.Number `json:"rate"`
}

// item is one Quote item, in the order it is written. ID is zero until the
// emulator assigns one.
type item struct {
	ID          itemID            `json:"id,omitzero"`
	Order       json.Number       `json:"order,omitempty"`
	Type        string            `json:"type"`
	Description string            `json:"description"`
	Quantity    json.Number       `json:"quantity"`
	Price       json.Number       `json:"price"`
	Total       json.Number       `json:"total"`
	Metadata    map[string]string `json:"metadata,omitzero"`
	PartNumber  *string           `json:"partNumber,omitempty"`
	Markup      json.Number       `json:"markup,omitempty"`
	IsOnReport  *bool             `json:"isOnReport,omitempty"`
}

// itemID is an item's id: the text of a string id, or the digits of an
// integer one, which travels as a JSON number.
type itemID struct {
	text    string
	numeric bool
}

func (id itemID) MarshalJSON() ([]byte, error) {
	if id.numeric {
		return []byte(id.text), nil
	}
	return marshal(id.text)
}

func (id *itemID) UnmarshalJSON(b []byte) error {
	id.numeric = kind(b) == "number"
	if id.numeric {
		id.text = string(bytes.TrimSpace(b))
		return nil
	}
	return json.Unmarshal(b, &id.text)
}

// decodeQuote parses and validates a Quote body. With typeRequired unset
// (PUT /jobs/{id}/quotes/{type}) type may be absent; with statusRequired
// unset status may be absent. Absent fields are left zero. What was read
// comes back beside an error; use it only without one.
func decodeQuote(body []byte, typeRequired, statusRequired bool) (quote, *apiError) {
	q := quote{Rates: []rate{}, Items: []item{}}
	_, aerr := decodeFields(body, "", []field{
		{name: "type", kind: kString, required: typeRequired, dst: &q.Type, check: notEmpty(&q.Type)},
		{name: "status", kind: kString, required: statusRequired, dst: &q.Status,
			check: func(_ json.RawMessage, f string) *apiError {
				if q.Status != StatusDraft && q.Status != StatusSubmitted {
					return fieldError(CodeInvalidField, f, "%s must be %q or %q, got %q", f,
						StatusDraft, StatusSubmitted, q.Status)
				}
				return nil
			}},
		{name: "referenceId", kind: kString, dst: &q.ReferenceID},
		{name: "rates", kind: kArray, check: func(v json.RawMessage, f string) *apiError {
			return elements(v, f, func(e json.RawMessage, path string) *apiError {
				var r rate
				missing := func(_ json.RawMessage, f string) *apiError { // an empty type is none
					if r.Type == "" {
						return fieldError(CodeMissingField, f, "%s is required", f)
					}
					return nil
				}
				_, aerr := decodeFields(e, path, []field{
					{name: "type", kind: kString, required: true, dst: &r.Type, check: missing},
					{name: "rate", kind: kNumber, required: true, dst: &r.Rate},
				}, unknown("unknown field %s; a rate has type and rate"))
				q.Rates = append(q.Rates, r)
				return aerr
			})
		}},
		{name: "items", kind: kArray, check: func(v json.RawMessage, f string) *apiError {
			return elements(v, f, func(e json.RawMessage, path string) *apiError {
				it, aerr := decodeItem(e, path)
				j := slices.IndexFunc(q.Items, func(o item) bool { return o.ID.text == it.ID.text })
				if aerr == nil && it.ID.text != "" && j >= 0 {
					aerr = fieldError(CodeInvalidField, path+".id", "%s.id %q repeats the id of items[%d]", path, it.ID.text, j)
				}
				q.Items = append(q.Items, it)
				return aerr
			})
		}},
	}, func(name, _ string, v json.RawMessage) *apiError {
		if q.Extra == nil {
			q.Extra = make(map[string]json.RawMessage)
		}
		q.Extra[name] = compactRaw(v)
		return nil
	})
	return q, aerr
}

// decodeItem parses one Quote item at path.
func decodeItem(raw json.RawMessage, path string) (item, *apiError) {
	var it item
	_, aerr := decodeFields(raw, path, []field{
		{name: "id", kind: kID, dst: &it.ID, check: notEmpty(&it.ID.text)},
		{name: "order", kind: kInteger, dst: &it.Order},
		{name: "type", kind: kString, required: true, dst: &it.Type, check: notEmpty(&it.Type)},
		{name: "description", kind: kString, required: true, dst: &it.Description},
		{name: "quantity", kind: kNumber, required: true, dst: &it.Quantity},
		{name: "price", kind: kNumber, required: true, dst: &it.Price},
		{name: "total", kind: kNumber, required: true, dst: &it.Total},
		{name: "metadata", check: func(v json.RawMessage, f string) *apiError {
			it.Metadata = map[string]string{}
			_, aerr := decodeFields(v, f, nil, func(name, f string, v json.RawMessage) *apiError {
				var s string
				aerr := field{kind: kString, dst: &s}.decode(v, f)
				it.Metadata[name] = s
				return aerr
			})
			return aerr
		}},
		{name: "partNumber", kind: kString, dst: &it.PartNumber},
		{name: "markup", kind: kNumber, dst: &it.Markup},
		{name: "isOnReport", kind: kBool, dst: &it.IsOnReport},
	}, unknown("unknown field %s; an item has id, order, type, description, quantity, price, total, "+
		"metadata, partNumber, markup and isOnReport"))
	return it, aerr
}
