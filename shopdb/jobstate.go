package shopdb

import (
	"context"
	"fmt"
	"strings"

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
// derived from the sums of the job's lines (linedigest.go): the first call
// runs one more statement (and one more small one), the next ones run
// estimate_state and the sums as one statement, two at once over many
// jobs.
func (db *DB) JobStates(ctx context.Context, jobs []string) (states map[string]JobState, bad map[string]error, err error) {
	set := newJobSet(jobs)
	if len(set.list) == 0 {
		return map[string]JobState{}, map[string]error{}, nil
	}
	if q := db.joinedQuery(); q != nil {
		states, bad, err := db.joinedStates(ctx, q, set)
		switch {
		case err == nil:
			db.joinServed()
			return states, bad, nil
		case ctx.Err() != nil:
			return nil, nil, err
		}
		// Refused (a mix of collations, say), or failed (a timeout the
		// two apart may each fit in): the two apart, for this call and,
		// when refused, from now on.
		db.joinFailed(q, err)
	}
	states, bad = make(map[string]JobState, len(set.list)), map[string]error{}
	hasMarker, colsSeen := false, false
	// Raw values: a row's texts are read where the driver has them, and
	// only the marker is copied.
	err = db.scanJobRows(ctx, &db.q.estimateState, set, stateColumnsReq, stateColumnsOpt, bad, func(job string, idx map[string]int, vals []any) error {
		if !colsSeen {
			_, final := idx["final"]
			db.sawFinalColumn(final)
			colsSeen = true
		}
		st, ok := stateRow(job, idx, vals, states, bad)
		if !ok {
			return nil
		}
		if i, ok := idx["marker"]; ok {
			st.Marker, _ = text(vals[i])
			hasMarker = true
		}
		states[job] = st
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if !hasMarker {
		if err := db.deriveMarkers(ctx, set, states); err != nil {
			return nil, nil, fmt.Errorf("derive change markers from %s: %w", db.q.lineItems.key, err)
		}
	}
	return states, bad, nil
}

// ReadFinalColumn runs estimate_state for no real job (one round trip)
// to learn whether it returns a final column (JobStates learns it too).
func (db *DB) ReadFinalColumn(ctx context.Context) (bool, error) {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	rows, err := db.q.estimateState.query(ctx, db.x, map[string]any{ParamJobs: []string{probe}})
	if err != nil {
		return false, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return false, fmt.Errorf("read columns of %s: %w", db.q.estimateState.key, err)
	}
	present := false
	for _, c := range cols {
		present = present || strings.EqualFold(c, "final")
	}
	db.sawFinalColumn(present)
	return present, rows.Close()
}

func (db *DB) sawFinalColumn(present bool) {
	db.digest.mu.Lock()
	defer db.digest.mu.Unlock()
	db.digest.hasFinal, db.digest.finalKnown = present, true
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
// yes/no, y/n; NULL is false. The error says what the value is and what is
// needed.
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
