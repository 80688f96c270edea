package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// Delivery targets: where an outbox row goes.
const (
	TargetWriteBack = "write_back" // the mapping's shop.write_back statement
	TargetWebhook   = "webhook"    // a JSON POST
	TargetCommand   = "command"    // a command run with the event on stdin
)

// Outbox is what an event queues for delivery, in the transaction that
// records the event: once that commits, every target gets the event,
// whatever happens to the process afterwards.
type Outbox struct {
	// Kind is what is delivered ("accepted", "rejected", …): the key of
	// the write-back statement, the event of a notification.
	Kind    string
	Claim   string
	Targets []string
	// OnceKey, when set, makes the event's deliveries unique while the key
	// is held (see RecordOnce and ReleaseOnce).
	OnceKey string
}

// Delivery is one row of the outbox: one event for one target.
type Delivery struct {
	ID      int64
	EventID int64 `db:"event_id"`
	// NoticeID is the event's notification id: a UUIDv7 the rows of all
	// its targets share; "" for a row queued before quotesync had it.
	NoticeID     string `db:"notice_id"`
	Target, Kind string
	// Insurer is the event's insurer ("" for a row queued before
	// insurers had names and not adopted).
	Insurer       string
	RequestID     string `db:"request_id"`
	Job           string
	Claim         string
	Phase         Phase
	Reason        Reason
	Detail        string
	At            time.Time // when the event happened
	Attempts      int       // failed attempts so far
	NextAttemptAt time.Time `db:"next_attempt_at"`
	LastError     string    `db:"last_error"`
}

// ErrDelivered: the delivery was made already (by an earlier attempt
// whose outcome the caller did not see, or by another instance).
var ErrDelivered = errors.New("delivered already")

// errOnceHeld: RecordOnce found its key held.
var errOnceHeld = errors.New("once key held")

// dueAtOnce is the next attempt of a delivery not tried yet: before any
// retry's, so that new deliveries go first, in the order of their events.
var dueAtOnce = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)

// deliveryColumns are the columns of a Delivery (its fields' db names).
const deliveryColumns = "id, event_id, COALESCE(notice_id, '') AS notice_id, target, kind, insurer, request_id, " +
	"claim, job, phase, reason, COALESCE(detail, '') AS detail, `at`, attempts, next_attempt_at, " +
	"COALESCE(last_error, '') AS last_error"

// queueDeliveries writes the outbox rows of the event eventID, in the
// event's transaction x: one statement for every target, all with one new
// notice id.
func (st *Store) queueDeliveries(ctx context.Context, x queryer, eventID int64, ev Event) error {
	o := ev.Outbox
	noticeID, err := uuid.NewV7()
	if err != nil {
		return fmt.Errorf("queue the deliveries of the %s event of request %s: draw a notice id: %w", ev.Kind, ev.RequestID, err)
	}
	var vals []string
	var args []any
	at := normTime(ev.At)
	for _, t := range o.Targets {
		var once any
		if o.OnceKey != "" {
			once = o.OnceKey + ":" + t
		}
		vals = append(vals, "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
		args = append(args, eventID, noticeID.String(), t, o.Kind, ev.Insurer, ev.RequestID, o.Claim, ev.Job, ev.To, ev.Reason,
			st.keepText(ev.Message), at, dueAtOnce, once)
	}
	if len(vals) == 0 {
		return nil
	}
	_, err = x.ExecContext(ctx, "INSERT INTO "+st.t.outbox+
		" (event_id, notice_id, target, kind, insurer, request_id, claim, job, phase, reason, detail, `at`, next_attempt_at, once_key) VALUES "+
		strings.Join(vals, ", "), args...)
	switch {
	case err == nil:
		return nil
	case o.OnceKey != "" && mysqlErrno(err) == errDupEntry:
		return errOnceHeld
	}
	return fmt.Errorf("queue the deliveries of the %s event of request %s: %w", ev.Kind, ev.RequestID, err)
}

// RecordOnce records ev and queues its deliveries unless its
// Outbox.OnceKey is held already (by an earlier event that has not been
// released with ReleaseOnce): false then, and nothing is written.
func (st *Store) RecordOnce(ctx context.Context, ev Event) (bool, error) {
	if ev.Outbox == nil || ev.Outbox.OnceKey == "" || len(ev.Outbox.Targets) == 0 {
		return false, fmt.Errorf("record %s event once: no once key or no target", ev.Kind)
	}
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	err := st.inTx(ctx, func(tx *sqlx.Tx) error { return st.insertEvent(ctx, tx, ev) })
	switch {
	case errors.Is(err, errOnceHeld):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// ReleaseOnce releases the once key of RecordOnce: the next event with it
// is recorded again (a new episode). The rows keep their deliveries.
func (st *Store) ReleaseOnce(ctx context.Context, key string) error {
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	// Every key+":"+target: the range of the keys after key+":" and before
	// key+";" (";" follows ":"), which the unique index finds.
	_, err := st.x.ExecContext(ctx, "UPDATE "+st.t.outbox+" SET once_key = NULL WHERE once_key >= ? AND once_key < ?",
		key+":", key+";")
	return wrapf(err, "release notice key %s", key)
}

// PendingDeliveries returns up to limit deliveries not made yet, the
// soonest due first: those never tried (in the order of their events),
// then the failed ones by their next attempt (due or not: the caller
// waits for the first one that is not).
func (st *Store) PendingDeliveries(ctx context.Context, limit int) ([]Delivery, error) {
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	var out []Delivery
	err := st.x.SelectContext(ctx, &out, "SELECT "+deliveryColumns+" FROM "+st.t.outbox+
		" WHERE done_at IS NULL ORDER BY next_attempt_at, id LIMIT ?", limit)
	return out, wrapf(err, "read the outbox")
}

// Deliver makes delivery id once: in one transaction it locks the
// outbox row (ErrDelivered when it is done already), runs do and marks the
// row done. do gets the transaction: the mapping's write-back statement
// runs in it (shopdb.DB.WriteBack), so that it runs once or not at all; a
// notification's send ignores it. An error of do rolls the transaction
// back and is returned as it is; record it with DeliveryFailed. The row
// stays locked while do runs, so that two instances never deliver it at
// once: bound do's time with ctx.
//
// A notification that reached its receiver is sent again only when the
// process dies (or the database session ends) between the receiver's
// answer and the commit of the mark; the payload carries the notice id
// (Delivery.NoticeID) for a receiver to recognise it.
func (st *Store) Deliver(ctx context.Context, id int64, do func(ctx context.Context, tx *sqlx.Tx) error) error {
	tx, err := st.x.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var done sql.NullTime
	err = tx.QueryRowContext(ctx, "SELECT done_at FROM "+st.t.outbox+" WHERE id = ? FOR UPDATE", id).Scan(&done)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("delivery %d: %w", id, ErrNotFound)
	case err != nil:
		return fmt.Errorf("lock delivery %d: %w", id, err)
	case done.Valid:
		return ErrDelivered
	}
	if err := do(ctx, tx); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE "+st.t.outbox+" SET done_at = ? WHERE id = ?", now(), id); err != nil {
		return fmt.Errorf("mark delivery %d done: %w", id, err)
	}
	if st.beforeCommit != nil {
		if err := st.beforeCommit(ctx, tx); err != nil {
			return err
		}
	}
	return wrapf(tx.Commit(), "commit delivery %d", id)
}

// DeliveryFailed records a failed attempt of delivery id: its error and
// when to try again. A delivery made meanwhile is left as it is.
func (st *Store) DeliveryFailed(ctx context.Context, id int64, cause string, next time.Time) error {
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	_, err := st.x.ExecContext(ctx, "UPDATE "+st.t.outbox+" SET attempts = attempts + 1, last_error = ?, failed_at = ?,"+
		" next_attempt_at = ? WHERE id = ? AND done_at IS NULL", st.keepText(cause), now(), normTime(next), id)
	return wrapf(err, "record the failure of delivery %d", id)
}

// DeliveryStats is how the outbox stands.
type DeliveryStats struct {
	Pending int // deliveries not made yet
	Failing int // of them, those whose last attempt failed
	// Last is the failing delivery that failed last (zero when none
	// fails), with its error.
	Last     Delivery
	FailedAt time.Time
}

// DeliveryStats counts the deliveries not made yet and returns the last
// failure; zero when the state tables are older than the outbox.
func (st *Store) DeliveryStats(ctx context.Context) (DeliveryStats, error) {
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	var s DeliveryStats
	err := st.x.QueryRowContext(ctx, "SELECT COUNT(*), COALESCE(SUM(attempts > 0), 0) FROM "+st.t.outbox+
		" WHERE done_at IS NULL").Scan(&s.Pending, &s.Failing)
	if mysqlErrno(err) == errNoSuchTable {
		return DeliveryStats{}, nil
	}
	if err != nil || s.Failing == 0 {
		return s, wrapf(err, "count the outbox")
	}
	var lastErr sql.NullString
	err = st.x.QueryRowContext(ctx, "SELECT target, kind, insurer, request_id, job, attempts, last_error, failed_at FROM "+st.t.outbox+
		" WHERE done_at IS NULL AND attempts > 0 ORDER BY failed_at DESC, id DESC LIMIT 1").
		Scan(&s.Last.Target, &s.Last.Kind, &s.Last.Insurer, &s.Last.RequestID, &s.Last.Job, &s.Last.Attempts, &lastErr, &s.FailedAt)
	s.Last.LastError, s.FailedAt = lastErr.String, s.FailedAt.UTC()
	return s, wrapf(err, "read the last failed delivery")
}

// wrapf is err prefixed with what format and args say, or nil.
func wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}
