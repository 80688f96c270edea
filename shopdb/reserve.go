package shopdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// Length limits of the state table's key columns.
const (
	maxRequestIDLen = 64
	maxClaimLen     = 128
	maxJobLen       = 64
)

func checkNewRequest(nr NewRequest) error {
	switch {
	case nr.RequestID == "":
		return errors.New("request id is empty")
	case len(nr.RequestID) > maxRequestIDLen:
		return fmt.Errorf("request id is longer than %d bytes", maxRequestIDLen)
	case len(nr.ClaimNumber) > maxClaimLen:
		return fmt.Errorf("claim number is longer than %d bytes", maxClaimLen)
	}
	return nil
}

// Reserve gives the request a job number and records it as reserved, in
// one transaction: find_job (when configured), else create_job (when
// configured), then booking_date, then the state row and its event. If the
// request already has a row past waiting, that row is returned unchanged. A
// waiting row (recorded by Reserve or Defer) that now gets a job is
// upgraded in place, keeping CreatedAt, with its attempts, backoff
// (NextAttemptAt) and LastError cleared.
//
// When the shop has no job and create_job is not configured, the request is
// recorded as waiting (once) and that row is returned with an error
// wrapping ErrNoJob. A job number already linked to another request gives
// ErrJobInUse and leaves nothing behind (jobs created by create_job are
// rolled back too). When another process reserved the same request at the
// same time, its row is returned.
func (db *DB) Reserve(ctx context.Context, nr NewRequest) (Request, error) {
	if err := checkNewRequest(nr); err != nil {
		return Request{}, fmt.Errorf("reserve request %s: %w", nr.RequestID, err)
	}
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	vals, err := requestParams(nr, db.cfg.Params)
	if err != nil {
		return Request{}, fmt.Errorf("reserve request %s: %w", nr.RequestID, err)
	}
	tx, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return Request{}, fmt.Errorf("reserve request %s: begin: %w", nr.RequestID, err)
	}
	r, write, job, err := db.reserveTx(ctx, tx, nr, vals)
	switch {
	case err != nil:
	case !write:
		err = tx.Rollback()
	default:
		if db.beforeCommit != nil {
			err = db.beforeCommit(ctx, tx)
		}
		if err == nil {
			err = tx.Commit()
		}
	}
	if err != nil {
		_ = tx.Rollback()
		if mysqlErrno(err) == errDupEntry {
			return db.reserveConflict(ctx, nr, job, err)
		}
		return Request{}, fmt.Errorf("reserve request %s: %w", nr.RequestID, err)
	}
	if r.Phase == PhaseWaiting {
		return r, fmt.Errorf("reserve request %s (claim %q): %w", nr.RequestID, nr.ClaimNumber, ErrNoJob)
	}
	return r, nil
}

// reserveTx does Reserve's work inside tx. write is false when nothing was
// changed (the transaction is rolled back); job is the job number tried.
func (db *DB) reserveTx(ctx context.Context, tx *sqlx.Tx, nr NewRequest, vals map[string]any) (r Request, write bool, job string, err error) {
	existing, err := db.readRequest(ctx, tx, nr.RequestID, true)
	switch {
	case err == nil && existing.Phase != PhaseWaiting:
		return existing, false, "", nil
	case err != nil && !errors.Is(err, ErrNotFound):
		return Request{}, false, "", fmt.Errorf("read state row: %w", err)
	}
	waiting := err == nil
	job, how, err := db.findOrCreate(ctx, tx, vals)
	if err != nil {
		return Request{}, false, "", err
	}
	t := now()
	if job == "" {
		if waiting {
			return existing, false, "", nil
		}
		r = Request{RequestID: nr.RequestID, ClaimNumber: nr.ClaimNumber, Phase: PhaseWaiting,
			Expiry: normTime(nr.Expiry), RequestJSON: nr.RequestJSON, CreatedAt: t, UpdatedAt: t, Version: 1}
		if err := db.insertRequest(ctx, tx, r); err != nil {
			return Request{}, false, "", fmt.Errorf("record waiting row: %w", err)
		}
		ev := Event{RequestID: r.RequestID, Kind: EventPhase, To: PhaseWaiting, At: t, Message: "no job in the shop for this claim yet"}
		return r, true, "", db.insertEvent(ctx, tx, ev)
	}
	if len(job) > maxJobLen {
		return Request{}, false, job, fmt.Errorf("job number %q from the mapping is longer than %d bytes", job, maxJobLen)
	}
	var booking sql.NullTime
	if db.q.bookingDate != nil {
		vals[ParamJob] = job
		rows, err := db.q.bookingDate.query(ctx, tx, vals)
		if err != nil {
			return Request{}, false, job, err
		}
		if booking.Time, err = scanDate(rows, db.q.bookingDate.key); err != nil {
			return Request{}, false, job, err
		}
	}
	r = Request{RequestID: nr.RequestID, ClaimNumber: nr.ClaimNumber, JobNumber: job, Phase: PhaseReserved,
		Expiry: normTime(nr.Expiry), BookingDate: normTime(booking.Time), RequestJSON: nr.RequestJSON,
		CreatedAt: t, UpdatedAt: t, Version: 1}
	from := Phase("")
	if waiting {
		from = PhaseWaiting
		r.CreatedAt, r.Version = existing.CreatedAt, existing.Version+1
		// A fresh start on the new job: no backoff, no error (Defer's), and
		// nothing pushed (a request sent back to waiting by a job conflict).
		_, err = tx.ExecContext(ctx, "UPDATE "+db.t.requests+" SET claim_number = ?, job_number = ?, phase = ?, "+
			"resume_phase = '', pushed_hash = '', pushed_marker = '', supplement_needed = 0, pushed_at = NULL, "+
			"submitted_at = NULL, expiry = ?, booking_date = ?, request_json = ?, attempts = 0, "+
			"next_attempt_at = NULL, last_error = '', updated_at = ?, version = version + 1 "+
			"WHERE request_id = ? AND phase = 'waiting'",
			r.ClaimNumber, r.JobNumber, r.Phase, dbTime(r.Expiry), dbTime(r.BookingDate),
			nullString(string(r.RequestJSON)), t, r.RequestID)
	} else {
		err = db.insertRequest(ctx, tx, r)
	}
	if err != nil {
		return Request{}, false, job, err
	}
	ev := Event{RequestID: r.RequestID, Job: job, Kind: EventPhase, From: from, To: PhaseReserved, At: t,
		Message: "job " + job + " " + how}
	return r, true, job, db.insertEvent(ctx, tx, ev)
}

// findOrCreate runs find_job, then create_job; "" when neither yields a
// job. how says which did.
func (db *DB) findOrCreate(ctx context.Context, x queryer, vals map[string]any) (job, how string, err error) {
	if q := db.q.findJob; q != nil {
		rows, err := q.query(ctx, x, vals)
		if err != nil {
			return "", "", err
		}
		if job, err = scanJob(rows, q.key); err != nil || job != "" {
			return job, "found by find_job", err
		}
	}
	n := len(db.q.createJob)
	if n == 0 {
		return "", "", nil
	}
	for i := range db.q.createJob[:n-1] {
		if err := db.q.createJob[i].exec(ctx, x, vals); err != nil {
			return "", "", err
		}
	}
	last := &db.q.createJob[n-1]
	rows, err := last.query(ctx, x, vals)
	if err != nil {
		return "", "", err
	}
	if job, err = scanJob(rows, last.key); err != nil {
		return "", "", err
	}
	if job == "" {
		return "", "", fmt.Errorf("%s returned no row; the last create_job statement must return the new job", last.key)
	}
	return job, "created by create_job", nil
}

// reserveConflict explains a unique-key violation after the transaction
// was rolled back: another process reserved this request (its row is
// returned), or the job belongs to another request (ErrJobInUse).
func (db *DB) reserveConflict(ctx context.Context, nr NewRequest, job string, cause error) (Request, error) {
	r, err := db.readRequest(ctx, db.x, nr.RequestID, false)
	switch {
	case err == nil && r.Phase != PhaseWaiting:
		return r, nil
	case err == nil && job == "":
		// Another process recorded it as waiting first.
		return r, fmt.Errorf("reserve request %s (claim %q): %w", nr.RequestID, nr.ClaimNumber, ErrNoJob)
	}
	if job != "" {
		var holder string
		err := db.x.GetContext(ctx, &holder, "SELECT request_id FROM "+db.t.requests+" WHERE job_number = ?", job)
		if err == nil && holder != nr.RequestID {
			return Request{}, fmt.Errorf("reserve request %s: job %s is already linked to request %s: %w", nr.RequestID, job, holder, ErrJobInUse)
		}
	}
	return Request{}, fmt.Errorf("reserve request %s: %w", nr.RequestID, cause)
}

// PlanReserve says, without writing anything, what Reserve would do: the
// job it would use (the request's own, or the one find_job finds), or
// wouldCreate when create_job would make one; ErrNoJob when neither.
func (db *DB) PlanReserve(ctx context.Context, nr NewRequest) (job string, wouldCreate bool, err error) {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	vals, err := requestParams(nr, db.cfg.Params)
	if err != nil {
		return "", false, fmt.Errorf("plan request %s: %w", nr.RequestID, err)
	}
	tx, err := db.x.BeginTxx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return "", false, fmt.Errorf("plan request %s: begin: %w", nr.RequestID, err)
	}
	defer func() { _ = tx.Rollback() }()
	// A missing state table (quotesync never started here) means the
	// request is not tracked yet: `quotesync check` plans before the first
	// start.
	if r, err := db.readRequest(ctx, tx, nr.RequestID, false); err == nil && r.JobNumber != "" {
		return r.JobNumber, false, nil
	} else if err != nil && !errors.Is(err, ErrNotFound) && mysqlErrno(err) != errNoSuchTable {
		return "", false, fmt.Errorf("plan request %s: %w", nr.RequestID, err)
	}
	if q := db.q.findJob; q != nil {
		rows, err := q.query(ctx, tx, vals)
		if err != nil {
			return "", false, fmt.Errorf("plan request %s: %w", nr.RequestID, err)
		}
		if job, err = scanJob(rows, q.key); err != nil || job != "" {
			return job, false, err
		}
	}
	if len(db.q.createJob) > 0 {
		return "", true, nil
	}
	return "", false, fmt.Errorf("plan request %s (claim %q): %w", nr.RequestID, nr.ClaimNumber, ErrNoJob)
}
