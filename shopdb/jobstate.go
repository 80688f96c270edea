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
// derived from the sums of the job's lines (linedigest.go): one more
// statement (run beside estimate_state from the second call on), and one
// more small one the first time.
func (db *DB) JobStates(ctx context.Context, jobs []string) (states map[string]JobState, bad map[string]error, err error) {
	set := newJobSet(jobs)
	states, bad = make(map[string]JobState, len(set.list)), map[string]error{}
	if len(set.list) == 0 {
		return states, bad, nil
	}
	hasMarker := false
	early := db.digestsAhead(ctx, set)
	// Raw values: a row's texts are read where the driver has them, and
	// only the marker is copied.
	err = db.scanJobRowsAs(ctx, &db.q.estimateState, set, stateColumnsReq, stateColumnsOpt, bad, true, func(job string, idx map[string]int, _ []string, vals []any) error {
		if _, dup := states[job]; dup {
			delete(states, job)
			bad[job] = &StateError{Job: job, Column: "job",
				Reason: "appears in two rows; return one row per job (GROUP BY the job)"}
			return nil
		}
		final, ferr := truth(vals[idx["final"]])
		if ferr != nil {
			bad[job] = &StateError{Job: job, Column: "final", Reason: ferr.Error()}
			return nil
		}
		st := JobState{Job: job, Final: final}
		if i, ok := idx["marker"]; ok {
			st.Marker, _ = text(vals[i])
			hasMarker = true
		}
		states[job] = st
		return nil
	})
	if err != nil || hasMarker {
		if early != nil {
			early.stop()
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if !hasMarker {
		if err := db.deriveMarkers(ctx, set, states, early); err != nil {
			return nil, nil, fmt.Errorf("derive change markers from %s: %w", db.q.lineItems.key, err)
		}
	}
	return states, bad, nil
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
