package sync_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"

	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// The dry run's plan names what a pass would do, and writes nothing: the
// remote gets only the list call, the shop and the state are untouched.
func TestPlan(t *testing.T) {
	r := newRig(t, rigOptions{})
	first := r.seed(sampleshop.ClaimDraft, sampleshop.ClaimNoLines)
	r.pass()
	// Changes a pass would act on: a new request with an existing job, one
	// for a new claim, a changed line, an estimate marked final.
	more := r.seed(sampleshop.ClaimFinal, "CLM-6001")
	if _, err := r.shop.AddLine(r.ctx, sampleshop.JobNoLines, sampleshop.Line{Code: "MECH", Description: "Realign", Qty: d("1"), UnitPrice: price("80")}); err != nil {
		t.Fatal(err)
	}
	if err := r.shop.SetFinal(r.ctx, sampleshop.JobDraft, true); err != nil {
		t.Fatal(err)
	}

	before := r.emu.Calls()
	stateBefore, _ := r.st.ListRequests(r.ctx, store.ListQuery{})
	trips := shopdbtest.RoundTrips(r.db)
	plan, err := r.engine.Plan(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if shopdbtest.RoundTrips(r.db) == trips {
		t.Error("the plan read nothing from the database")
	}
	got := map[string]string{}
	for _, a := range plan.Actions {
		got[a.Request+" "+a.Do] = a.Job
	}
	want := map[string]string{
		more[0] + " " + qsync.DoReserve:    sampleshop.JobFinal,
		more[1] + " " + qsync.DoCreateJob:  "",
		first[1] + " " + qsync.DoPushDraft: sampleshop.JobNoLines,
		first[0] + " " + qsync.DoSubmit:    sampleshop.JobDraft,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	if w := r.writes(before); len(w) != 0 {
		t.Errorf("the dry run wrote to the remote: %v", w)
	}
	stateAfter, _ := r.st.ListRequests(r.ctx, store.ListQuery{})
	if diff := cmp.Diff(stateBefore, stateAfter); diff != "" {
		t.Errorf("the dry run changed quotesync's state (-before +after):\n%s", diff)
	}
	if job, _ := r.shop.FindJob(r.ctx, "CLM-6001"); job != "" {
		t.Errorf("the dry run created job %s in the shop", job)
	}
}
