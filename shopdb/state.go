package shopdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
)

// requestColumns is the column list every read of the requests table uses,
// in the order scanRequest expects.
const requestColumns = "request_id, claim_number, job_number, phase, resume_phase, pushed_hash, " +
	"pushed_marker, supplement_needed, attempts, next_attempt_at, last_error, expiry, booking_date, " +
	"request_json, created_at, updated_at, pushed_at, submitted_at, version"

// openPhases is the SQL list of the phases that are not terminal.
const openPhases = "('waiting', 'reserved', 'accepted', 'drafted')"

type rowScanner interface {
	Scan(dest ...any) error
}

func scanRequest(s rowScanner) (Request, error) {
	var (
		r                                      Request
		job, lastErr                           sql.NullString
		reqJSON                                []byte
		next, expiry, booking, pushed, submitd sql.NullTime
	)
	err := s.Scan(&r.RequestID, &r.ClaimNumber, &job, &r.Phase, &r.ResumePhase, &r.PushedHash,
		&r.PushedMarker, &r.SupplementNeeded, &r.Attempts, &next, &lastErr, &expiry, &booking,
		&reqJSON, &r.CreatedAt, &r.UpdatedAt, &pushed, &submitd, &r.Version)
	if err != nil {
		return Request{}, err
	}
	r.JobNumber, r.LastError = job.String, lastErr.String
	r.NextAttemptAt, r.Expiry, r.BookingDate = nullTime(next), nullTime(expiry), nullTime(booking)
	r.PushedAt, r.SubmittedAt = nullTime(pushed), nullTime(submitd)
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	if len(reqJSON) > 0 {
		r.RequestJSON = json.RawMessage(reqJSON)
	}
	return r, nil
}

func nullTime(t sql.NullTime) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}

func (db *DB) queryRequests(ctx context.Context, x queryer, query string, args ...any) ([]Request, error) {
	rows, err := x.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Request
	for rows.Next() {
		r, err := scanRequest(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// OpenRequests returns, in one statement, every request that is not in a
// terminal phase, plus the submitted ones with SubmittedAt at or after
// submittedSince (zero: all) whose supplement was not yet flagged, plus the
// ones rejected before acceptance (ResumePhase waiting or reserved) and
// last changed at or after submittedSince: such a request may still be
// pending on the remote, and the reconciler must know it is already
// tracked. Oldest first.
func (db *DB) OpenRequests(ctx context.Context, submittedSince time.Time) ([]Request, error) {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	if submittedSince.IsZero() {
		submittedSince = time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	q := "SELECT " + requestColumns + " FROM " + db.t.requests +
		" WHERE phase IN " + openPhases +
		" OR (phase = 'submitted' AND supplement_needed = 0 AND submitted_at >= ?)" +
		" OR (phase = 'rejected' AND resume_phase IN ('waiting', 'reserved') AND updated_at >= ?)" +
		" ORDER BY created_at, request_id"
	since := normTime(submittedSince)
	rs, err := db.queryRequests(ctx, db.x, q, since, since)
	if err != nil {
		return nil, fmt.Errorf("read open requests: %w", err)
	}
	return rs, nil
}

// ListRequests returns requests newest first, at most limit (<= 0: no
// limit). Without all, gone requests and submitted ones with no supplement
// due are left out: what is left is what is in progress or needs attention
// (rejected, or submitted with SupplementNeeded set: the shop changed the
// lines after the quote was submitted).
func (db *DB) ListRequests(ctx context.Context, all bool, limit int) ([]Request, error) {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	q := "SELECT " + requestColumns + " FROM " + db.t.requests
	if !all {
		q += " WHERE phase NOT IN ('submitted', 'gone') OR (phase = 'submitted' AND supplement_needed = 1)"
	}
	q += " ORDER BY created_at DESC, request_id DESC"
	if limit > 0 {
		q += " LIMIT " + strconv.Itoa(limit)
	}
	rs, err := db.queryRequests(ctx, db.x, q)
	if err != nil {
		return nil, fmt.Errorf("list requests: %w", err)
	}
	return rs, nil
}

// Request returns the row of one request; ErrNotFound when there is none.
func (db *DB) Request(ctx context.Context, requestID string) (Request, error) {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	r, err := db.readRequest(ctx, db.x, requestID, false)
	if err != nil {
		return Request{}, fmt.Errorf("read request %s: %w", requestID, err)
	}
	return r, nil
}

// readRequest reads one row, locking it when forUpdate; ErrNotFound.
func (db *DB) readRequest(ctx context.Context, x queryer, requestID string, forUpdate bool) (Request, error) {
	q := "SELECT " + requestColumns + " FROM " + db.t.requests + " WHERE request_id = ?"
	if forUpdate {
		q += " FOR UPDATE"
	}
	rs, err := db.queryRequests(ctx, x, q, requestID)
	if err != nil {
		return Request{}, err
	}
	if len(rs) == 0 {
		return Request{}, ErrNotFound
	}
	return rs[0], nil
}

// insertRequest writes a new row with version 1.
func (db *DB) insertRequest(ctx context.Context, x queryer, r Request) error {
	_, err := x.ExecContext(ctx, db.insertRequestSQL(), insertRequestArgs(r)...)
	return err
}

// insertRequestSQL is the INSERT of a new row with version 1; its
// arguments are insertRequestArgs.
func (db *DB) insertRequestSQL() string {
	return "INSERT INTO " + db.t.requests + " (" + requestColumns +
		") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)"
}

func insertRequestArgs(r Request) []any {
	return []any{r.RequestID, r.ClaimNumber, nullString(r.JobNumber), r.Phase, r.ResumePhase, r.PushedHash,
		r.PushedMarker, r.SupplementNeeded, r.Attempts, dbTime(r.NextAttemptAt), capText(r.LastError),
		dbTime(r.Expiry), dbTime(r.BookingDate), nullString(string(r.RequestJSON)),
		dbTime(r.CreatedAt), dbTime(r.UpdatedAt), dbTime(r.PushedAt), dbTime(r.SubmittedAt)}
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Update stores next in place of cur if the row is still at cur's phase and
// version (compare-and-set), with Version+1 and UpdatedAt now, and appends
// ev (when ev.Kind is set) in the same transaction. ErrStale when another
// writer got there first; ErrJobInUse when next's job number belongs to
// another request. The job number is written from next too: a different
// one moves the request to that job, "" clears it (NULL, so any number of
// requests can be without a job) and frees the old job for another
// request. RequestID and CreatedAt are not changed.
func (db *DB) Update(ctx context.Context, cur, next Request, ev Event) (Request, error) {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	next.RequestID, next.CreatedAt = cur.RequestID, cur.CreatedAt
	next.UpdatedAt = now()
	next.Version = cur.Version + 1
	next.LastError = capText(next.LastError)
	for _, t := range []*time.Time{&next.NextAttemptAt, &next.Expiry, &next.BookingDate, &next.PushedAt, &next.SubmittedAt} {
		*t = normTime(*t)
	}
	write := func(x queryer) error {
		res, err := x.ExecContext(ctx, "UPDATE "+db.t.requests+" SET claim_number = ?, job_number = ?, "+
			"phase = ?, resume_phase = ?, pushed_hash = ?, pushed_marker = ?, supplement_needed = ?, "+
			"attempts = ?, next_attempt_at = ?, last_error = ?, expiry = ?, booking_date = ?, "+
			"request_json = ?, updated_at = ?, pushed_at = ?, submitted_at = ?, version = version + 1 "+
			"WHERE request_id = ? AND phase = ? AND version = ?",
			next.ClaimNumber, nullString(next.JobNumber), next.Phase, next.ResumePhase, next.PushedHash,
			next.PushedMarker, next.SupplementNeeded, next.Attempts, dbTime(next.NextAttemptAt),
			next.LastError, dbTime(next.Expiry), dbTime(next.BookingDate),
			nullString(string(next.RequestJSON)), dbTime(next.UpdatedAt), dbTime(next.PushedAt),
			dbTime(next.SubmittedAt), cur.RequestID, cur.Phase, cur.Version)
		if err != nil {
			if mysqlErrno(err) == errDupEntry {
				return fmt.Errorf("job %s: %w", next.JobNumber, ErrJobInUse)
			}
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrStale
		}
		if ev.Kind == "" {
			return nil
		}
		ev = fillEvent(ev, cur, next)
		return db.insertEvent(ctx, x, ev)
	}
	var err error
	if ev.Kind == "" {
		err = write(db.x) // a single statement needs no transaction
	} else {
		err = db.inTx(ctx, func(tx *sqlx.Tx) error { return write(tx) })
	}
	if err != nil {
		return Request{}, fmt.Errorf("update request %s (%s, version %d): %w", cur.RequestID, cur.Phase, cur.Version, err)
	}
	return next, nil
}

// fillEvent completes an event written by Update from the rows it moves
// between.
func fillEvent(ev Event, cur, next Request) Event {
	if ev.RequestID == "" {
		ev.RequestID = cur.RequestID
	}
	if ev.Job == "" {
		ev.Job = next.JobNumber
	}
	if ev.From == "" && ev.To == "" && cur.Phase != next.Phase {
		ev.From, ev.To = cur.Phase, next.Phase
	}
	if ev.At.IsZero() {
		ev.At = next.UpdatedAt
	}
	return ev
}

// Retry puts a rejected request back into its ResumePhase (or, when that is
// unset, reserved if it has a job, else waiting) with no attempts and no
// error, and records an EventRetry carrying note. A request without a job
// number never resumes as reserved: it goes back to waiting, so that the
// next pass runs find_job (or create_job) again. ErrNotRejected when the
// request is not rejected.
func (db *DB) Retry(ctx context.Context, requestID, note string) (Request, error) {
	cur, err := db.Request(ctx, requestID)
	if err != nil {
		return Request{}, err
	}
	if cur.Phase != PhaseRejected {
		return Request{}, fmt.Errorf("retry request %s: it is %s: %w", requestID, cur.Phase, ErrNotRejected)
	}
	next := cur
	next.Phase = cur.ResumePhase
	if next.Phase == "" || next.Phase == PhaseRejected {
		next.Phase = PhaseReserved
	}
	if next.Phase == PhaseReserved && cur.JobNumber == "" {
		next.Phase = PhaseWaiting
	}
	next.ResumePhase, next.Attempts, next.NextAttemptAt, next.LastError = "", 0, time.Time{}, ""
	return db.Update(ctx, cur, next, Event{Kind: EventRetry, Message: note})
}
