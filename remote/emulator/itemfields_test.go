package emulator_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/quotesync/quotesync/remote/emulator"
)

// TestItemFieldsValidated: in both modes an item's markup is a number,
// isOnReport a boolean and metadata an object of strings; anything else
// is refused with the field named, and valid values are stored as sent.
func TestItemFieldsValidated(t *testing.T) {
	const good = `"type":"Parts","description":"d","quantity":1,"price":2,"total":2`
	for _, mode := range []string{emulator.ModeSpec, emulator.ModeDocumented} {
		t.Run(mode, func(t *testing.T) {
			var h *harness
			var call func(method, path, body string) response
			if mode == emulator.ModeDocumented {
				var tok string
				h, tok = documentedHarness(t, 0)
				call = func(method, path, body string) response { return h.docCall(tok, method, path, body) }
			} else {
				h = newHarness(t)
				call = h.call
			}
			id := h.seed("CLM-F")
			expectStatus(t, "accept", call("POST", "/requests/"+id, `{"referenceId":"RO-F"}`), http.StatusCreated)
			quote := func(fields string) string {
				return `{"type":"Estimate","status":"Draft","items":[{` + fields + good + `}]}`
			}
			for i, bad := range []struct{ fields, field string }{
				{`"markup":"12.5",`, "items[0].markup"},
				{`"markup":true,`, "items[0].markup"},
				{`"isOnReport":"true",`, "items[0].isOnReport"},
				{`"isOnReport":1,`, "items[0].isOnReport"},
				{`"metadata":{"colour":7},`, "items[0].metadata.colour"},
				{`"metadata":{"colour":null},`, "items[0].metadata.colour"},
				{`"metadata":["colour"],`, "items[0].metadata"},
				{`"metadata":"colour=blue",`, "items[0].metadata"},
			} {
				r := call("POST", "/jobs/RO-F/quotes", quote(bad.fields))
				expectStatus(t, fmt.Sprintf("case %d %s", i, bad.fields), r, http.StatusBadRequest)
				if mode == emulator.ModeDocumented {
					expectPlain(t, bad.fields, r, http.StatusBadRequest, bad.field)
				} else {
					var e struct{ Error struct{ Field string } }
					if err := json.Unmarshal(r.body, &e); err != nil || e.Error.Field != bad.field {
						t.Errorf("%s: error body %s, want field %s", bad.fields, r.body, bad.field)
					}
				}
			}
			r := call("POST", "/jobs/RO-F/quotes", quote(`"markup":12.50,"isOnReport":false,"metadata":{"colour":"blue","supplier":""},"partNumber":"P-1",`))
			expectStatus(t, "valid item fields", r, http.StatusCreated)
			j, _ := h.emu.State().Job("RO-F")
			q, ok := j.Quote("Estimate")
			if !ok {
				t.Fatal("no Estimate stored")
			}
			var body struct {
				Items []struct {
					Markup     json.Number       `json:"markup"`
					IsOnReport *bool             `json:"isOnReport"`
					Metadata   map[string]string `json:"metadata"`
					PartNumber string            `json:"partNumber"`
				} `json:"items"`
			}
			if err := json.Unmarshal(q.Body, &body); err != nil || len(body.Items) != 1 {
				t.Fatalf("stored quote %s: %v", q.Body, err)
			}
			it := body.Items[0]
			if it.Markup != "12.50" || it.IsOnReport == nil || *it.IsOnReport || it.PartNumber != "P-1" ||
				len(it.Metadata) != 2 || it.Metadata["colour"] != "blue" || it.Metadata["supplier"] != "" {
				t.Errorf("stored item %+v, want the fields as sent", it)
			}
		})
	}
}
