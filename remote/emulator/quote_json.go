package emulator

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
)

// render encodes the quote as the emulator answers it: known fields first in
// a fixed order, unknown fields after them in key order, numbers as the
// exact text the client sent. rates and items are always present (empty
// arrays when the client sent none).
func (q quote) render() json.RawMessage {
	var w jsonWriter
	w.open()
	w.value("type", q.Type)
	w.value("status", q.Status)
	if q.ReferenceID != nil {
		w.value("referenceId", *q.ReferenceID)
	}
	w.raw("rates", renderList(q.Rates, rate.render))
	w.raw("items", renderList(q.Items, item.render))
	writeExtra(&w, q.Extra)
	w.close()
	return w.buf.Bytes()
}

// render encodes one rate.
func (r rate) render() []byte {
	var w jsonWriter
	w.open()
	w.value("type", r.Type)
	w.raw("rate", []byte(r.Rate))
	w.close()
	return w.buf.Bytes()
}

// render encodes one item.
func (it item) render() []byte {
	var w jsonWriter
	w.open()
	if it.ID != "" {
		if it.IDNumeric {
			w.raw("id", []byte(it.ID))
		} else {
			w.value("id", it.ID)
		}
	}
	if it.Order != "" {
		w.raw("order", []byte(it.Order))
	}
	w.value("type", it.Type)
	w.value("description", it.Description)
	w.raw("quantity", []byte(it.Quantity))
	w.raw("price", []byte(it.Price))
	w.raw("total", []byte(it.Total))
	if it.Metadata != nil {
		w.value("metadata", it.Metadata)
	}
	if it.PartNumber != nil {
		w.value("partNumber", *it.PartNumber)
	}
	if it.Markup != "" {
		w.raw("markup", []byte(it.Markup))
	}
	if it.IsOnReport != nil {
		w.value("isOnReport", *it.IsOnReport)
	}
	w.close()
	return w.buf.Bytes()
}

// renderList encodes a JSON array of rendered elements.
func renderList[T any](elems []T, render func(T) []byte) []byte {
	buf := []byte{'['}
	for i, e := range elems {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, render(e)...)
	}
	return append(buf, ']')
}

// writeExtra writes the unknown members in key order.
func writeExtra(w *jsonWriter, extra map[string]json.RawMessage) {
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		w.raw(k, extra[k])
	}
}

// assignItemIDs gives every item without an id a numeric id unique within
// the job: the job's counter moves past every id in use, numeric or string.
func (j *job) assignItemIDs(q *quote, replacing string) {
	used := make(map[string]bool)
	for typ, sq := range j.quotes {
		if typ == replacing {
			continue
		}
		for _, it := range sq.quote.Items {
			used[it.ID] = true
		}
	}
	for _, it := range q.Items {
		used[it.ID] = true
	}
	for i := range q.Items {
		if q.Items[i].ID != "" {
			continue
		}
		for {
			j.nextItemID++
			id := strconv.FormatInt(j.nextItemID, 10)
			if !used[id] {
				q.Items[i].ID, q.Items[i].IDNumeric = id, true
				used[id] = true
				break
			}
		}
	}
}
