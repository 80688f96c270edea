package sync_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	qsync "github.com/quotesync/quotesync/sync"
)

// TestUnreadableDraftNotSubmittedWhenLinesHashSame: a final estimate whose
// Draft answer could not be read is not submitted when a later pass reads
// its lines and they hash to what was pushed: neither when the change
// marker moved without a change of content, nor when there is no marker
// at all (estimate_state without one, and quote_fields set, so none is
// derived). Before, the path of lines that hash the same submitted it.
func TestUnreadableDraftNotSubmittedWhenLinesHashSame(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shop  func(*shopdb.Config)
		touch bool // move the estimate's marker before each pass
	}{
		{name: "MarkerMoved", touch: true},
		{name: "NoMarker", shop: func(c *shopdb.Config) {
			c.Queries.EstimateState = `SELECT j.job_no AS job, MAX(CASE WHEN e.status = 'FINAL' THEN 1 ELSE 0 END) AS final
FROM jobs j JOIN estimates e ON e.job_id = j.job_id WHERE j.job_no IN (:jobs) GROUP BY j.job_no`
			c.Queries.QuoteFields = `SELECT job_no AS job, NULL AS claimNote FROM jobs WHERE job_no IN (:jobs)`
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, b := newBadRig(t, rigOptions{shop: tc.shop})
			quantity := regexp.MustCompile(`"quantity":\s*[-0-9.eE]+`)
			b.set(nil, func(body []byte) []byte { return quantity.ReplaceAll(body, []byte(`"quantity":1e400`)) })
			id := r.seed(sampleshop.ClaimFinal)[0]
			r.pass()
			if row := r.row(id); row.Phase != qsync.PhaseDrafted || row.Reason != qsync.ReasonUnreadable {
				t.Fatalf("after pass 1: %s (%s), want drafted with an unreadable answer", row.Phase, row.Reason)
			}
			before := r.emu.Calls()
			for range 3 {
				if tc.touch {
					if _, err := r.d.SQL.ExecContext(r.ctx, `UPDATE estimates SET updated_at = NOW(6) + INTERVAL 1 SECOND
WHERE job_id = (SELECT job_id FROM jobs WHERE job_no = ?)`, sampleshop.JobFinal); err != nil {
						t.Fatal(err)
					}
				}
				r.clock.advance(time.Hour)
				r.pass()
			}
			if got := r.writes(before); len(got) != 0 {
				t.Errorf("later passes wrote %v, want nothing: the unreadable Draft is not submitted", got)
			}
			if row := r.row(id); row.Phase != qsync.PhaseDrafted || row.Reason != qsync.ReasonUnreadable {
				t.Errorf("after more passes: %s (%s), want still drafted with an unreadable answer", row.Phase, row.Reason)
			}
		})
	}
}
