package shopdb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// Jobs are the mapping's job statements for one request (find_job,
// create_job, booking_date, release_job), run in a transaction the caller
// opened on this DB's pool (SQL): quotesync's store opens it and locks and
// writes the request's row in it, so that a job create_job made and the row
// that records it commit together or not at all. Jobs neither begins,
// commits nor rolls back. It is not safe for concurrent use.
type Jobs struct {
	db      *DB
	tx      *sqlx.Tx
	vals    map[string]any // the mapping's parameters for the request
	valsErr error          // why they could not be made (bad request JSON): no job statement runs
}

// Jobs returns the job statements for the request nr (whose parameters
// they get, :insurer db's insurer) on tx.
func (db *DB) Jobs(tx *sqlx.Tx, nr NewRequest) *Jobs {
	vals, err := requestParams(db.insurer, nr, db.cfg.Params)
	return &Jobs{db: db, tx: tx, vals: vals, valsErr: err}
}

// Find runs find_job: "" when it finds none or none is configured.
func (j *Jobs) Find(ctx context.Context) (string, error) {
	q := j.db.q.findJob
	if q == nil {
		return "", nil
	}
	if j.valsErr != nil {
		return "", j.valsErr
	}
	rows, err := q.query(ctx, j.tx, j.vals)
	if err != nil {
		return "", err
	}
	return scanJob(rows, q.key)
}

// CanCreate reports whether create_job is configured.
func (j *Jobs) CanCreate() bool { return len(j.db.q.createJob) > 0 }

// Create runs create_job's statements in order and returns the job the
// last one yields.
func (j *Jobs) Create(ctx context.Context) (string, error) {
	n := len(j.db.q.createJob)
	if n == 0 {
		return "", errors.New("no shop.queries.create_job is configured")
	}
	if j.valsErr != nil {
		return "", j.valsErr
	}
	for i := range j.db.q.createJob[:n-1] {
		if err := j.db.q.createJob[i].exec(ctx, j.tx, j.vals); err != nil {
			return "", err
		}
	}
	last := &j.db.q.createJob[n-1]
	rows, err := last.query(ctx, j.tx, j.vals)
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
func (j *Jobs) BookingDate(ctx context.Context, job string) (time.Time, error) {
	q := j.db.q.bookingDate
	if q == nil {
		return time.Time{}, nil
	}
	if j.valsErr != nil {
		return time.Time{}, j.valsErr
	}
	j.vals[ParamJob] = job
	defer delete(j.vals, ParamJob)
	rows, err := q.query(ctx, j.tx, j.vals)
	if err != nil {
		return time.Time{}, err
	}
	d, err := scanDate(rows, q.key)
	return normTime(d), err
}

// Release runs release_job's statements for job (:job, and :job_created
// 1 when create_job made it); false when none is configured.
func (j *Jobs) Release(ctx context.Context, job string, created bool) (bool, error) {
	if len(j.db.q.releaseJob) == 0 {
		return false, nil
	}
	if j.valsErr != nil {
		return false, j.valsErr
	}
	j.vals[ParamJob], j.vals[ParamJobCreated] = job, created
	defer func() { delete(j.vals, ParamJob); delete(j.vals, ParamJobCreated) }()
	for i := range j.db.q.releaseJob {
		if err := j.db.q.releaseJob[i].exec(ctx, j.tx, j.vals); err != nil {
			return false, err
		}
	}
	return true, nil
}
