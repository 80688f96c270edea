package sync_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// TestQuoteFieldsPushed: the fields of shop.queries.quote_fields travel
// beside the items of the Draft; a pass that re-reads the job with the
// fields unchanged writes nothing (the hash of lines read as text includes
// them), a changed field re-pushes the Draft, and a job with two rows of
// fields is held with the query named.
func TestQuoteFieldsPushed(t *testing.T) {
	r := newRig(t, rigOptions{shop: func(c *shopdb.Config) {
		c.Queries.QuoteFields = `SELECT job, note AS claimNote FROM quote_notes WHERE job IN (:jobs)`
	}})
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := r.d.SQL.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`CREATE TABLE quote_notes (job VARCHAR(20), note VARCHAR(40))`)
	exec(`INSERT INTO quote_notes VALUES (?, 'rear impact')`, sampleshop.JobDraft)
	// The estimate's marker moves with the notes, as the mapping must make it.
	touch := func() {
		t.Helper()
		exec(`UPDATE estimates SET updated_at = NOW(6) + INTERVAL 1 SECOND WHERE job_id = (SELECT job_id FROM jobs WHERE job_no = ?)`, sampleshop.JobDraft)
	}
	note := func() string {
		t.Helper()
		q, ok := r.remoteQuote(sampleshop.JobDraft)
		if !ok {
			t.Fatalf("no quote for %s", sampleshop.JobDraft)
		}
		var body map[string]json.RawMessage
		if err := json.Unmarshal(q.Body, &body); err != nil {
			t.Fatal(err)
		}
		return string(body["claimNote"])
	}
	req := r.seed(sampleshop.ClaimDraft)[0]
	r.pass()
	if got := note(); got != `"rear impact"` {
		t.Errorf("claimNote of the first Draft = %s, want \"rear impact\"", got)
	}

	touch()
	before := r.emu.Calls()
	r.pass()
	if w := r.writes(before); len(w) != 0 {
		t.Errorf("a pass with the marker moved and nothing else changed wrote %v", w)
	}

	exec(`UPDATE quote_notes SET note = 'front impact' WHERE job = ?`, sampleshop.JobDraft)
	touch()
	before = r.emu.Calls()
	r.pass()
	if w := r.writes(before); w[emulator.RouteCreateQuote] != 1 {
		t.Errorf("a changed quote field wrote %v, want the Draft pushed again", w)
	}
	if got := note(); got != `"front impact"` {
		t.Errorf("claimNote after the change = %s, want \"front impact\"", got)
	}

	exec(`INSERT INTO quote_notes VALUES (?, 'second row')`, sampleshop.JobDraft)
	touch()
	before = r.emu.Calls()
	r.pass()
	if w := r.writes(before); len(w) != 0 {
		t.Errorf("a job with two rows of quote fields wrote %v", w)
	}
	if row := r.row(req); !strings.Contains(row.LastError, "shop.queries.quote_fields returns two rows") {
		t.Errorf("row of %s: last error %q, want the two rows of quote_fields named", req, row.LastError)
	}
}
