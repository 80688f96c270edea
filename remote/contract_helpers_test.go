package remote_test

// Helpers of the contract test's workflow.

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/emulator"
)

// checkContract asserts that every exchange so far was validated, that
// none violated the contract, and that every operation of the contract
// and every status of the workflow was among them.
func (env *contractEnv) checkContract(t *testing.T, spec *contractSpec) {
	rep := env.validator.report()
	for _, v := range rep.violations {
		t.Errorf("contract violation: %s", v)
	}
	if rep.exchanges == 0 || rep.validated != rep.exchanges {
		t.Errorf("%d of %d exchanges validated, want all (and some)", rep.validated, rep.exchanges)
	}
	calls := 0
	for _, n := range env.emu.Calls() {
		calls += n
	}
	if attempts := len(env.attempts.routes()); attempts != rep.exchanges || calls != rep.exchanges {
		t.Errorf("the client made %d attempts, the validator saw %d exchanges, the emulator %d calls; want equal",
			attempts, rep.exchanges, calls)
	}
	for _, op := range spec.operations() {
		if rep.routes[op] == 0 {
			t.Errorf("operation %s was never validated", op)
		}
	}
	for _, status := range []int{200, 201, 400, 401, 404, 409, 410, 429, 503} {
		if rep.statuses[status] == 0 {
			t.Errorf("no answer with status %d was validated", status)
		}
	}
	t.Logf("%d exchanges validated over %d operations; statuses %v", rep.validated, len(rep.routes), rep.statuses)
}

// draftJob accepts request id as job and gives it a Draft Estimate.
func (env *contractEnv) draftJob(t *testing.T, c *remote.Client, id, job string) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.Accept(ctx, id, job, time.Time{}); err != nil {
		t.Fatalf("accept %s as %s: %v", id, job, err)
	}
	if _, err := c.CreateQuote(ctx, job, contractDraft(job)); err != nil {
		t.Fatalf("draft on %s: %v", job, err)
	}
}

// expectSubmittedBy checks that job's last change is its Estimate's
// submission, once, through route.
func (env *contractEnv) expectSubmittedBy(t *testing.T, job, route string) {
	t.Helper()
	st := env.emu.State()
	h := st.History[len(st.History)-1]
	if h.JobID != job || h.Kind != emulator.HistoryStatusChange || h.Route != route {
		t.Errorf("last change %s %s by %s, want %s %s by %s", h.JobID, h.Kind, h.Route, job, emulator.HistoryStatusChange, route)
	}
	j, _ := st.Job(job)
	if q, _ := j.Quote(remote.QuoteTypeEstimate); q.Status != remote.StatusSubmitted || q.SubmitCount != 1 {
		t.Errorf("job %s: Estimate %s, submitted %d times; want Submitted once", job, q.Status, q.SubmitCount)
	}
}

// expectCallError checks that err is a *remote.Error of class want with
// the given status, whose body carries the emulator's error code.
func expectCallError(t *testing.T, what string, err, want error, status int, code string) {
	t.Helper()
	var e *remote.Error
	switch {
	case err == nil:
		t.Errorf("%s: no error, want %v (%d %s)", what, want, status, code)
	case !errors.Is(err, want) || !errors.As(err, &e):
		t.Errorf("%s: error %v, want a *remote.Error matching %v", what, err, want)
	case e.Status != status || !strings.Contains(e.Body, `"code":"`+code+`"`):
		t.Errorf("%s: status %d body %s, want %d with code %s", what, e.Status, e.Body, status, code)
	}
}

// contractDraft is a Draft Estimate with a client string id, a line
// without id, decimals with trailing zeros, the optional item members and
// an unknown quote member; ref "" leaves referenceId out.
func contractDraft(ref string) remote.Quote {
	yes := true
	markup := decimal.RequireFromString("10.5")
	d := decimal.RequireFromString
	return remote.Quote{
		Type: remote.QuoteTypeEstimate, Status: remote.StatusDraft, ReferenceID: ref,
		Rates: []remote.Rate{{Type: "RepairLabour", Rate: d("95.5000")}, {Type: "Parts", Rate: d("0")}},
		Items: []remote.Item{
			{ID: "line-1", Order: 1, Type: "Parts", Description: "Front bumper", Quantity: d("1"),
				Price: d("412.3750"), Total: d("412.38"), Metadata: map[string]string{"shopLine": "1"},
				PartNumber: "52119-02A90", Markup: &markup, IsOnReport: &yes},
			{Order: 2, Type: "RepairLabour", Description: "Fit bumper", Quantity: d("1.5"),
				Price: d("95.5000"), Total: d("143.25")},
		},
		Extra: map[string]json.RawMessage{"assessorNotes": json.RawMessage(`{"kept":true}`)},
	}
}

// isDigits reports whether s is a non-empty decimal number (a numeric id).
func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// historyKinds lists the kinds of job's history entries, in order.
func historyKinds(st emulator.State, job string) []string {
	var kinds []string
	for _, h := range st.History {
		if h.JobID == job {
			kinds = append(kinds, h.Kind)
		}
	}
	return kinds
}
