package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/store"
)

// TestUpdateClearsJobNumber plays a job number the remote refuses as a
// conflict: the request's row is updated with its job cleared; the job is
// then free for another request, and rows without a job live side by side.
// (What the reconciler then does with the row, retry included, is tested in
// package sync.)
func TestUpdateClearsJobNumber(t *testing.T) {
	db, d := newStore(t)
	ctx := testContext(t)
	r1 := mustReserve(t, db, newRequest("1", sampleshop.ClaimDraft))
	if _, err := reserve(ctx, db, newRequest("2", sampleshop.ClaimDraft)); !errors.Is(err, store.ErrJobInUse) {
		t.Fatalf("reserving a second request for %s: %v, want ErrJobInUse", sampleshop.JobDraft, err)
	}
	if _, err := db.Request(ctx, "2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused reservation left a row: %v", err)
	}

	rejected, err := db.Update(ctx, r1, withPhase(r1, phRejected, func(r *store.Request) {
		r.JobNumber, r.ResumePhase, r.BookingDate = "", phWaiting, time.Time{}
		r.LastError = "409 referenceId RO-50001 already used"
	}), store.Event{Kind: "phase", Message: "job number refused"})
	if err != nil {
		t.Fatalf("Update clearing the job: %v", err)
	}
	checkStored(t, db, rejected)
	if got := count(t, d, "SELECT COUNT(*) FROM quotesync_requests WHERE request_id = '1' AND job_number IS NULL"); got != 1 {
		t.Errorf("job_number of request 1 is not NULL")
	}
	// Several rows without a job live side by side (NULL is not a duplicate).
	for _, id := range []string{"3", "4"} {
		if _, err := db.Insert(ctx, store.Request{RequestID: id, ClaimNumber: "CLM-" + id, Phase: phWaiting,
			LastError: "create_job failed"}, store.Event{Kind: "warning"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := count(t, d, "SELECT COUNT(*) FROM quotesync_requests WHERE job_number IS NULL"); got != 3 {
		t.Errorf("rows without a job = %d, want 3", got)
	}

	// The freed job can be reserved by another request.
	r2 := mustReserve(t, db, newRequest("2", sampleshop.ClaimDraft))
	if r2.JobNumber != sampleshop.JobDraft {
		t.Errorf("request 2 got job %q, want the freed %s", r2.JobNumber, sampleshop.JobDraft)
	}
	// And request 1 cannot take it back.
	back := withPhase(rejected, phReserved, func(r *store.Request) { r.JobNumber = sampleshop.JobDraft })
	if _, err := db.Update(ctx, rejected, back, store.Event{}); !errors.Is(err, store.ErrJobInUse) {
		t.Errorf("Update back to the job request 2 holds: %v, want ErrJobInUse", err)
	}
	if stored, err := db.Request(ctx, "1"); err != nil || !cmp.Equal(stored, rejected) {
		t.Errorf("the refused Update changed the row: %+v, %v", stored, err)
	}
}

// TestUpdateChangesJobNumber: Update moves a request to another job and
// frees the old one.
func TestUpdateChangesJobNumber(t *testing.T) {
	db, d := newStore(t)
	ctx := testContext(t)
	r := mustReserve(t, db, newRequest("1", sampleshop.ClaimDraft))
	job, err := d.Shop().CreateJob(ctx, "CLM-OTHER", "")
	if err != nil {
		t.Fatal(err)
	}
	moved, err := db.Update(ctx, r, withPhase(r, phReserved, func(r *store.Request) { r.JobNumber = job }), store.Event{})
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

// withPhase is r moved to phase, edited.
func withPhase(r store.Request, phase store.Phase, edit func(*store.Request)) store.Request {
	r.Phase = phase
	if edit != nil {
		edit(&r)
	}
	return r
}
