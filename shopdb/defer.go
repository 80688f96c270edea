package shopdb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// Defer records a request that could not be reserved now (create_job
// failed, ErrJobInUse, …) so that it shows in `status` with its reason and
// is tried again at next (zero: on the next pass), in one transaction:
//
//   - no row yet: a waiting row (no job number) is inserted with Attempts 1,
//     NextAttemptAt next and LastError reason, and an EventWarning carrying
//     reason is appended;
//   - a waiting row: its LastError becomes reason, Attempts goes up by one,
//     NextAttemptAt becomes next and Version by one; an EventWarning is
//     appended only when reason differs from the LastError stored, so a
//     failure that repeats every pass is logged once;
//   - a row in any other phase (another process reserved it meanwhile): it
//     is returned unchanged, with a nil error.
//
// reason is capped as LastError always is (4,000 bytes). The row is
// returned as stored. Racing Defers of one request (two daemons) leave one
// row and count every attempt. Reserve later clears Attempts,
// NextAttemptAt and LastError when it gives the request a job.
func (db *DB) Defer(ctx context.Context, nr NewRequest, reason string, next time.Time) (Request, error) {
	if err := checkNewRequest(nr); err != nil {
		return Request{}, fmt.Errorf("defer request %s: %w", nr.RequestID, err)
	}
	if strings.TrimSpace(reason) == "" {
		return Request{}, fmt.Errorf("defer request %s: reason is empty; say why the request could not be reserved", nr.RequestID)
	}
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	var r Request
	err := db.inTx(ctx, func(tx *sqlx.Tx) error {
		var err error
		r, err = db.deferTx(ctx, tx, nr, capText(reason), normTime(next))
		return err
	})
	if err != nil {
		return Request{}, fmt.Errorf("defer request %s: %w", nr.RequestID, err)
	}
	return r, nil
}

// deferTx does Defer's work inside tx; reason is capped, next normalised.
func (db *DB) deferTx(ctx context.Context, tx *sqlx.Tx, nr NewRequest, reason string, next time.Time) (Request, error) {
	cur, err := db.readRequest(ctx, tx, nr.RequestID, true)
	if errors.Is(err, ErrNotFound) {
		r, inserted, ierr := db.insertWaiting(ctx, tx, nr, reason, next)
		if ierr != nil || inserted {
			return r, ierr
		}
		// Another process inserted the row first: the upsert waited for its
		// commit and holds the row's lock now.
		cur, err = db.readRequest(ctx, tx, nr.RequestID, true)
	}
	if err != nil {
		return Request{}, fmt.Errorf("read state row: %w", err)
	}
	if cur.Phase != PhaseWaiting {
		return cur, nil
	}
	r := cur
	r.Attempts, r.NextAttemptAt, r.LastError = cur.Attempts+1, next, reason
	r.UpdatedAt, r.Version = now(), cur.Version+1
	res, err := tx.ExecContext(ctx, "UPDATE "+db.t.requests+" SET attempts = attempts + 1, next_attempt_at = ?, "+
		"last_error = ?, updated_at = ?, version = version + 1 WHERE request_id = ? AND phase = 'waiting' AND version = ?",
		dbTime(next), reason, r.UpdatedAt, cur.RequestID, cur.Version)
	if err != nil {
		return Request{}, fmt.Errorf("update waiting row: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return Request{}, fmt.Errorf("update waiting row: %w", err)
	} else if n != 1 {
		return Request{}, ErrStale // the row is locked: only a bug gets here
	}
	if reason == cur.LastError {
		return r, nil
	}
	ev := Event{RequestID: r.RequestID, Kind: EventWarning, Attempt: r.Attempts, Message: reason, At: r.UpdatedAt}
	return r, db.insertEvent(ctx, tx, ev)
}

// insertWaiting inserts nr's first waiting row and its event. inserted is
// false (and nothing written) when a row already exists: the INSERT is an
// upsert that changes nothing, so that of two racing inserts the second
// waits for the first and then holds its row lock, where a plain INSERT
// would fail with a duplicate key and hold only a shared lock (two such
// losers deadlock when each then asks for the row's exclusive lock).
func (db *DB) insertWaiting(ctx context.Context, tx *sqlx.Tx, nr NewRequest, reason string, next time.Time) (r Request, inserted bool, err error) {
	t := now()
	r = Request{RequestID: nr.RequestID, ClaimNumber: nr.ClaimNumber, Phase: PhaseWaiting, Attempts: 1,
		NextAttemptAt: next, LastError: reason, Expiry: normTime(nr.Expiry), CreatedAt: t, UpdatedAt: t, Version: 1}
	if len(nr.RequestJSON) > 0 {
		r.RequestJSON = nr.RequestJSON
	}
	res, err := tx.ExecContext(ctx, db.insertRequestSQL()+" ON DUPLICATE KEY UPDATE request_id = request_id",
		insertRequestArgs(r)...)
	if err != nil {
		return Request{}, false, fmt.Errorf("record waiting row: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return Request{}, false, fmt.Errorf("record waiting row: %w", err)
	}
	if n != 1 { // 0: the row exists and was left as it is
		return Request{}, false, nil
	}
	ev := Event{RequestID: r.RequestID, Kind: EventWarning, Attempt: 1, Message: reason, At: t}
	return r, true, db.insertEvent(ctx, tx, ev)
}
