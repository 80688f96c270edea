package emulator

import (
	"encoding/json"
	"fmt"
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
// seed calls the quote open-ended; rates and items are closed).
type quote struct {
	Type        string
	Status      string
	ReferenceID *string // nil when the client sent none
	Rates       []rate
	Items       []item
	Extra       map[string]json.RawMessage
}

// rate is one Rate of a quote.
type rate struct {
	Type string      `json:"type"`
	Rate json.Number `json:"rate"`
}

// item is one Quote item, in the order it is written. ID is empty until
// the emulator assigns one; IDNumeric says whether it travels as a JSON
// number.
type item struct {
	ID          string            `json:"-"`
	IDNumeric   bool              `json:"-"`
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

// decodeQuote parses and validates a Quote body. With typeRequired unset
// (PUT /jobs/{id}/quotes/{type}) type may be absent; with statusRequired
// unset status may be absent. Absent fields are left zero.
func decodeQuote(body []byte, typeRequired, statusRequired bool) (quote, *apiError) {
	var q quote
	_, aerr := members(body, "", func(name, _ string, raw json.RawMessage) (aerr *apiError) {
		switch name {
		case "type":
			q.Type, aerr = asString(raw, name)
			if aerr == nil && q.Type == "" {
				aerr = fieldError(CodeInvalidField, name, "type must not be empty")
			}
		case "status":
			q.Status, aerr = asString(raw, name)
			if aerr == nil && q.Status != StatusDraft && q.Status != StatusSubmitted {
				aerr = fieldError(CodeInvalidField, name, "status must be %q or %q, got %q",
					StatusDraft, StatusSubmitted, q.Status)
			}
		case "referenceId":
			var s string
			s, aerr = asString(raw, name)
			q.ReferenceID = &s
		case "rates":
			q.Rates, aerr = decodeRates(raw)
		case "items":
			q.Items, aerr = decodeItems(raw)
		default:
			if q.Extra == nil {
				q.Extra = make(map[string]json.RawMessage)
			}
			q.Extra[name] = compactRaw(raw)
		}
		return aerr
	})
	if aerr != nil {
		return quote{}, aerr
	}
	if typeRequired && q.Type == "" {
		return quote{}, fieldError(CodeMissingField, "type", "type is required")
	}
	if statusRequired && q.Status == "" {
		return quote{}, fieldError(CodeMissingField, "status", "status is required")
	}
	return q, nil
}

// decodeRates parses the rates array.
func decodeRates(raw json.RawMessage) ([]rate, *apiError) {
	elems, aerr := asArray(raw, "rates")
	if aerr != nil {
		return nil, aerr
	}
	rates := make([]rate, 0, len(elems))
	for i, e := range elems {
		path := fmt.Sprintf("rates[%d]", i)
		var r rate
		if _, aerr := members(e, path, func(name, f string, v json.RawMessage) (aerr *apiError) {
			switch name {
			case "type":
				r.Type, aerr = asString(v, f)
			case "rate":
				r.Rate, aerr = asNumber(v, f)
			default:
				aerr = fieldError(CodeUnknownField, f, "unknown field %s; a rate has type and rate", f)
			}
			return aerr
		}); aerr != nil {
			return nil, aerr
		}
		if r.Type == "" {
			return nil, fieldError(CodeMissingField, path+".type", "%s.type is required", path)
		}
		if r.Rate == "" {
			return nil, fieldError(CodeMissingField, path+".rate", "%s.rate is required", path)
		}
		rates = append(rates, r)
	}
	return rates, nil
}

// decodeItems parses the items array; item ids must be unique in it.
func decodeItems(raw json.RawMessage) ([]item, *apiError) {
	elems, aerr := asArray(raw, "items")
	if aerr != nil {
		return nil, aerr
	}
	items := make([]item, 0, len(elems))
	seen := make(map[string]int)
	for i, e := range elems {
		path := fmt.Sprintf("items[%d]", i)
		it, aerr := decodeItem(e, path)
		if aerr != nil {
			return nil, aerr
		}
		if it.ID != "" {
			if j, dup := seen[it.ID]; dup {
				return nil, fieldError(CodeInvalidField, path+".id",
					"%s.id %q repeats the id of items[%d]", path, it.ID, j)
			}
			seen[it.ID] = i
		}
		items = append(items, it)
	}
	return items, nil
}

// decodeItem parses one Quote item at path.
func decodeItem(raw json.RawMessage, path string) (item, *apiError) {
	var it item
	obj, aerr := members(raw, path, func(name, f string, v json.RawMessage) (aerr *apiError) {
		switch name {
		case "id":
			aerr = it.decodeID(v, f)
		case "order":
			it.Order, aerr = asInteger(v, f)
		case "type":
			it.Type, aerr = asString(v, f)
			if aerr == nil && it.Type == "" {
				aerr = fieldError(CodeInvalidField, f, "%s must not be empty", f)
			}
		case "description":
			it.Description, aerr = asString(v, f)
		case "quantity":
			it.Quantity, aerr = asNumber(v, f)
		case "price":
			it.Price, aerr = asNumber(v, f)
		case "total":
			it.Total, aerr = asNumber(v, f)
		case "metadata":
			it.Metadata, aerr = asStringMap(v, f)
		case "partNumber":
			var s string
			s, aerr = asString(v, f)
			it.PartNumber = &s
		case "markup":
			it.Markup, aerr = asNumber(v, f)
		case "isOnReport":
			var b bool
			b, aerr = asBool(v, f)
			it.IsOnReport = &b
		default:
			aerr = fieldError(CodeUnknownField, f, "unknown field %s; an item has id, order, type, "+
				"description, quantity, price, total, metadata, partNumber, markup and isOnReport", f)
		}
		return aerr
	})
	if aerr != nil {
		return item{}, aerr
	}
	for _, req := range []struct {
		name    string
		present bool
	}{
		{"type", it.Type != ""},
		{"description", obj["description"] != nil},
		{"quantity", it.Quantity != ""},
		{"price", it.Price != ""},
		{"total", it.Total != ""},
	} {
		if !req.present {
			f := joinField(path, req.name)
			return item{}, fieldError(CodeMissingField, f, "%s is required", f)
		}
	}
	return it, nil
}

// decodeID parses an item id: a non-empty string or an integer.
func (it *item) decodeID(raw json.RawMessage, field string) *apiError {
	switch kind(raw) {
	case "string":
		s, aerr := asString(raw, field)
		if aerr != nil {
			return aerr
		}
		if s == "" {
			return fieldError(CodeInvalidField, field, "%s must not be empty", field)
		}
		it.ID = s
		return nil
	case "number":
		n, aerr := asInteger(raw, field)
		if aerr != nil {
			return aerr
		}
		it.ID, it.IDNumeric = string(n), true
		return nil
	default:
		return wrongType(field, "a string or an integer", raw)
	}
}
