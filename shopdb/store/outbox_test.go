package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
)

// writeBackStatus is a write-back statement on the sample shop's jobs.
const writeBackStatus = `UPDATE jobs SET insurer_status = :status, insurer_note = :reason, insurer_updated_at = :time
WHERE job_no = :job`

// outboxDB opens the sample shop with write-back statements for accepted
// (a working one) and rejected (one that fails at run time: its subquery
// returns two rows).
func outboxDB(t *testing.T) (testDB, *shopdbtest.Database) {
	t.Helper()
	d := shopdbtest.NewSampleShop(t)
	cfg := d.Config()
	cfg.WriteBack = map[string]string{
		shopdb.WriteBackAccepted: writeBackStatus,
		shopdb.WriteBackRejected: `UPDATE jobs SET insurer_status = (SELECT 'A' UNION SELECT 'B') WHERE job_no = :job`,
	}
	return openStore(t, d, cfg), d
}

// acceptWithOutbox reserves a request and moves it to accepted with an
// event that queues deliveries to targets.
func acceptWithOutbox(t *testing.T, db testDB, id, kind string, targets ...string) store.Request {
	t.Helper()
	r := mustReserve(t, db, newRequest(id, "CLM-O-"+id))
	next := r
	next.Phase = phAccepted
	got, err := db.Update(testContext(t), r, next, store.Event{Kind: "accepted",
		Outbox: &store.Outbox{Kind: kind, Claim: r.ClaimNumber, Targets: targets}})
	if err != nil {
		t.Fatalf("accept %s: %v", id, err)
	}
	return got
}

func insurerStatus(t *testing.T, d *shopdbtest.Database, job string) string {
	t.Helper()
	st, _, err := d.Shop().InsurerStatus(testContext(t), job)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func pending(t *testing.T, db testDB) []store.Delivery {
	t.Helper()
	ds, err := db.PendingDeliveries(testContext(t), 100)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// TestOutboxQueuedWithTheEvent: the deliveries are written in the event's
// transaction, one row per target, with what the event says.
func TestOutboxQueuedWithTheEvent(t *testing.T) {
	db, d := outboxDB(t)
	r := acceptWithOutbox(t, db, "o1", shopdb.WriteBackAccepted, store.TargetWriteBack, store.TargetWebhook)
	ds := pending(t, db)
	if got, want := len(ds), 2; got != want {
		t.Fatalf("pending deliveries = %d, want %d: %+v", got, want, ds)
	}
	evID := int64(count(t, d, "SELECT MAX(id) FROM quotesync_events WHERE kind = 'accepted'"))
	for i, target := range []string{store.TargetWriteBack, store.TargetWebhook} {
		got := ds[i]
		if got.Target != target || got.Kind != shopdb.WriteBackAccepted || got.RequestID != "o1" ||
			got.Job != r.JobNumber || got.Claim != "CLM-O-o1" || got.Phase != phAccepted || got.EventID != evID {
			t.Errorf("delivery %d = %+v, want target %s of event %d for o1/%s", i, got, target, evID, r.JobNumber)
		}
	}
	// One notice id for the event, the same in the rows of its targets: a
	// UUIDv7; another event's differs.
	if u, err := uuid.Parse(ds[0].NoticeID); err != nil || u.Version() != 7 || ds[1].NoticeID != ds[0].NoticeID {
		t.Errorf("notice ids %q, %q: want one UUIDv7 for both rows of the event (%v)", ds[0].NoticeID, ds[1].NoticeID, err)
	}
	acceptWithOutbox(t, db, "o2", shopdb.WriteBackAccepted, store.TargetWebhook)
	if ds := pending(t, db); len(ds) != 3 || ds[2].NoticeID == ds[0].NoticeID || ds[2].NoticeID == "" {
		t.Errorf("the second event's notice id %q, the first's %q: want a new one", ds[2].NoticeID, ds[0].NoticeID)
	}
	// A change whose event queues nothing adds nothing.
	advance(t, db, r, phDrafted, nil)
	if got := len(pending(t, db)); got != 3 {
		t.Errorf("pending deliveries = %d after an event without outbox, want 3", got)
	}
}

// TestWriteBackRunsOnceWithItsMark: the statement and the mark commit
// together; a second attempt finds the mark and runs nothing.
func TestWriteBackRunsOnceWithItsMark(t *testing.T) {
	db, d := outboxDB(t)
	ctx := testContext(t)
	r := acceptWithOutbox(t, db, "o2", shopdb.WriteBackAccepted, store.TargetWriteBack)
	dl := pending(t, db)[0]
	p := shopdb.WriteBackParams{Job: dl.Job, Request: dl.RequestID, Claim: dl.Claim, Status: dl.Kind, Reason: "", Time: dl.At}
	if err := db.WriteBack(ctx, dl, p); err != nil {
		t.Fatalf("WriteBack: %v", err)
	}
	if got, want := insurerStatus(t, d, r.JobNumber), "accepted"; got != want {
		t.Fatalf("insurer_status = %q, want %q", got, want)
	}
	if got := len(pending(t, db)); got != 0 {
		t.Fatalf("pending deliveries = %d after the write-back, want 0", got)
	}
	// The front desk changes the column; a repeated delivery (an attempt
	// whose outcome was lost) must not overwrite it.
	if _, err := d.SQL.Exec("UPDATE jobs SET insurer_status = 'BY HAND' WHERE job_no = ?", r.JobNumber); err != nil {
		t.Fatal(err)
	}
	if err := db.WriteBack(ctx, dl, p); !errors.Is(err, store.ErrDelivered) {
		t.Fatalf("second WriteBack = %v, want ErrDelivered", err)
	}
	if got, want := insurerStatus(t, d, r.JobNumber), "BY HAND"; got != want {
		t.Errorf("insurer_status = %q after the second attempt, want %q (ran twice)", got, want)
	}
}

// TestWriteBackFailureIsRecorded: a failing statement leaves no mark and
// nothing written; the failure, its count and the next attempt are kept
// and DeliveryStats reports them.
func TestWriteBackFailureIsRecorded(t *testing.T) {
	db, d := outboxDB(t)
	ctx := testContext(t)
	acceptWithOutbox(t, db, "o3", shopdb.WriteBackRejected, store.TargetWriteBack)
	dl := pending(t, db)[0]
	err := db.WriteBack(ctx, dl, shopdb.WriteBackParams{Job: dl.Job, Status: dl.Kind})
	if err == nil || !strings.Contains(err.Error(), "shop.write_back.rejected") {
		t.Fatalf("WriteBack = %v, want the statement's error naming shop.write_back.rejected", err)
	}
	next := time.Now().Add(time.Hour)
	if err := db.DeliveryFailed(ctx, dl.ID, err.Error(), next); err != nil {
		t.Fatal(err)
	}
	ds := pending(t, db)
	if len(ds) != 1 || ds[0].Attempts != 1 || !strings.Contains(ds[0].LastError, "shop.write_back.rejected") ||
		ds[0].NextAttemptAt.Before(next.Add(-time.Second)) {
		t.Fatalf("pending = %+v, want one with 1 attempt, the error and the next attempt", ds)
	}
	st, err := db.DeliveryStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pending != 1 || st.Failing != 1 || st.Last.RequestID != "o3" || st.Last.Target != store.TargetWriteBack ||
		!strings.Contains(st.Last.LastError, "more than 1 row") {
		t.Errorf("DeliveryStats = %+v, want 1 pending, 1 failing, the last error of o3", st)
	}
	if n := count(t, d, "SELECT COUNT(*) FROM jobs WHERE insurer_status IS NOT NULL"); n != 0 {
		t.Errorf("%d jobs have an insurer_status after a failed write-back, want 0", n)
	}
}

// TestWriteBackSessionKilledBeforeCommit: the database session dies
// between the statement and the commit: neither the statement's effect
// nor the mark stays, and the next attempt runs it, once.
func TestWriteBackSessionKilledBeforeCommit(t *testing.T) {
	db, d := outboxDB(t)
	ctx := testContext(t)
	r := acceptWithOutbox(t, db, "o4", shopdb.WriteBackAccepted, store.TargetWriteBack)
	dl := pending(t, db)[0]
	p := shopdb.WriteBackParams{Job: dl.Job, Request: dl.RequestID, Status: dl.Kind, Time: dl.At}
	store.SetBeforeCommit(db.Store, func(ctx context.Context, tx *sqlx.Tx) error {
		var id int64
		if err := tx.GetContext(ctx, &id, "SELECT CONNECTION_ID()"); err != nil {
			return err
		}
		kill(t, d, id)
		return nil
	})
	if err := db.WriteBack(ctx, dl, p); err == nil {
		t.Fatal("WriteBack succeeded although its session was killed before COMMIT")
	}
	store.SetBeforeCommit(db.Store, nil)
	if got := insurerStatus(t, d, r.JobNumber); got != "" {
		t.Fatalf("insurer_status = %q after the killed attempt, want nothing", got)
	}
	if got := len(pending(t, db)); got != 1 {
		t.Fatalf("pending deliveries = %d after the killed attempt, want 1", got)
	}
	if err := db.WriteBack(ctx, dl, p); err != nil {
		t.Fatalf("WriteBack after the kill: %v", err)
	}
	if got, want := insurerStatus(t, d, r.JobNumber), "accepted"; got != want {
		t.Errorf("insurer_status = %q, want %q", got, want)
	}
}

// TestRecordOnce: a once key records its event and deliveries once, until
// it is released; a released key records again (a new episode).
func TestRecordOnce(t *testing.T) {
	db, d := outboxDB(t)
	ctx := testContext(t)
	ev := func() store.Event {
		return store.Event{Kind: "auth_failing", Message: "token refused",
			Outbox: &store.Outbox{Kind: "auth_failing", OnceKey: "auth_failing", Targets: []string{store.TargetWebhook, store.TargetCommand}}}
	}
	for i, want := range []bool{true, false, false} {
		got, err := db.RecordOnce(ctx, ev())
		if err != nil || got != want {
			t.Fatalf("RecordOnce #%d = %v, %v; want %v", i+1, got, err, want)
		}
	}
	if n := count(t, d, "SELECT COUNT(*) FROM quotesync_events WHERE kind = 'auth_failing'"); n != 1 {
		t.Fatalf("%d auth_failing events, want 1 (a refused once key must write nothing)", n)
	}
	// Another key is independent.
	other := ev()
	other.Outbox.OnceKey = "expiring:r1"
	if got, err := db.RecordOnce(ctx, other); err != nil || !got {
		t.Fatalf("RecordOnce of another key = %v, %v; want true", got, err)
	}
	if err := db.ReleaseOnce(ctx, "auth_failing"); err != nil {
		t.Fatal(err)
	}
	if got, err := db.RecordOnce(ctx, ev()); err != nil || !got {
		t.Fatalf("RecordOnce after ReleaseOnce = %v, %v; want true", got, err)
	}
	if got, err := db.RecordOnce(ctx, other); err != nil || got {
		t.Fatalf("RecordOnce of expiring:r1 after releasing auth_failing = %v, %v; want false", got, err)
	}
	if got := len(pending(t, db)); got != 6 {
		t.Errorf("pending deliveries = %d, want 6 (3 events × 2 targets)", got)
	}
}

// TestCheckWriteBack: check prepares and EXPLAINs each statement: a
// misspelt column fails with the key and the column named; nothing is
// written either way.
func TestCheckWriteBack(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	cfg := d.Config()
	cfg.WriteBack = map[string]string{
		shopdb.WriteBackSubmitted: writeBackStatus,
		shopdb.WriteBackGone:      `UPDATE jobs SET insurer_stauts = :status WHERE job_no = :job`,
	}
	db := openStore(t, d, cfg)
	cs := db.shop.CheckWriteBack(testContext(t))
	if len(cs) != 2 {
		t.Fatalf("CheckWriteBack = %+v, want 2 checks", cs)
	}
	if cs[0].Key != "shop.write_back.submitted" || cs[0].Err != nil || !strings.Contains(cs[0].Note, "EXPLAIN") {
		t.Errorf("check of submitted = %+v, want ok, prepared and EXPLAINed", cs[0])
	}
	if cs[1].Key != "shop.write_back.gone" || cs[1].Err == nil || !strings.Contains(cs[1].Err.Error(), "insurer_stauts") {
		t.Errorf("check of gone = %+v, want an error naming insurer_stauts", cs[1])
	}
	if n := count(t, d, "SELECT COUNT(*) FROM jobs WHERE insurer_status IS NOT NULL OR insurer_updated_at IS NOT NULL"); n != 0 {
		t.Errorf("check wrote %d jobs, want none", n)
	}
}

// TestWriteBackConfigErrors: unknown kinds and parameters are refused with
// the key named.
func TestWriteBackConfigErrors(t *testing.T) {
	d := shopdbtest.NewDatabase(t)
	for stmt, want := range map[string]string{
		"accepted_by_us": "shop.write_back.accepted_by_us: not an event kind",
		"accepted":       "unknown parameter :claim_number",
	} {
		cfg := d.Config()
		cfg.WriteBack = map[string]string{stmt: "UPDATE jobs SET insurer_note = :claim_number WHERE job_no = :job"}
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate with write_back.%s = %v, want %q", stmt, err, want)
		}
	}
}

// TestWriteBackCancelledBeforeCommit: the daemon stops (its context is
// cancelled) between the statement and the commit: nothing stays, and
// the next attempt runs it.
func TestWriteBackCancelledBeforeCommit(t *testing.T) {
	db, d := outboxDB(t)
	r := acceptWithOutbox(t, db, "o5", shopdb.WriteBackAccepted, store.TargetWriteBack)
	dl := pending(t, db)[0]
	p := shopdb.WriteBackParams{Job: dl.Job, Request: dl.RequestID, Status: dl.Kind, Time: dl.At}
	ctx, cancel := context.WithCancel(testContext(t))
	store.SetBeforeCommit(db.Store, func(context.Context, *sqlx.Tx) error {
		cancel()
		return nil
	})
	if err := db.WriteBack(ctx, dl, p); err == nil {
		t.Fatal("WriteBack succeeded although it was cancelled before COMMIT")
	}
	store.SetBeforeCommit(db.Store, nil)
	if got := insurerStatus(t, d, r.JobNumber); got != "" {
		t.Fatalf("insurer_status = %q after the cancelled attempt, want nothing", got)
	}
	if err := db.WriteBack(testContext(t), dl, p); err != nil {
		t.Fatalf("WriteBack after the cancel: %v", err)
	}
	if got, want := insurerStatus(t, d, r.JobNumber), "accepted"; got != want {
		t.Errorf("insurer_status = %q, want %q", got, want)
	}
}

// TestKeptTextsRedacted: the secrets of Config.Redact are removed from
// every text the state tables keep: a request's last error (also in the
// row returned as stored), an event's message (and the outbox's detail
// copied from it), a delivery's failure.
func TestKeptTextsRedacted(t *testing.T) {
	const secret = "hook-secret-77f0"
	d := shopdbtest.NewSampleShop(t)
	cfg := d.Config()
	cfg.Redact = replacer{strings.NewReplacer(secret, redactMark)}
	db := openStore(t, d, cfg)
	ctx := testContext(t)
	r := mustReserve(t, db, newRequest("k1", "CLM-K1"))
	next := r
	next.Phase, next.LastError = phAccepted, "answered 401: echo "+secret
	got, err := db.Update(ctx, r, next, store.Event{Kind: "accepted", Message: "refused: " + secret,
		Outbox: &store.Outbox{Kind: shopdb.WriteBackAccepted, Targets: []string{store.TargetWebhook}}})
	if err != nil {
		t.Fatal(err)
	}
	checkStored(t, db, got)
	ds := pending(t, db)
	if err := db.DeliveryFailed(ctx, ds[0].ID, "POST: answered 401: "+secret, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"SELECT COUNT(*) FROM quotesync_requests WHERE last_error LIKE '%hook-secret%'",
		"SELECT COUNT(*) FROM quotesync_events WHERE message LIKE '%hook-secret%'",
		"SELECT COUNT(*) FROM quotesync_outbox WHERE detail LIKE '%hook-secret%' OR last_error LIKE '%hook-secret%'",
	} {
		if n := count(t, d, q); n != 0 {
			t.Errorf("%s: %d", q, n)
		}
	}
	if got.LastError != "answered 401: echo "+redactMark || ds[0].Detail != "refused: "+redactMark {
		t.Errorf("last error %q, detail %q: want the secret replaced by %s", got.LastError, ds[0].Detail, redactMark)
	}
}

// redactMark stands for a removed secret in these tests (the command's
// redact package, which shopdb does not import, writes its own).
const redactMark = "[REDACTED]"

// replacer is a Redacter from a strings.Replacer.
type replacer struct{ r *strings.Replacer }

func (r replacer) Redact(s string) string { return r.r.Replace(s) }
