package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// requestColumns is the column list every read of the requests table uses,
// in the order requestScan expects.
const requestColumns = "insurer, request_id, claim_number, job_number, phase, resume_phase, reason, intent, " +
	"job_created, released_job, pushed_hash, pushed_marker, supplement_needed, attempts, next_attempt_at, " +
	"last_error, expiry, booking_date, request_json, created_at, updated_at, pushed_at, submitted_at, version"

// lightColumns is requestColumns with NULL for request_json, which a pass
// over thousands of rows does not need.
var lightColumns = strings.Replace(requestColumns, "request_json,", "NULL,", 1)

// requestScan reads rows of requestColumns (or lightColumns) into
// destinations reused from row to row: 10,000 rows take 200,000 allocations
// (the driver's own some 135,000), 280,000 with new variables per row.
type requestScan struct {
	r                                        Request
	job, lastErr                             sql.NullString
	next, expiry, booking, pushed, submitted sql.NullTime
	reqJSON                                  []byte
	dest                                     []any
}

func newRequestScan() *requestScan {
	s := &requestScan{}
	r := &s.r
	s.dest = []any{&r.Insurer, &r.RequestID, &r.ClaimNumber, &s.job, &r.Phase, &r.ResumePhase, &r.Reason, &r.Intent,
		&r.JobCreated, &r.ReleasedJob, &r.PushedHash, &r.PushedMarker, &r.SupplementNeeded, &r.Attempts, &s.next,
		&s.lastErr, &s.expiry, &s.booking, &s.reqJSON, &r.CreatedAt, &r.UpdatedAt, &s.pushed, &s.submitted, &r.Version}
	return s
}

// scan reads the current row of rows into r. job_number and last_error
// are NULL when empty, the times when zero, request_json when there is
// none; a NULL in another column is an error that names it.
func (s *requestScan) scan(rows *sql.Rows, r *Request) error {
	if err := rows.Scan(s.dest...); err != nil {
		return err
	}
	*r = s.r
	r.JobNumber, r.LastError = s.job.String, s.lastErr.String
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	r.NextAttemptAt, r.Expiry, r.BookingDate = utcTime(s.next), utcTime(s.expiry), utcTime(s.booking)
	r.PushedAt, r.SubmittedAt = utcTime(s.pushed), utcTime(s.submitted)
	if len(s.reqJSON) > 0 {
		r.RequestJSON = s.reqJSON // a copy of the driver's bytes, new each row
	}
	return nil
}

// utcTime is t's time in UTC, zero when t is NULL.
func utcTime(t sql.NullTime) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}

// queryRequestsInto appends the rows of query to out, in order, each
// scanned in its place. Rows beyond out's capacity are read into chunks
// and copied into one slice at the end: grown by append, a slice of
// 10,000 rows of some 400 bytes allocates five times what it ends up
// holding, and a pass's first read took 25 MB and 20 ms more.
func queryRequestsInto(ctx context.Context, x queryer, out []Request, query string, args ...any) ([]Request, error) {
	rows, err := x.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	s := newRequestScan()
	chunks := [][]Request{out}
	n := len(out)
	for rows.Next() {
		c := &chunks[len(chunks)-1]
		if len(*c) == cap(*c) {
			chunks = append(chunks, make([]Request, 0, min(max(n, 16), 4096)))
			c = &chunks[len(chunks)-1]
		}
		*c = (*c)[:len(*c)+1]
		if err := s.scan(rows, &(*c)[len(*c)-1]); err != nil {
			return nil, err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	switch {
	case n == 0:
		return nil, nil
	case len(chunks) == 1:
		return chunks[0], nil
	}
	return slices.Concat(chunks...), nil
}

// OpenQuery says which rows OpenRequests reads. The reconciler decides
// which phases are open; shopdb only filters.
type OpenQuery struct {
	// Phases: every row in one of these phases.
	Phases []Phase
	// Recent: the rows in one of these phases changed at or after Since.
	Recent []Phase
	Since  time.Time
	// IDs: the rows of these requests, whatever their phase (the requests
	// the remote lists as pending now, so that a request quotesync already
	// knows is never taken for a new one).
	IDs []string
}

// OpenRequests returns, in one statement, the rows of db's insurer q
// selects, oldest first, without their RequestJSON (Request reads a whole
// row; Update keeps the stored JSON when the row it is given has none).
func (st *Store) OpenRequests(ctx context.Context, q OpenQuery) ([]Request, error) {
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	var where []string
	var args []any
	if len(q.Phases) > 0 {
		where = append(where, "phase IN (?)")
		args = append(args, strs(q.Phases))
	}
	if len(q.Recent) > 0 {
		since := q.Since
		if since.IsZero() {
			since = time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		where = append(where, "(phase IN (?) AND updated_at >= ?)")
		args = append(args, strs(q.Recent), normTime(since))
	}
	if len(q.IDs) > 0 {
		where = append(where, "request_id IN (?)")
		args = append(args, q.IDs)
	}
	if len(where) == 0 {
		return nil, nil
	}
	text, args, err := sqlx.In("SELECT "+lightColumns+" FROM "+st.t.requests+
		" WHERE insurer = ? AND ("+strings.Join(where, " OR ")+") ORDER BY created_at, request_id", append([]any{st.insurer}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("read open requests: %w", err)
	}
	// Sized as the last read, so that an idle pass reads into one slice.
	rs, err := st.selectRequests(ctx, "read open requests", make([]Request, 0, st.openRows.Load()), text, args...)
	st.openRows.Store(int64(len(rs)))
	return rs, err
}

// selectRequests reads the rows of query on the pool into out (see
// queryRequestsInto); missing tables are ErrNoStateTables, and what names
// the read in the error.
func (st *Store) selectRequests(ctx context.Context, what string, out []Request, query string, args ...any) ([]Request, error) {
	out, err := queryRequestsInto(ctx, st.x, out, query, args...)
	if mysqlErrno(err) == errNoSuchTable {
		err = ErrNoStateTables
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// strs is xs as strings, for sqlx.In.
func strs[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

// ListQuery says which rows ListRequests shows.
type ListQuery struct {
	// Hide leaves out the rows in these phases…
	Hide []Phase
	// …except those with SupplementNeeded set, when KeepSupplements.
	KeepSupplements bool
	// Limit caps the rows returned, newest first; <= 0: no limit.
	Limit int
	// Insurer, when set, keeps the rows of that insurer only.
	Insurer string
}

// ListRequests returns the rows q selects, of every insurer (unless
// q.Insurer says one), newest first.
func (st *Store) ListRequests(ctx context.Context, q ListQuery) ([]Request, error) {
	var where []string
	var args []any
	if len(q.Hide) > 0 {
		w := "phase NOT IN (?)"
		args = append(args, strs(q.Hide))
		if q.KeepSupplements {
			w = "(" + w + " OR supplement_needed = 1)"
		}
		where = append(where, w)
	}
	return st.newest(ctx, "list requests", requestColumns, where, args, q.Insurer, q.Limit, 0)
}

// newest reads the rows of columns that meet every condition of where
// (with args; sqlx.In expands a slice) and are insurer's, when set,
// newest first: from offset on, at most limit (<= 0: every row).
func (st *Store) newest(ctx context.Context, what, columns string, where []string, args []any, insurer string, limit, offset int) ([]Request, error) {
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	if insurer != "" {
		where, args = append(where, "insurer = ?"), append(args, insurer)
	}
	query := "SELECT " + columns + " FROM " + st.t.requests
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY created_at DESC, request_id DESC"
	if limit > 0 {
		query += " LIMIT " + strconv.Itoa(limit)
	}
	if offset > 0 {
		query += " OFFSET " + strconv.Itoa(offset)
	}
	text, args, err := sqlx.In(query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return st.selectRequests(ctx, what, nil, text, args...)
}

// Request returns the row of one request of db's insurer; ErrNotFound
// when there is none.
func (st *Store) Request(ctx context.Context, requestID string) (Request, error) {
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	r, err := st.readRequest(ctx, st.x, requestID, false)
	if err != nil {
		return Request{}, fmt.Errorf("read request %s: %w", requestID, err)
	}
	return r, nil
}

// readRequest reads one row, locking it when forUpdate; ErrNotFound.
func (st *Store) readRequest(ctx context.Context, x queryer, requestID string, forUpdate bool) (Request, error) {
	q := "SELECT " + requestColumns + " FROM " + st.t.requests + " WHERE insurer = ? AND request_id = ?"
	if forUpdate {
		q += " FOR UPDATE"
	}
	rs, err := queryRequestsInto(ctx, x, nil, q, st.insurer, requestID)
	if err != nil {
		return Request{}, err
	}
	if len(rs) == 0 {
		return Request{}, ErrNotFound
	}
	return rs[0], nil
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// prepareNew fills in what Insert stores of a new row: version 1, created
// and updated now unless set, times as stored, texts as kept.
func (st *Store) prepareNew(r Request) Request {
	t := now()
	if r.CreatedAt.IsZero() {
		r.CreatedAt = t
	}
	r.CreatedAt = normTime(r.CreatedAt)
	r.UpdatedAt = t
	r.Version = 1
	r.Insurer = st.insurer
	return st.normRow(r)
}

// normRow is r with its times as a DATETIME(6) keeps them and its texts
// as kept (keepText).
func (st *Store) normRow(r Request) Request {
	for _, t := range []*time.Time{&r.NextAttemptAt, &r.Expiry, &r.BookingDate, &r.PushedAt, &r.SubmittedAt} {
		*t = normTime(*t)
	}
	r.LastError = st.keepText(r.LastError)
	return r
}

// insertRow writes a new row (from prepareNew) with ev. A row that exists
// already is ErrExists; a job number another request holds is ErrJobInUse.
func (st *Store) insertRow(ctx context.Context, x queryer, r Request, ev Event) error {
	_, err := x.ExecContext(ctx, "INSERT INTO "+st.t.requests+" ("+requestColumns+
		") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		r.Insurer, r.RequestID, r.ClaimNumber, nullString(r.JobNumber), r.Phase, r.ResumePhase, r.Reason, r.Intent,
		r.JobCreated, r.ReleasedJob, r.PushedHash, r.PushedMarker, r.SupplementNeeded, r.Attempts,
		dbTime(r.NextAttemptAt), r.LastError, dbTime(r.Expiry), dbTime(r.BookingDate),
		nullString(string(r.RequestJSON)), r.CreatedAt, r.UpdatedAt, dbTime(r.PushedAt),
		dbTime(r.SubmittedAt), r.Version)
	if mysqlErrno(err) == errDupEntry {
		exists, qerr := st.duplicateRequest(ctx, x, err, r.RequestID)
		switch {
		case qerr != nil:
			return errors.Join(err, qerr)
		case exists:
			return fmt.Errorf("request %s: %w", r.RequestID, ErrExists)
		}
		return fmt.Errorf("job %s: %w", r.JobNumber, ErrJobInUse)
	}
	if err != nil {
		return err
	}
	return st.recordEvent(ctx, x, ev, Request{}, r)
}

// duplicateRequest tells which unique key of the requests table an
// insert's duplicate-entry error (1062) is about: true for the primary key
// (the request has a row already), false for the job number's. The server
// names the key at the end of its message; where the message has another
// form (a server whose lc_messages is not English, the demo's embedded
// server), the row is looked up instead: rows are never deleted, so one
// that was there at the insert is there now.
func (st *Store) duplicateRequest(ctx context.Context, x queryer, err error, requestID string) (bool, error) {
	switch key, ok := dupKey(err); {
	case ok && key == "PRIMARY":
		return true, nil
	case ok && key == st.cfg.TablePrefix+"requests_job":
		return false, nil
	}
	// A locking read sees the row committed now, not the snapshot (which in
	// REPEATABLE READ misses another instance's row); shared, the lock the
	// insert's duplicate check holds: FOR UPDATE could deadlock two inserts.
	rows, err := x.QueryContext(ctx, "SELECT 1 FROM "+st.t.requests+" WHERE insurer = ? AND request_id = ? LOCK IN SHARE MODE", st.insurer, requestID)
	if err != nil {
		return false, fmt.Errorf("look up request %s after a duplicate key: %w", requestID, err)
	}
	defer rows.Close()
	exists := rows.Next()
	return exists, rows.Err()
}

// updateRow stores next over cur, compare-and-set on cur's phase and
// version, with ev; it returns next as stored.
func (st *Store) updateRow(ctx context.Context, x queryer, cur, next Request) (Request, error) {
	next.Insurer, next.RequestID, next.CreatedAt = st.insurer, cur.RequestID, cur.CreatedAt
	next.UpdatedAt = now()
	next.Version = cur.Version + 1
	next = st.normRow(next)
	res, err := x.ExecContext(ctx, "UPDATE "+st.t.requests+" SET claim_number = ?, job_number = ?, "+
		"phase = ?, resume_phase = ?, reason = ?, intent = ?, job_created = ?, released_job = ?, "+
		"pushed_hash = ?, pushed_marker = ?, supplement_needed = ?, attempts = ?, next_attempt_at = ?, "+
		"last_error = ?, expiry = ?, booking_date = ?, request_json = COALESCE(?, request_json), updated_at = ?, pushed_at = ?, "+
		"submitted_at = ?, version = version + 1 "+
		"WHERE insurer = ? AND request_id = ? AND phase = ? AND version = ?",
		next.ClaimNumber, nullString(next.JobNumber), next.Phase, next.ResumePhase, next.Reason, next.Intent,
		next.JobCreated, next.ReleasedJob, next.PushedHash, next.PushedMarker, next.SupplementNeeded,
		next.Attempts, dbTime(next.NextAttemptAt), next.LastError, dbTime(next.Expiry),
		dbTime(next.BookingDate), nullString(string(next.RequestJSON)), next.UpdatedAt,
		dbTime(next.PushedAt), dbTime(next.SubmittedAt), st.insurer, cur.RequestID, cur.Phase, cur.Version)
	if mysqlErrno(err) == errDupEntry {
		// The request's id is not written: only the job number's key can clash.
		return Request{}, fmt.Errorf("job %s: %w", next.JobNumber, ErrJobInUse)
	}
	if err != nil {
		return Request{}, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return Request{}, err
	}
	if n == 0 {
		return Request{}, ErrStale
	}
	return next, nil
}

// Update stores next in place of cur if the row is still at cur's phase
// and version (compare-and-set), with Version+1 and UpdatedAt now, and
// appends ev (when ev.Kind is set) in the same transaction. A next without
// RequestJSON keeps the stored one. ErrStale when another writer got there
// first; ErrJobInUse when next's job number belongs to another request.
// The job number is written from next too: a different one moves the
// request to that job, "" clears it (NULL, so any number of requests can
// be without a job) and frees the old job for another request. RequestID
// and CreatedAt are not changed.
func (st *Store) Update(ctx context.Context, cur, next Request, ev Event) (Request, error) {
	parent := ctx
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	var saved Request
	write := func(x queryer) error {
		var err error
		if saved, err = st.updateRow(ctx, x, cur, next); err != nil {
			return err
		}
		return st.recordEvent(ctx, x, ev, cur, saved)
	}
	var err error
	if ev.Kind == "" {
		err = write(st.x) // a single statement needs no transaction
	} else {
		err = st.inTx(ctx, func(tx *sqlx.Tx) error { return write(tx) })
	}
	if err != nil {
		return Request{}, fmt.Errorf("update request %s (%s, version %d): %w", cur.RequestID, cur.Phase, cur.Version, st.explainWait(parent, err))
	}
	return saved, nil
}

// Insert writes a new row r (version 1, created and updated now unless
// CreatedAt is set) and ev in one transaction. ErrExists when the request
// has a row already; ErrJobInUse when r's job number belongs to another
// request. It returns the row as stored.
func (st *Store) Insert(ctx context.Context, r Request, ev Event) (Request, error) {
	parent := ctx
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	if err := checkRow(r); err != nil {
		return Request{}, fmt.Errorf("record request %s: %w", r.RequestID, err)
	}
	r = st.prepareNew(r)
	err := st.inTx(ctx, func(tx *sqlx.Tx) error { return st.insertRow(ctx, tx, r, ev) })
	if err != nil {
		return Request{}, fmt.Errorf("record request %s: %w", r.RequestID, st.explainWait(parent, err))
	}
	return r, nil
}

// recordEvent appends ev (when its Kind is set) for a change from cur to
// next, filling in what the rows say.
func (st *Store) recordEvent(ctx context.Context, x queryer, ev Event, cur, next Request) error {
	if ev.Kind == "" {
		return nil
	}
	return st.insertEvent(ctx, x, eventOf(ev, cur, next))
}

// eventOf is ev with what the rows of its change from cur to next say:
// the request, the insurer, the job, the phases, the time.
func eventOf(ev Event, cur, next Request) Event {
	ev.RequestID = cmp.Or(ev.RequestID, next.RequestID)
	ev.Insurer = cmp.Or(ev.Insurer, next.Insurer)
	ev.Job = cmp.Or(ev.Job, next.JobNumber)
	if ev.From == "" && ev.To == "" && cur.Phase != next.Phase {
		ev.From, ev.To = cur.Phase, next.Phase
	}
	if ev.At.IsZero() {
		ev.At = next.UpdatedAt
	}
	return ev
}

// PhaseCount is how many rows of one insurer are in one phase for one
// reason, and how many of them have a supplement flagged.
type PhaseCount struct {
	Insurer     string
	Phase       Phase
	Reason      Reason
	N           int
	Supplements int
}

// PhaseCounts counts quotesync's rows by insurer, phase and reason, in
// one statement; nothing when the state tables do not exist yet.
func (st *Store) PhaseCounts(ctx context.Context) ([]PhaseCount, error) {
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	var out []PhaseCount
	err := st.x.SelectContext(ctx, &out, "SELECT insurer, phase, reason, COUNT(*) AS n, SUM(supplement_needed) AS supplements FROM "+
		st.t.requests+" GROUP BY insurer, phase, reason")
	if mysqlErrno(err) == errNoSuchTable {
		return nil, nil
	}
	return out, wrapf(err, "count requests by phase")
}
