package shopdb_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

func TestReserveFindsExistingJob(t *testing.T) {
	db, d := shopdbtest.New(t)
	ctx := testContext(t)
	nr := newRequest("101", sampleshop.ClaimDraft)
	before := counter(t, d)

	r, err := db.Reserve(ctx, nr)
	if err != nil {
		t.Fatalf("Reserve: %v", err)
	}
	if got, want := r.JobNumber, sampleshop.JobDraft; got != want {
		t.Errorf("job = %q, want %q", got, want)
	}
	if got, want := r.Phase, shopdb.PhaseReserved; got != want {
		t.Errorf("phase = %q, want %q", got, want)
	}
	if got, want := r.BookingDate, time.Date(2025, 7, 14, 0, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("booking date = %v, want %v", got, want)
	}
	if got, want := counter(t, d), before; got != want {
		t.Errorf("counter = %d, want %d (find_job must not create)", got, want)
	}
	stored, err := db.Request(ctx, "101")
	if err != nil {
		t.Fatalf("Request: %v", err)
	}
	if diff := cmp.Diff(r, stored); diff != "" {
		t.Errorf("Reserve's row differs from the stored row (-returned +stored):\n%s", diff)
	}
	evs, err := db.Events(ctx, "101", 0)
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	if len(evs) != 1 || evs[0].Kind != shopdb.EventPhase || evs[0].To != shopdb.PhaseReserved || evs[0].Job != sampleshop.JobDraft {
		t.Fatalf("events = %+v, want one phase event to reserved for %s", evs, sampleshop.JobDraft)
	}

	// Reserving again returns the row unchanged and writes nothing.
	again, err := db.Reserve(ctx, nr)
	if err != nil {
		t.Fatalf("second Reserve: %v", err)
	}
	if diff := cmp.Diff(r, again); diff != "" {
		t.Errorf("second Reserve changed the row (-first +second):\n%s", diff)
	}
	if got, want := count(t, d, "SELECT COUNT(*) FROM quotesync_events"), 1; got != want {
		t.Errorf("events after second Reserve = %d, want %d", got, want)
	}
}

func TestReserveCreatesJob(t *testing.T) {
	db, d := shopdbtest.New(t)
	ctx := testContext(t)
	before := counter(t, d)

	r := mustReserve(t, db, newRequest("201", "CLM-NEW-1"))
	want := "RO-" + strconv.Itoa(before+1)
	if r.JobNumber != want {
		t.Fatalf("job = %q, want %q (the next counter value)", r.JobNumber, want)
	}
	if got := counter(t, d); got != before+1 {
		t.Errorf("counter = %d, want %d", got, before+1)
	}
	var reg, claim string
	if err := d.SQL.QueryRow("SELECT registration, claim_number FROM jobs WHERE job_no = ?", r.JobNumber).Scan(&reg, &claim); err != nil {
		t.Fatalf("read created job: %v", err)
	}
	if reg != "REG201" || claim != "CLM-NEW-1" {
		t.Errorf("created job has registration %q claim %q, want REG201 (from vehicle.registration) and CLM-NEW-1", reg, claim)
	}
	if got := count(t, d, "SELECT COUNT(*) FROM estimates e JOIN jobs j ON j.job_id = e.job_id WHERE j.job_no = ?", r.JobNumber); got != 1 {
		t.Errorf("estimates of the created job = %d, want 1", got)
	}
	// The job is found, not created again, by the next Reserve of the same request.
	if again := mustReserve(t, db, newRequest("201", "CLM-NEW-1")); again.JobNumber != r.JobNumber {
		t.Errorf("second Reserve job = %q, want %q", again.JobNumber, r.JobNumber)
	}
	if got := counter(t, d); got != before+1 {
		t.Errorf("counter after second Reserve = %d, want %d", got, before+1)
	}
	if _, err := db.Request(ctx, "201"); err != nil {
		t.Fatal(err)
	}
}

func TestReserveWaitsWithoutJob(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	cfg := d.Config()
	cfg.Queries.CreateJob = nil
	db := d.Open(t, cfg)
	ctx := testContext(t)
	nr := newRequest("301", "CLM-LATER")

	r, err := db.Reserve(ctx, nr)
	if !errors.Is(err, shopdb.ErrNoJob) {
		t.Fatalf("Reserve error = %v, want ErrNoJob", err)
	}
	if r.Phase != shopdb.PhaseWaiting || r.JobNumber != "" || r.Version != 1 {
		t.Fatalf("row = %+v, want waiting, no job, version 1", r)
	}
	// Once waiting, another Reserve writes nothing.
	r2, err := db.Reserve(ctx, nr)
	if !errors.Is(err, shopdb.ErrNoJob) {
		t.Fatalf("second Reserve error = %v, want ErrNoJob", err)
	}
	if diff := cmp.Diff(r, r2); diff != "" {
		t.Errorf("second Reserve changed the waiting row:\n%s", diff)
	}
	if got := count(t, d, "SELECT COUNT(*) FROM quotesync_events WHERE request_id = '301'"); got != 1 {
		t.Errorf("events = %d, want 1 (waiting is recorded once)", got)
	}

	// The shop opens a job for the claim: the waiting row is upgraded.
	job, err := d.Shop().CreateJob(ctx, "CLM-LATER", "")
	if err != nil {
		t.Fatal(err)
	}
	up, err := db.Reserve(ctx, nr)
	if err != nil {
		t.Fatalf("Reserve after the shop created the job: %v", err)
	}
	if up.Phase != shopdb.PhaseReserved || up.JobNumber != job || up.Version != 2 || !up.CreatedAt.Equal(r.CreatedAt) {
		t.Fatalf("row = %+v, want reserved, job %s, version 2, created_at kept", up, job)
	}
	evs, err := db.Events(ctx, "301", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].From != shopdb.PhaseWaiting || evs[0].To != shopdb.PhaseReserved {
		t.Errorf("latest event = %+v, want waiting → reserved", evs)
	}
}

func TestReserveJobInUse(t *testing.T) {
	db, d := shopdbtest.New(t)
	ctx := testContext(t)
	mustReserve(t, db, newRequest("401", sampleshop.ClaimDraft))

	_, err := db.Reserve(ctx, newRequest("402", sampleshop.ClaimDraft))
	if !errors.Is(err, shopdb.ErrJobInUse) {
		t.Fatalf("Reserve error = %v, want ErrJobInUse", err)
	}
	for _, want := range []string{sampleshop.JobDraft, "401"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if _, err := db.Request(ctx, "402"); !errors.Is(err, shopdb.ErrNotFound) {
		t.Errorf("Request(402) error = %v, want ErrNotFound (nothing written)", err)
	}
	if got := count(t, d, "SELECT COUNT(*) FROM quotesync_events WHERE request_id = '402'"); got != 0 {
		t.Errorf("events of 402 = %d, want 0", got)
	}
}

func TestReserveRejectsBadInput(t *testing.T) {
	db, _ := shopdbtest.New(t)
	ctx := testContext(t)
	for _, nr := range []shopdb.NewRequest{
		{RequestID: ""},
		{RequestID: strings.Repeat("9", 65)},
		{RequestID: "1", RequestJSON: []byte("{not json")},
	} {
		if _, err := db.Reserve(ctx, nr); err == nil {
			t.Errorf("Reserve(%+v) succeeded, want an error", nr)
		}
	}
}

func TestPlanReserveWritesNothing(t *testing.T) {
	db, d := shopdbtest.New(t)
	ctx := testContext(t)
	before, jobs := counter(t, d), count(t, d, "SELECT COUNT(*) FROM jobs")

	job, create, err := db.PlanReserve(ctx, newRequest("501", sampleshop.ClaimFinal))
	if err != nil || job != sampleshop.JobFinal || create {
		t.Errorf("PlanReserve(existing claim) = %q, %v, %v; want %s, false, nil", job, create, err, sampleshop.JobFinal)
	}
	job, create, err = db.PlanReserve(ctx, newRequest("502", "CLM-UNKNOWN"))
	if err != nil || job != "" || !create {
		t.Errorf("PlanReserve(new claim) = %q, %v, %v; want \"\", true, nil", job, create, err)
	}
	if got := counter(t, d); got != before {
		t.Errorf("counter = %d, want %d", got, before)
	}
	if got := count(t, d, "SELECT COUNT(*) FROM jobs"); got != jobs {
		t.Errorf("jobs = %d, want %d", got, jobs)
	}
	if got := count(t, d, "SELECT COUNT(*) FROM quotesync_requests"); got != 0 {
		t.Errorf("state rows = %d, want 0", got)
	}

	cfg := d.Config()
	cfg.Queries.CreateJob = nil
	noCreate := d.Open(t, cfg)
	if _, _, err := noCreate.PlanReserve(ctx, newRequest("503", "CLM-UNKNOWN")); !errors.Is(err, shopdb.ErrNoJob) {
		t.Errorf("PlanReserve without create_job error = %v, want ErrNoJob", err)
	}
	// A reserved request plans to its own job.
	r := mustReserve(t, db, newRequest("504", "CLM-X"))
	if job, _, err := db.PlanReserve(ctx, newRequest("504", "CLM-X")); err != nil || job != r.JobNumber {
		t.Errorf("PlanReserve(reserved) = %q, %v; want %s", job, err, r.JobNumber)
	}
}

func TestFindJobMoreThanOneRowIsAnError(t *testing.T) {
	db, d := shopdbtest.New(t)
	ctx := testContext(t)
	if _, err := d.Shop().CreateJob(ctx, sampleshop.ClaimDraft, ""); err != nil {
		t.Fatal(err)
	}
	_, err := db.Reserve(ctx, newRequest("601", sampleshop.ClaimDraft))
	if err == nil || !strings.Contains(err.Error(), "at most one") || !strings.Contains(err.Error(), "find_job") {
		t.Fatalf("Reserve error = %v, want find_job returned 2 rows", err)
	}
	if _, err := db.Request(ctx, "601"); !errors.Is(err, shopdb.ErrNotFound) {
		t.Errorf("Request(601) error = %v, want ErrNotFound", err)
	}
}
