package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// TestE2EItemFields runs the binary on the sample shop, whose mapping
// returns markup, is_on_report and meta_supplier: they arrive at the
// emulator (both modes) as the shop holds them, a line without them
// carries none, and a change of markup alone re-pushes the Draft.
func TestE2EItemFields(t *testing.T) {
	for _, mode := range e2eModes {
		t.Run(mode, func(t *testing.T) {
			e := newE2E(t, e2eOptions{Mode: mode})
			e.seed(sampleshop.ClaimDraft, "KLM123")
			e2eWantCalls(t, "pass 1", e.mustOnce(), map[string]int{e2eRouteList: 1, e2eRouteAccept: 1, e2eRouteQuote: 1})
			items := e2eStoredItems(t, e, sampleshop.JobDraft)
			// Sample data: line 2 has markup 41.2400, on the report, supplier OEM;
			// line 1 is on the report; line 3 is not; line 4 says nothing.
			want := map[string]string{
				"1": `{"isOnReport":true}`,
				"2": `{"isOnReport":true,"markup":41.2400,"metadata":{"supplier":"OEM"}}`,
				"3": `{"isOnReport":false}`,
				"4": `{}`,
			}
			for id, w := range want {
				if got := items[id]; got != w {
					t.Errorf("item %s carries %s, want %s", id, got, w)
				}
			}
			e.checkInvariants(true, "after the first Draft")

			lines, err := e.Shop.Lines(e.ctx(), sampleshop.JobDraft)
			if err != nil {
				t.Fatal(err)
			}
			l := lines[1]
			l.Markup = e2eNullDec("45.0000")
			if err := e.Shop.EditLine(e.ctx(), l); err != nil {
				t.Fatal(err)
			}
			e2eWantCalls(t, "markup changed", e.mustOnce(), map[string]int{e2eRouteList: 1, e2eRouteQuote: 1})
			if got, w := e2eStoredItems(t, e, sampleshop.JobDraft)["2"], `{"isOnReport":true,"markup":45.0000,"metadata":{"supplier":"OEM"}}`; got != w {
				t.Errorf("item 2 after the markup changed carries %s, want %s", got, w)
			}
			e2eWantCalls(t, "idle pass", e.mustOnce(), map[string]int{e2eRouteList: 1})
			e.checkInvariants(true, "after the markup changed")
		})
	}
}

// e2eStoredItems returns the markup, isOnReport and metadata of each item
// of job's stored Estimate, by item id, as compact JSON.
func e2eStoredItems(t *testing.T, e *e2eEnv, job string) map[string]string {
	t.Helper()
	rj, ok := e.Emu.State().Job(job)
	if !ok {
		t.Fatalf("the emulator has no job %s", job)
	}
	q, ok := rj.Quote("Estimate")
	if !ok {
		t.Fatalf("job %s has no Estimate", job)
	}
	var body struct {
		Items []struct {
			ID         string          `json:"id"`
			Markup     json.RawMessage `json:"markup,omitempty"`
			IsOnReport json.RawMessage `json:"isOnReport,omitempty"`
			Metadata   json.RawMessage `json:"metadata,omitempty"`
		} `json:"items"`
	}
	if err := json.Unmarshal(q.Body, &body); err != nil {
		t.Fatalf("stored quote of %s: %v", job, err)
	}
	out := map[string]string{}
	for _, it := range body.Items {
		it2 := struct {
			IsOnReport json.RawMessage `json:"isOnReport,omitempty"`
			Markup     json.RawMessage `json:"markup,omitempty"`
			Metadata   json.RawMessage `json:"metadata,omitempty"`
		}{it.IsOnReport, it.Markup, it.Metadata}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(it2); err != nil {
			t.Fatal(err)
		}
		out[it.ID] = string(bytes.TrimSpace(b.Bytes()))
	}
	return out
}

// TestE2EQuoteFields runs the binary with shop.queries.quote_fields: the
// shop's fields arrive beside the items of the Draft, as strings, in both
// modes; a NULL leaves its field out.
func TestE2EQuoteFields(t *testing.T) {
	for _, mode := range e2eModes {
		t.Run(mode, func(t *testing.T) {
			e := newE2E(t, e2eOptions{Mode: mode,
				QuoteFields: `SELECT job, note AS claimNote, assessor FROM quote_notes WHERE job IN (:jobs)`})
			if _, err := e.sql.Exec(`CREATE TABLE quote_notes (job VARCHAR(20), note VARCHAR(40), assessor VARCHAR(40))`); err != nil {
				t.Fatal(err)
			}
			if _, err := e.sql.Exec(`INSERT INTO quote_notes VALUES (?, 'rear "impact" <1>', NULL)`, sampleshop.JobDraft); err != nil {
				t.Fatal(err)
			}
			e.seed(sampleshop.ClaimDraft, "KLM123")
			e2eWantCalls(t, "pass 1", e.mustOnce(), map[string]int{e2eRouteList: 1, e2eRouteAccept: 1, e2eRouteQuote: 1})
			rj, _ := e.Emu.State().Job(sampleshop.JobDraft)
			q, ok := rj.Quote("Estimate")
			if !ok {
				t.Fatalf("no Estimate for %s", sampleshop.JobDraft)
			}
			var body map[string]json.RawMessage
			if err := json.Unmarshal(q.Body, &body); err != nil {
				t.Fatal(err)
			}
			var note string
			if err := json.Unmarshal(body["claimNote"], &note); err != nil || note != `rear "impact" <1>` {
				t.Errorf("claimNote = %s (%v), want the shop's note as a string", body["claimNote"], err)
			}
			if v, ok := body["assessor"]; ok {
				t.Errorf("assessor = %s, want it left out (NULL in the shop)", v)
			}
			e.checkInvariants(true, "after the Draft with quote fields")
		})
	}
}
