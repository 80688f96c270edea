package sync

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
)

// slowFingerprintPair is a sample shop whose shop_changed takes 300 ms, so
// that reads asked for a moment apart overlap, and the views of insurers
// aa and bb on it, sharing one fingerprints.
func slowFingerprintPair(t *testing.T) (db *shopdb.DB, aa, bb sharedShop, fps *fingerprints) {
	t.Helper()
	d := shopdbtest.NewSampleShop(t)
	cfg := d.Config()
	cfg.Queries.ShopChanged += ",\n       SLEEP(0.3) AS slow"
	db, fps = d.Open(t, cfg), &fingerprints{}
	return db, sharedShop{db.Insurer("aa"), fps}, sharedShop{db.Insurer("bb"), fps}, fps
}

// stateOf is the state part of the fingerprint of db's quotesync tables.
func stateOf(db *shopdb.DB) string { return store.New(db).StateFingerprint() }

// fpRead is the outcome of one fingerprint read.
type fpRead struct {
	fp  shopdb.Fingerprint
	err error
}

// readAsync reads s's fingerprint in a goroutine.
func readAsync(ctx context.Context, s sharedShop) <-chan fpRead {
	ch := make(chan fpRead, 1)
	go func() {
		fp, err := s.Fingerprint(ctx, stateOf(s.DB))
		ch <- fpRead{fp, err}
	}()
	return ch
}

// TestFingerprintsShared: the engines' views of one database read the
// fingerprint through one fingerprints; reads asked for while one is in
// flight join it (one statement), a read asked for after it ended runs
// anew, and one insurer's state change shows in every insurer's
// fingerprint (which is what makes one read serve them all).
func TestFingerprintsShared(t *testing.T) {
	db, aa, bb, fps := slowFingerprintPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	both := func() (shopdb.Fingerprint, shopdb.Fingerprint, int64) {
		t.Helper()
		t0 := shopdbtest.RoundTrips(db)
		ch := readAsync(ctx, aa)
		time.Sleep(50 * time.Millisecond) // bb asks once aa's read is under way
		fpb, err := bb.Fingerprint(ctx, stateOf(db))
		ra := <-ch
		if err != nil || ra.err != nil {
			t.Fatalf("fingerprints: aa %v, bb %v", ra.err, err)
		}
		return ra.fp, fpb, shopdbtest.RoundTrips(db) - t0
	}
	fpa, fpb, trips := both()
	if n := fps.statements.Load(); trips != 1 || n != 1 {
		t.Errorf("two overlapping reads sent %d statements (%d round trips), want 1", n, trips)
	}
	if fpa != fpb || fpa.Shop == "" {
		t.Errorf("the insurers got %+v and %+v, want one and the same fingerprint", fpa, fpb)
	}

	// A read asked for after the last one ended is a read of its own: the
	// fingerprint of that moment, not a kept one.
	if _, err := store.New(db).Insurer("bb").Insert(ctx, store.Request{RequestID: "7301", ClaimNumber: "CLM-BB-1", Phase: "pending"}, store.Event{}); err != nil {
		t.Fatal(err)
	}
	t0 := shopdbtest.RoundTrips(db)
	fpa2, err := aa.Fingerprint(ctx, stateOf(db))
	if err != nil {
		t.Fatal(err)
	}
	if n := shopdbtest.RoundTrips(db) - t0; n != 1 {
		t.Errorf("a read after the shared one ended sent %d statements, want 1", n)
	}
	// Only bb's state changed, and aa's fingerprint says so: a read
	// scoped to one insurer's rows could not be shared.
	if fpa2.State == fpa.State {
		t.Errorf("aa's state fingerprint %q did not change when bb's rows did: one read cannot serve both", fpa2.State)
	}
	if own, err := db.Insurer("aa").Fingerprint(ctx, stateOf(db)); err != nil || own != fpa2 {
		t.Errorf("aa's own read gives %+v (%v), the shared one %+v", own, err, fpa2)
	}
}

// TestFingerprintsCallerCancelled: the engine that started the shared read
// stops waiting when its pass is cancelled, and the engine that joined
// still gets the fingerprint.
func TestFingerprintsCallerCancelled(t *testing.T) {
	_, aa, bb, _ := slowFingerprintPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	first, stop := context.WithCancel(ctx)
	start := time.Now()
	started := readAsync(first, aa)
	time.Sleep(50 * time.Millisecond)
	joined := readAsync(ctx, bb)
	time.Sleep(50 * time.Millisecond)
	stop()
	if err := (<-started).err; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled caller got %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 250*time.Millisecond {
		t.Errorf("the cancelled caller waited %s for a read it no longer wants", d)
	}
	if r := <-joined; r.err != nil || r.fp.Shop == "" {
		t.Errorf("the caller that joined got %+v, %v; want the fingerprint", r.fp, r.err)
	}
}

// TestFingerprintsPanic: a panic in the shared read is an error of the
// read, which fails the passes that asked for it; it must not reach
// singleflight, which re-panics it where nothing can recover it and the
// daemon would stop for every insurer. (A nil database panics in
// Fingerprint.)
func TestFingerprintsPanic(t *testing.T) {
	var fps fingerprints
	_, err := fps.read(context.Background(), nil, "SELECT ''")
	if err == nil || !strings.Contains(err.Error(), "read fingerprint: panic") {
		t.Fatalf("a read that panics: %v, want an error naming the panic", err)
	}
}
