package shopdb_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// TestUpdateClearsJobNumber plays a job number the remote refuses as a
// conflict: the request is rejected with its job cleared and ResumePhase
// waiting; the job is then free for another request, and retry puts the
// request back to waiting, where Reserve runs find_job again.
func TestUpdateClearsJobNumber(t *testing.T) {
	db, d := shopdbtest.New(t)
	ctx := testContext(t)
	r1 := mustReserve(t, db, newRequest("1", sampleshop.ClaimDraft))
	if _, err := db.Reserve(ctx, newRequest("2", sampleshop.ClaimDraft)); !errors.Is(err, shopdb.ErrJobInUse) {
		t.Fatalf("Reserve of a second request for %s: %v, want ErrJobInUse", sampleshop.JobDraft, err)
	}

	rejected, err := db.Update(ctx, r1, withPhase(r1, shopdb.PhaseRejected, func(r *shopdb.Request) {
		r.JobNumber, r.ResumePhase, r.BookingDate = "", shopdb.PhaseWaiting, time.Time{}
		r.LastError = "409 referenceId RO-50001 already used"
	}), shopdb.Event{Kind: shopdb.EventPhase, Message: "job number refused"})
	if err != nil {
		t.Fatalf("Update clearing the job: %v", err)
	}
	checkStored(t, db, rejected)
	if got := count(t, d, "SELECT COUNT(*) FROM quotesync_requests WHERE request_id = '1' AND job_number IS NULL"); got != 1 {
		t.Errorf("job_number of request 1 is not NULL")
	}
	// Several rows without a job live side by side (NULL is not a duplicate).
	mustDefer(t, db, newRequest("3", "CLM-3"), "create_job failed", time.Time{})
	mustDefer(t, db, newRequest("4", "CLM-4"), "create_job failed", time.Time{})
	if got := count(t, d, "SELECT COUNT(*) FROM quotesync_requests WHERE job_number IS NULL"); got != 3 {
		t.Errorf("rows without a job = %d, want 3", got)
	}

	// The freed job can be reserved by another request.
	r2 := mustReserve(t, db, newRequest("2", sampleshop.ClaimDraft))
	if r2.JobNumber != sampleshop.JobDraft {
		t.Errorf("request 2 got job %q, want the freed %s", r2.JobNumber, sampleshop.JobDraft)
	}

	// retry: back to waiting, no job, fresh attempts.
	waiting, err := db.Retry(ctx, "1", "operator: re-run find_job")
	if err != nil {
		t.Fatalf("Retry: %v", err)
	}
	checkStored(t, db, waiting)
	if waiting.Phase != shopdb.PhaseWaiting || waiting.JobNumber != "" || waiting.ResumePhase != "" ||
		waiting.Attempts != 0 || waiting.LastError != "" || waiting.Version != rejected.Version+1 {
		t.Errorf("after Retry: %+v; want waiting, no job, no resume phase, no error, version %d", waiting, rejected.Version+1)
	}
	evs, err := db.Events(ctx, "1", 1)
	if err != nil || len(evs) != 1 || evs[0].Kind != shopdb.EventRetry || evs[0].From != shopdb.PhaseRejected ||
		evs[0].To != shopdb.PhaseWaiting || evs[0].Job != "" {
		t.Errorf("retry event = %+v, %v; want retry rejected → waiting without a job", evs, err)
	}
	// Reserve runs find_job again: the claim's job now belongs to request 2.
	again, err := db.Reserve(ctx, newRequest("1", sampleshop.ClaimDraft))
	if !errors.Is(err, shopdb.ErrJobInUse) {
		t.Fatalf("Reserve after retry: %+v, %v; want ErrJobInUse (find_job found %s again)", again, err, sampleshop.JobDraft)
	}
	if stored, err := db.Request(ctx, "1"); err != nil || !cmp.Equal(stored, waiting) {
		t.Errorf("Reserve that failed changed the waiting row: %+v, %v", stored, err)
	}
	// The shop cancels that job and opens another: Reserve upgrades the row.
	if _, err := d.SQL.Exec("UPDATE jobs SET status = 'CANCELLED' WHERE job_no = ?", sampleshop.JobDraft); err != nil {
		t.Fatal(err)
	}
	job, err := d.Shop().CreateJob(ctx, sampleshop.ClaimDraft, "")
	if err != nil {
		t.Fatal(err)
	}
	up := mustReserve(t, db, newRequest("1", sampleshop.ClaimDraft))
	if up.Phase != shopdb.PhaseReserved || up.JobNumber != job || !up.CreatedAt.Equal(r1.CreatedAt) {
		t.Errorf("Reserve after the shop's new job = %+v; want reserved with %s, created_at kept", up, job)
	}
	checkStored(t, db, up)
}

// TestUpdateChangesJobNumber: Update moves a request to another job and
// frees the old one.
func TestUpdateChangesJobNumber(t *testing.T) {
	db, d := shopdbtest.New(t)
	ctx := testContext(t)
	r := mustReserve(t, db, newRequest("1", sampleshop.ClaimDraft))
	job, err := d.Shop().CreateJob(ctx, "CLM-OTHER", "")
	if err != nil {
		t.Fatal(err)
	}
	moved, err := db.Update(ctx, r, withPhase(r, shopdb.PhaseReserved, func(r *shopdb.Request) { r.JobNumber = job }), shopdb.Event{})
	if err != nil {
		t.Fatalf("Update to job %s: %v", job, err)
	}
	checkStored(t, db, moved)
	if moved.JobNumber != job {
		t.Errorf("job = %q, want %q", moved.JobNumber, job)
	}
	if got := count(t, d, "SELECT COUNT(*) FROM quotesync_requests WHERE job_number = ?", sampleshop.JobDraft); got != 0 {
		t.Errorf("rows on the old job = %d, want 0", got)
	}
	if r2 := mustReserve(t, db, newRequest("2", sampleshop.ClaimDraft)); r2.JobNumber != sampleshop.JobDraft {
		t.Errorf("request 2 got job %q, want the freed %s", r2.JobNumber, sampleshop.JobDraft)
	}
}

// TestRetryWithoutJobGoesToWaiting: a rejected request without a job never
// resumes as reserved (which would accept with an empty referenceId).
func TestRetryWithoutJobGoesToWaiting(t *testing.T) {
	db, _ := shopdbtest.New(t)
	ctx := testContext(t)
	for _, resume := range []shopdb.Phase{shopdb.PhaseReserved, "", shopdb.PhaseWaiting} {
		id := "r-" + string(resume)
		r := mustReserve(t, db, newRequest(id, "CLM-"+id))
		advance(t, db, r, shopdb.PhaseRejected, func(r *shopdb.Request) { r.JobNumber, r.ResumePhase = "", resume })
		got, err := db.Retry(ctx, id, "")
		if err != nil {
			t.Fatalf("Retry(resume %q): %v", resume, err)
		}
		if got.Phase != shopdb.PhaseWaiting || got.JobNumber != "" {
			t.Errorf("Retry(resume %q) = %s with job %q, want waiting without a job", resume, got.Phase, got.JobNumber)
		}
	}
	// With a job, an unset ResumePhase still means reserved.
	r := mustReserve(t, db, newRequest("with-job", "CLM-WJ"))
	advance(t, db, r, shopdb.PhaseRejected, nil)
	if got, err := db.Retry(ctx, "with-job", ""); err != nil || got.Phase != shopdb.PhaseReserved || got.JobNumber != r.JobNumber {
		t.Errorf("Retry with a job = %+v, %v; want reserved on %s", got, err, r.JobNumber)
	}
}

// withPhase is r moved to phase, edited.
func withPhase(r shopdb.Request, phase shopdb.Phase, edit func(*shopdb.Request)) shopdb.Request {
	r.Phase = phase
	if edit != nil {
		edit(&r)
	}
	return r
}
