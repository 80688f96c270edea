package emulator

import (
	"encoding/json"
	"strconv"
)

// render encodes the quote as the emulator answers it: the known fields
// in a fixed order, then the unknown ones in key order, numbers as the
// exact text the client sent; rates and items always (empty arrays when
// the client sent none).
func (q quote) render() json.RawMessage {
	known, _ := marshal(q)
	if len(q.Extra) == 0 {
		return known
	}
	extra, _ := marshal(q.Extra) // a map's keys are written sorted
	return append(append(known[:len(known)-1], ','), extra[1:]...)
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
			used[it.ID.text] = true
		}
	}
	for _, it := range q.Items {
		used[it.ID.text] = true
	}
	for i := range q.Items {
		for q.Items[i].ID.text == "" {
			j.NextItemID++
			if id := strconv.FormatInt(j.NextItemID, 10); !used[id] {
				q.Items[i].ID, used[id] = itemID{id, true}, true
			}
		}
	}
}
