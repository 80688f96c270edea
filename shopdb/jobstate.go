package shopdb

import (
	"context"
	"fmt"
	"maps"
	"strings"
	gosync "sync"

	"github.com/shopspring/decimal"
)

// StateError is a job whose estimate_state row is invalid: the job is left
// out of JobStates' states until the shop (or the mapping) fixes it; the
// other jobs are unaffected. Error() names the job, the column and the fix.
type StateError struct {
	Job    string
	Column string // "final", or "job" when the query returned two rows for the job
	Reason string // what is wrong and what is needed
}

// Error implements error.
func (e *StateError) Error() string {
	return fmt.Sprintf("job %s: shop.queries.estimate_state column %s %s", e.Job, e.Column, e.Reason)
}

// JobStates runs estimate_state for jobs in one statement. A job whose row
// is invalid (final is not a boolean) or that comes back in two rows is in
// bad (a *StateError) and not in states; jobs the query returns no row for
// are in neither, and rows for jobs that were not asked for are ignored.
// err is for the query as a whole: the database, a row with a NULL job, or
// columns that do not fit.
//
// When estimate_state returns no marker column, each state's Marker is
// derived from the sums of the job's lines, in the same statement
// (linedigest.go): two at once over many jobs.
func (db *DB) JobStates(ctx context.Context, jobs []string) (states map[string]JobState, bad map[string]error, err error) {
	set := newJobSet(jobs)
	if len(set.list) == 0 {
		return map[string]JobState{}, map[string]error{}, nil
	}
	for {
		q, err := db.statesQuery(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("derive change markers from %s: %w", db.q.lineItems.key, err)
		}
		states, bad, again, err := db.readStates(ctx, q, set)
		switch {
		case err != nil && q != &db.q.estimateState && ctx.Err() == nil && refusedStatement(err):
			db.refused(q, err) // the next form, or estimate_state alone
		case err != nil:
			return nil, nil, err
		case !again:
			return states, bad, nil
		}
	}
}

// ReadFinalColumn runs estimate_state for no real job (one round trip)
// to learn its columns: whether it returns a final column, and a marker
// (JobStates learns them too).
func (db *DB) ReadFinalColumn(ctx context.Context) (bool, error) {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	rows, cols, err := db.q.estimateState.queryColumns(ctx, db.x, map[string]any{ParamJobs: []string{probe}})
	if err != nil {
		return false, err
	}
	defer rows.Close()
	idx := map[string]int{}
	for i, c := range cols {
		idx[strings.ToLower(c)] = i
	}
	db.sawColumns(idx)
	_, final := idx["final"]
	return final, rows.Close()
}

// readStates runs q, estimate_state or it joined with the sums of the
// lines, for the jobs of set: in two statements at once for more than
// the digest's split of jobs when joined. again: q is estimate_state,
// whose first call showed that it returns no marker, and the sums can be
// derived: the caller runs the joined statement instead.
func (db *DB) readStates(ctx context.Context, q *namedQuery, set jobSet) (states map[string]JobState, bad map[string]error, again bool, err error) {
	joined := q != &db.q.estimateState
	parts := [][]string{set.list}
	if joined && len(set.list) > db.digest.split {
		half := len(set.list) / 2
		parts = [][]string{set.list[:half], set.list[half:]}
	}
	type answer struct {
		states map[string]JobState
		bad    map[string]error
		sums   map[string]string
		err    error
	}
	answers := make([]answer, len(parts))
	opt := stateColumnsOpt
	if joined {
		opt = joinedColumnsOpt
	}
	var wg gosync.WaitGroup
	for i, jobs := range parts {
		wg.Go(func() {
			a := answer{states: make(map[string]JobState, len(jobs)), bad: map[string]error{}, sums: map[string]string{}}
			part := set
			if len(parts) > 1 {
				part = newJobSet(jobs)
			}
			a.err = db.scanJobRows(ctx, q, part, a.bad, func(names []string) (map[string]int, error) {
				idx, err := columnIndex(q.key, names, stateColumnsReq, opt)
				if err == nil && !joined && db.sawColumns(idx) {
					again = true
				}
				return idx, err
			}, func(job string, idx map[string]int, vals []any) error {
				if k, ok := idx[joinedPartColumn]; ok {
					if kind, _ := text(vals[k]); kind == "d" {
						return addSums(a.sums, job, vals[idx[joinedSumsColumn]])
					}
				}
				st, ok := stateRow(job, idx, vals, a.states, a.bad)
				if !ok {
					return nil
				}
				if k, ok := idx["marker"]; ok {
					st.Marker, _ = text(vals[k])
				}
				a.states[job] = st
				return nil
			})
			answers[i] = a
		})
	}
	wg.Wait()
	for _, a := range answers {
		if a.err != nil {
			return nil, nil, false, a.err
		}
	}
	states, bad = answers[0].states, answers[0].bad
	for _, a := range answers[1:] {
		maps.Copy(states, a.states)
		maps.Copy(bad, a.bad)
	}
	if joined {
		for _, a := range answers {
			setMarkers(states, a.sums, a.states)
		}
	}
	return states, bad, again, nil
}

// stateRow reads job's estimate_state row but for the marker. ok is
// false when the row is invalid (a second row for the job, a final that
// is not a boolean): the job is then in bad, and not in states.
func stateRow(job string, idx map[string]int, vals []any, states map[string]JobState, bad map[string]error) (st JobState, ok bool) {
	if _, dup := states[job]; dup {
		delete(states, job)
		bad[job] = &StateError{Job: job, Column: "job",
			Reason: "appears in two rows; return one row per job (GROUP BY the job)"}
		return st, false
	}
	i, ok := idx["final"]
	if !ok {
		return JobState{Job: job}, true // no final column: never final
	}
	final, err := truth(vals[i])
	if err != nil {
		bad[job] = &StateError{Job: job, Column: "final", Reason: err.Error()}
		return st, false
	}
	return JobState{Job: job, Final: final}, true
}

// truth reads a boolean column: a number (non-zero is true), true/false,
// yes/no, y/n; NULL is false. The error names the value and what is needed.
func truth(v any) (bool, error) {
	s, ok := text(v)
	if !ok {
		return false, nil
	}
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "true", "yes", "y", "t", "1":
		return true, nil
	case "false", "no", "n", "f", "", "0":
		return false, nil
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return false, fmt.Errorf("is %q; return 1/0 or true/false", s)
	}
	return !d.IsZero(), nil
}
