package sync_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// TestPreviewIsWhatThePassPushes: the quote PreviewJob builds hashes to
// what a pass pushed for the job, and says the remote holds it; after a
// change of the shop's lines it no longer does, and the next pass pushes
// what preview then shows.
func TestPreviewIsWhatThePassPushes(t *testing.T) {
	r := newRig(t, rigOptions{})
	id := r.seed(sampleshop.ClaimDraft)[0]
	r.pass()
	row := r.row(id)
	if row.PushedHash == "" {
		t.Fatalf("the pass pushed no Draft: %+v", row)
	}
	pv, err := qsync.PreviewJob(r.ctx, r.db, r.st, r.set.Sync, sampleshop.JobDraft)
	if err != nil {
		t.Fatal(err)
	}
	if pv.Hash != row.PushedHash || !pv.Pushed || pv.Request != id || !pv.Pushable() {
		t.Errorf("preview hash %s pushed %v request %q; the pass pushed %s for %s", pv.Hash, pv.Pushed, pv.Request, row.PushedHash, id)
	}
	if got, want := len(pv.Quote.Items), 4; got != want || len(pv.Lines) != want {
		t.Errorf("preview has %d items (%d lines), want %d", got, len(pv.Lines), want)
	}
	if _, err := r.shop.AddLine(r.ctx, sampleshop.JobDraft, sampleshop.Line{Code: "MECH", Description: "Wheel alignment",
		Qty: d("1"), UnitPrice: price("120")}); err != nil {
		t.Fatal(err)
	}
	pv, err = qsync.PreviewJob(r.ctx, r.db, r.st, r.set.Sync, sampleshop.JobDraft)
	if err != nil {
		t.Fatal(err)
	}
	if pv.Pushed || len(pv.Quote.Items) != 5 {
		t.Errorf("after a new line: pushed %v, %d items; want false, 5", pv.Pushed, len(pv.Quote.Items))
	}
	r.clock.advance(time.Minute)
	r.pass()
	if got := r.row(id).PushedHash; got != pv.Hash {
		t.Errorf("the pass pushed %s, preview showed %s", got, pv.Hash)
	}
}

// TestPreviewHeldJob: a line that breaks the rules is shown, with its
// reason, as holding the job; the valid lines are the items.
func TestPreviewHeldJob(t *testing.T) {
	_, d := shopdbtest.New(t)
	db := d.Open(t, d.Config())
	pv, err := qsync.PreviewJob(context.Background(), db, store.New(db), qsync.Config{}, sampleshop.JobBadLine)
	if err != nil {
		t.Fatal(err)
	}
	if pv.Pushable() || len(pv.Held) != 1 || pv.Held[0].Column != "price" || len(pv.Quote.Items) != 1 {
		t.Errorf("preview of %s: pushable %v, held %v, %d items; want the NULL price holding it and 1 item", sampleshop.JobBadLine, pv.Pushable(), pv.Held, len(pv.Quote.Items))
	}
	if _, err := qsync.PreviewJob(context.Background(), db, store.New(db), qsync.Config{}, "RO-99999"); !errors.Is(err, qsync.ErrNoSuchJob) {
		t.Errorf("preview of an unknown job: %v, want ErrNoSuchJob", err)
	}
}

// BenchmarkPreview10k measures PreviewJob of one job of the sample shop
// with 10,000 jobs of 30 lines: wall time and database round trips.
//
//	go test -run '^$' -bench Preview10k -benchtime 20x ./sync/
func BenchmarkPreview10k(b *testing.B) {
	db, d := shopdbtest.New(b)
	st := store.New(db)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	jobs, err := d.Shop().GenerateJobs(ctx, 10000, 30)
	if err != nil {
		b.Fatal(err)
	}
	var trips int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		job := jobs[(i*7919)%len(jobs)]
		before := shopdbtest.RoundTrips(db)
		pv, err := qsync.PreviewJob(ctx, db, st, qsync.Config{}, job)
		if err != nil {
			b.Fatal(err)
		}
		trips += shopdbtest.RoundTrips(db) - before
		if len(pv.Quote.Items) != 30 {
			b.Fatalf("job %s: %d items, want 30", job, len(pv.Quote.Items))
		}
	}
	b.ReportMetric(float64(trips)/float64(b.N), "roundtrips/op")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
}

// TestPreviewWithoutEstimateState: a job estimate_state returns no row
// for is shown with its items, but a pass pushes nothing for it, and
// preview says so.
func TestPreviewWithoutEstimateState(t *testing.T) {
	_, d := shopdbtest.New(t)
	cfg := d.Config()
	cfg.Queries.EstimateState = `SELECT j.job_no AS job, 0 AS final FROM jobs j
WHERE j.job_no IN (:jobs) AND j.job_no <> 'RO-50001' GROUP BY j.job_no`
	db := d.Open(t, cfg)
	pv, err := qsync.PreviewJob(context.Background(), db, store.New(db), qsync.Config{}, sampleshop.JobDraft)
	if err != nil {
		t.Fatal(err)
	}
	if !pv.NoState || pv.Pushable() || len(pv.Quote.Items) != 4 {
		t.Errorf("no state %v, pushable %v, %d items; want true, false, 4", pv.NoState, pv.Pushable(), len(pv.Quote.Items))
	}
}
