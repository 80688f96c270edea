package store

import (
	"context"
	"fmt"
)

// The reads of the status page and `quotesync history`: bounded slices of
// quotesync's own tables, read without locks: they never hold up a pass.

// PageQuery says which rows RequestsPage reads.
type PageQuery struct {
	// Quiet, when set, leaves out the rows whose reason is one of these
	// and that have no supplement flagged: with the reasons that need no
	// person (the empty reason among them), what is left needs one.
	Quiet []Reason
	// Offset skips that many rows, newest first; Limit caps the rows
	// returned (required, > 0).
	Offset, Limit int
	// Insurer keeps the rows of that insurer only; "": every insurer's.
	Insurer string
}

// RequestsPage returns q's rows, newest first, without their RequestJSON.
func (st *Store) RequestsPage(ctx context.Context, q PageQuery) ([]Request, error) {
	if q.Limit <= 0 || q.Offset < 0 {
		return nil, fmt.Errorf("read requests page: limit %d, offset %d: want limit > 0 and offset >= 0", q.Limit, q.Offset)
	}
	var where []string
	var args []any
	if len(q.Quiet) > 0 {
		where = append(where, "(reason NOT IN (?) OR supplement_needed = 1)")
		args = append(args, strs(q.Quiet))
	}
	return st.newest(ctx, "read requests page", lightColumns, where, args, q.Insurer, q.Limit, q.Offset)
}

// RequestsOfJob returns the rows that hold job's number, or gave it up
// (ReleasedJob), newest first, without their RequestJSON. A job number
// is held by one request at most, but one given up may have been reused.
func (st *Store) RequestsOfJob(ctx context.Context, job string) ([]Request, error) {
	return st.newest(ctx, "read requests of job "+job, lightColumns,
		[]string{"(job_number = ? OR released_job = ?)"}, []any{job, job}, "", 100, 0)
}

// RequestKey names one request: its insurer and its id (two insurers'
// services may use one id).
type RequestKey struct {
	Insurer, RequestID string
}

// Key is the key of r.
func (r Request) Key() RequestKey { return RequestKey{Insurer: r.Insurer, RequestID: r.RequestID} }

// LatestEvents returns, for each request of keys, its newest event (none
// for a request without events), in one statement.
func (st *Store) LatestEvents(ctx context.Context, keys []RequestKey) (map[RequestKey]Event, error) {
	out := make(map[RequestKey]Event, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	// A row constructor list: MariaDB reads it as ranges of the index on
	// (insurer, request_id, id), which sqlx.In cannot expand.
	args := make([]any, 0, 2*len(keys))
	for _, k := range keys {
		args = append(args, k.Insurer, k.RequestID)
	}
	pairs := placeholders(len(keys), "(?, ?)")
	evs, err := st.queryEvents(ctx, "SELECT "+eventColumns+" FROM "+st.t.events+" WHERE id IN (SELECT MAX(id) FROM "+
		st.t.events+" WHERE (insurer, request_id) IN ("+pairs+") GROUP BY insurer, request_id)", args...)
	if err != nil {
		return nil, fmt.Errorf("read latest events: %w", err)
	}
	for _, ev := range evs {
		out[RequestKey{Insurer: ev.Insurer, RequestID: ev.RequestID}] = ev
	}
	return out, nil
}
