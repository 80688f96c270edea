package shopdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// Length limits of the state table's key columns.
const (
	MaxRequestIDLen = 64
	MaxClaimLen     = 128
	MaxJobLen       = 64
)

// checkRow refuses a row whose keys do not fit the state table.
func checkRow(r Request) error {
	switch {
	case r.RequestID == "":
		return errors.New("request id is empty")
	case len(r.RequestID) > MaxRequestIDLen:
		return fmt.Errorf("request id is %d bytes, longer than the %d quotesync keeps", len(r.RequestID), MaxRequestIDLen)
	case len(r.ClaimNumber) > MaxClaimLen:
		return fmt.Errorf("claim number is %d bytes, longer than the %d quotesync keeps", len(r.ClaimNumber), MaxClaimLen)
	case len(r.JobNumber) > MaxJobLen:
		return fmt.Errorf("job number %.20q… is %d bytes, longer than the %d quotesync keeps", r.JobNumber, len(r.JobNumber), MaxJobLen)
	}
	return nil
}

// Tx is one transaction on the shop database in which the reconciler reads
// a request's row, runs the mapping's job queries and writes the row: a
// job created by create_job and the row that records it commit together or
// not at all. It is not safe for concurrent use.
type Tx struct {
	db       *DB
	tx       *sqlx.Tx
	readOnly bool
	vals     map[string]any // the mapping's parameters for the request
	valsErr  error          // why they could not be made (bad request JSON)
	nr       NewRequest
}

// params are the mapping's parameters, or the error that keeps the job
// queries from running for this request.
func (t *Tx) params() (map[string]any, error) {
	if t.valsErr != nil {
		return nil, t.valsErr
	}
	return t.vals, nil
}

// InTx runs f in a read-write transaction for the request nr (whose
// parameters the job queries get) and commits when f returns nil; any
// error rolls everything back, the jobs create_job made included.
func (db *DB) InTx(ctx context.Context, nr NewRequest, f func(ctx context.Context, tx *Tx) error) error {
	return db.runTx(ctx, nr, false, f)
}

// ReadTx runs f in a read-only transaction for the request nr and rolls
// it back: what a dry run and `check` use to look jobs up. Statements that
// write fail in it.
func (db *DB) ReadTx(ctx context.Context, nr NewRequest, f func(ctx context.Context, tx *Tx) error) error {
	return db.runTx(ctx, nr, true, f)
}

func (db *DB) runTx(ctx context.Context, nr NewRequest, readOnly bool, f func(ctx context.Context, tx *Tx) error) error {
	parent := ctx
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	vals, valsErr := requestParams(db.insurer, nr, db.cfg.Params)
	var opts *sql.TxOptions
	if readOnly {
		opts = &sql.TxOptions{ReadOnly: true}
	}
	stx, err := db.x.BeginTxx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	tx := &Tx{db: db, tx: stx, readOnly: readOnly, vals: vals, valsErr: valsErr, nr: nr}
	err = f(ctx, tx)
	if err == nil && !readOnly {
		if db.beforeCommit != nil {
			err = db.beforeCommit(ctx, stx)
		}
		if err == nil {
			if err = stx.Commit(); err != nil {
				err = fmt.Errorf("commit: %w", err)
			}
		}
	}
	if err != nil || readOnly {
		_ = stx.Rollback()
	}
	return db.explainWait(parent, err)
}

// Request reads the request's row and locks it until the transaction ends
// (a read-only transaction does not lock); ErrNotFound when it has none. A
// state table that does not exist yet (quotesync never started here) reads
// as no row in a read-only transaction.
func (t *Tx) Request(ctx context.Context) (Request, error) {
	r, err := t.db.readRequest(ctx, t.tx, t.nr.RequestID, !t.readOnly)
	if t.readOnly && mysqlErrno(err) == errNoSuchTable {
		return Request{}, ErrNotFound
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Request{}, fmt.Errorf("read state row: %w", err)
	}
	return r, err
}

// FindJob runs find_job: "" when it finds none or none is configured.
func (t *Tx) FindJob(ctx context.Context) (string, error) {
	q := t.db.q.findJob
	if q == nil {
		return "", nil
	}
	vals, err := t.params()
	if err != nil {
		return "", err
	}
	rows, err := q.query(ctx, t.tx, vals)
	if err != nil {
		return "", err
	}
	return scanJob(rows, q.key)
}

// CanCreateJob reports whether create_job is configured.
func (t *Tx) CanCreateJob() bool { return len(t.db.q.createJob) > 0 }

// CreateJob runs create_job's statements in order and returns the job the
// last one yields.
func (t *Tx) CreateJob(ctx context.Context) (string, error) {
	n := len(t.db.q.createJob)
	if n == 0 {
		return "", errors.New("no shop.queries.create_job is configured")
	}
	vals, err := t.params()
	if err != nil {
		return "", err
	}
	for i := range t.db.q.createJob[:n-1] {
		if err := t.db.q.createJob[i].exec(ctx, t.tx, vals); err != nil {
			return "", err
		}
	}
	last := &t.db.q.createJob[n-1]
	rows, err := last.query(ctx, t.tx, vals)
	if err != nil {
		return "", err
	}
	job, err := scanJob(rows, last.key)
	if err != nil {
		return "", err
	}
	if job == "" {
		return "", fmt.Errorf("%s returned no row; the last create_job statement must return the new job", last.key)
	}
	return job, nil
}

// BookingDate runs booking_date for job; the zero time when it is not
// configured or returns no date.
func (t *Tx) BookingDate(ctx context.Context, job string) (time.Time, error) {
	q := t.db.q.bookingDate
	if q == nil {
		return time.Time{}, nil
	}
	if _, err := t.params(); err != nil {
		return time.Time{}, err
	}
	t.vals[ParamJob] = job
	defer delete(t.vals, ParamJob)
	rows, err := q.query(ctx, t.tx, t.vals)
	if err != nil {
		return time.Time{}, err
	}
	d, err := scanDate(rows, q.key)
	return normTime(d), err
}

// CanReleaseJob reports whether release_job is configured.
func (t *Tx) CanReleaseJob() bool { return len(t.db.q.releaseJob) > 0 }

// ReleaseJob runs release_job's statements for job (:job, and :job_created
// 1 when create_job made it); false when none is configured.
func (t *Tx) ReleaseJob(ctx context.Context, job string, created bool) (bool, error) {
	if len(t.db.q.releaseJob) == 0 {
		return false, nil
	}
	if _, err := t.params(); err != nil {
		return false, err
	}
	t.vals[ParamJob], t.vals[ParamJobCreated] = job, created
	defer func() { delete(t.vals, ParamJob); delete(t.vals, ParamJobCreated) }()
	for i := range t.db.q.releaseJob {
		if err := t.db.q.releaseJob[i].exec(ctx, t.tx, t.vals); err != nil {
			return false, err
		}
	}
	return true, nil
}

// Insert writes a new row for the request (version 1) with ev.
// ErrExists when another writer recorded the request first; ErrJobInUse
// when the job number belongs to another request.
func (t *Tx) Insert(ctx context.Context, r Request, ev Event) (Request, error) {
	if err := checkRow(r); err != nil {
		return Request{}, err
	}
	r = t.db.prepareNew(r)
	if err := t.db.insertRow(ctx, t.tx, r, ev); err != nil {
		return Request{}, err
	}
	return r, nil
}

// Update stores next over cur (compare-and-set) with ev.
func (t *Tx) Update(ctx context.Context, cur, next Request, ev Event) (Request, error) {
	if err := checkRow(next); err != nil {
		return Request{}, err
	}
	saved, err := t.db.updateRow(ctx, t.tx, cur, next)
	if err != nil {
		return Request{}, err
	}
	return saved, t.db.recordEvent(ctx, t.tx, ev, cur, saved)
}

// JobHolder returns the row that holds job, whatever its insurer; a
// zero Request when none does.
func (t *Tx) JobHolder(ctx context.Context, job string) (Request, error) {
	return jobHolder(ctx, t.db, t.tx, job)
}
