package sync

import (
	"context"
	"fmt"
	"sync/atomic"

	"golang.org/x/sync/singleflight"

	"github.com/quotesync/quotesync/shopdb"
)

// The engines of one Daemon share the read of the fingerprint (see
// cache.go): with shop.queries.shop_changed configured, every pass starts
// by reading it, and the insurers' passes, on the same schedule, start at
// the same moment. One read serves them all: the statement binds no
// insurer (shop_changed takes no parameter) and its state part counts
// and dates the rows of every insurer (store.Store.StateFingerprint), so
// what one engine reads is what another's own read would have returned.
//
// An engine that asks while a read is in flight joins it instead of
// sending its own. The answer is then that of a moment a little before
// it asked, as if from a snapshot taken when the shared read started;
// that is safe for the same reasons a read of its own is:
//
//   - whatever the pass reads after the fingerprint (quotesync's rows, the
//     estimate states it keeps with it) is read after the shared read
//     ended, so it is never older than the fingerprint says;
//   - a pass uses the rows it kept only when the fingerprint equals the one
//     kept with them, and reads are never older than the last one an
//     engine got (a new read starts only once the one in flight ended);
//   - a change made while the shared read was in flight, which it may not
//     see, shows in the fingerprint of the next read, which starts after
//     this one ended: that engine's next pass reads anew, as it would had
//     the change landed just after a read of its own;
//   - the engine's own writes never depend on the fingerprint: they mark
//     its kept rows stale (Engine.dirty).

// fingerprintKey is the one key of fingerprints' group: every engine
// reads the same statement.
const fingerprintKey = "fingerprint"

// fingerprints coalesces the engines' concurrent fingerprint reads into
// one statement. The zero value is ready.
type fingerprints struct {
	g          singleflight.Group
	statements atomic.Int64 // reads sent to the server (for tests and benchmarks)
}

// read returns the fingerprint, joining a read in flight. The statement
// runs detached from the cancellation of the engine that started it
// (shopdb bounds it with shop.query_timeout): another engine that joined
// must not fail because the first one's pass was cancelled. Each caller
// still stops waiting when its own ctx ends.
func (f *fingerprints) read(ctx context.Context, db *shopdb.DB, state string) (shopdb.Fingerprint, error) {
	ch := f.g.DoChan(fingerprintKey, func() (v any, err error) {
		// DoChan re-panics a panic of fn on a goroutine of its own, where
		// nothing can recover it: the daemon would stop for every insurer.
		// As an error it fails the passes that read it, as before the read
		// was shared.
		defer func() {
			if r := recover(); r != nil {
				v, err = nil, fmt.Errorf("read fingerprint: panic: %v", r)
			}
		}()
		f.statements.Add(1)
		return db.Fingerprint(context.WithoutCancel(ctx), state)
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return shopdb.Fingerprint{}, r.Err
		}
		return r.Val.(shopdb.Fingerprint), nil
	case <-ctx.Done():
		return shopdb.Fingerprint{}, ctx.Err()
	}
}

// sharedShop is an insurer's view of the shop's database whose
// fingerprint reads go through the daemon's fingerprints; everything else
// is the view's own.
type sharedShop struct {
	*shopdb.DB
	fps *fingerprints
}

func (s sharedShop) Fingerprint(ctx context.Context, state string) (shopdb.Fingerprint, error) {
	return s.fps.read(ctx, s.DB, state)
}
