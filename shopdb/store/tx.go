package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

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
// a request's row (locked), has the mapping's job statements run (on SQL,
// the same transaction: shopdb.DB.Jobs, which says why) and writes the row.
// It is not safe for concurrent use.
type Tx struct {
	st        *Store
	tx        *sqlx.Tx
	readOnly  bool
	requestID string
}

// InTx runs f in a read-write transaction for the request requestID and
// commits when f returns nil; any error rolls everything back, what the
// mapping's statements did in it included.
func (st *Store) InTx(ctx context.Context, requestID string, f func(ctx context.Context, tx *Tx) error) error {
	return st.runTx(ctx, requestID, false, f)
}

// ReadTx runs f in a read-only transaction for the request requestID and
// rolls it back: what a dry run and `check` use to look jobs up.
// Statements that write fail in it.
func (st *Store) ReadTx(ctx context.Context, requestID string, f func(ctx context.Context, tx *Tx) error) error {
	return st.runTx(ctx, requestID, true, f)
}

func (st *Store) runTx(ctx context.Context, requestID string, readOnly bool, f func(ctx context.Context, tx *Tx) error) error {
	parent := ctx
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	var opts *sql.TxOptions
	if readOnly {
		opts = &sql.TxOptions{ReadOnly: true}
	}
	stx, err := st.x.BeginTxx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	tx := &Tx{st: st, tx: stx, readOnly: readOnly, requestID: requestID}
	err = f(ctx, tx)
	if err == nil && !readOnly {
		if st.beforeCommit != nil {
			err = st.beforeCommit(ctx, stx)
		}
		if err == nil {
			err = wrapf(stx.Commit(), "commit")
		}
	}
	if err != nil || readOnly {
		_ = stx.Rollback()
	}
	return st.explainWait(parent, err)
}

// SQL is the transaction, for the mapping's job statements
// (shopdb.DB.Jobs) to run in it.
func (t *Tx) SQL() *sqlx.Tx { return t.tx }

// Request reads the request's row and locks it until the transaction ends
// (a read-only transaction does not lock); ErrNotFound when it has none. A
// state table that does not exist yet (quotesync never started here) reads
// as no row in a read-only transaction.
func (t *Tx) Request(ctx context.Context) (Request, error) {
	r, err := t.st.readRequest(ctx, t.tx, t.requestID, !t.readOnly)
	if t.readOnly && mysqlErrno(err) == errNoSuchTable {
		return Request{}, ErrNotFound
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Request{}, fmt.Errorf("read state row: %w", err)
	}
	return r, err
}

// Insert writes a new row for the request (version 1) with ev.
// ErrExists when another writer recorded the request first; ErrJobInUse
// when the job number belongs to another request.
func (t *Tx) Insert(ctx context.Context, r Request, ev Event) (Request, error) {
	if err := checkRow(r); err != nil {
		return Request{}, err
	}
	r = t.st.prepareNew(r)
	if err := t.st.insertRow(ctx, t.tx, r, ev); err != nil {
		return Request{}, err
	}
	return r, nil
}

// Update stores next over cur (compare-and-set) with ev.
func (t *Tx) Update(ctx context.Context, cur, next Request, ev Event) (Request, error) {
	if err := checkRow(next); err != nil {
		return Request{}, err
	}
	saved, err := t.st.updateRow(ctx, t.tx, cur, next)
	if err != nil {
		return Request{}, err
	}
	return saved, t.st.recordEvent(ctx, t.tx, ev, cur, saved)
}

// JobHolder returns the row that holds job, whatever its insurer; a
// zero Request when none does.
func (t *Tx) JobHolder(ctx context.Context, job string) (Request, error) {
	return jobHolder(ctx, t.st, t.tx, job)
}
