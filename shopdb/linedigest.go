package shopdb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/go-sql-driver/mysql"
)

// Derived change markers. Without a marker column in estimate_state, the
// only way to tell that a job's lines did not change is to read them all
// and hash them: for 10,000 jobs of 30 lines, 300,000 rows through the
// driver every pass. So when estimate_state has no marker, JobStates
// derives one: the database sums a checksum of every line line_items
// returns, per job, in one statement (line_items as a derived table), and
// only the sums cross the wire:
//
//	SELECT l.job, CONCAT(COUNT(*), '::', SUM(CRC32(<line>)))
//	FROM (<line_items>) AS l GROUP BY l.job
//
// where <line> is every column but job as text, joined by the byte 31,
// and a digit per column for whether it is NULL. A server without CRC32
// gets 64 bits of an MD5 instead; a server that can do neither (or a
// mapping the derived table does not fit) gets no derived marker, and its
// lines are read and hashed every pass, as before. Over many jobs the
// sums are read in two statements at once, and from the second call on
// they are asked for while estimate_state runs.
//
// The marker is a hint, not a proof. A change to a job's lines leaves the
// count and the sum as they were about once in 2^32 changes; the job's
// Draft is then pushed at its next change instead. What is submitted
// never rests on it: a final estimate's lines are always read and hashed
// against what the remote holds before the submit. A second checksum
// (CRC32C) would make a miss once in 2^64, but the database builds each
// line's text once per checksum, and that, not the checksum, is the cost:
// about a third more of the database's time on every pass.
//
// The marker is "qs-lines:" and the sums, "qs-lines:0" for a job without
// lines; the engine stores and compares it as it would the mapping's own.
// Quote-level fields (quote_fields) are not in it: with quote_fields and
// no marker column, nothing is derived.

// derivedMarkerPrefix starts every derived marker.
const derivedMarkerPrefix = "qs-lines:"

// digestForms are the per-line sums the database may compute, best
// first; %[1]s is one line as text.
var digestForms = []struct{ name, sums string }{
	{"CRC32", "SUM(CRC32(%[1]s))"},
	{"MD5", "SUM(CAST(CONV(LEFT(MD5(%[1]s), 16), 16, 10) AS UNSIGNED))"},
}

// digestSplit is how many jobs make the sums worth reading in two
// statements at once: the database works on each on a core of its own.
const digestSplit = 2000

// errNullSums is a form the server runs but answers NULL to (a function
// it does not really have): refused like one it does not run.
var errNullSums = errors.New("the sums are NULL")

// lineDigest is how a DB derives markers: the statement once built, or
// why it does not.
type lineDigest struct {
	mu    sync.Mutex
	names []string // line_items' columns, once read
	form  int      // index in digestForms
	q     *namedQuery
	off   string // why nothing is derived; "" while it may be
	// ahead is set when the last call derived markers: the next asks for
	// the sums while estimate_state runs (digestsAhead).
	ahead bool
	// aheadUsed counts the calls whose sums were read ahead (for tests).
	aheadUsed int
}

// digestRun is sums asked for ahead of estimate_state's answer.
type digestRun struct {
	q      *namedQuery
	cancel context.CancelFunc
	done   chan struct{}
	sums   map[string]string
	err    error
}

// wait waits for the run to end and returns its sums.
func (r *digestRun) wait() (map[string]string, error) {
	<-r.done
	return r.sums, r.err
}

// stop cancels the run and waits for it to end.
func (r *digestRun) stop() {
	r.cancel()
	<-r.done
}

// digestsAhead starts reading the sums for set while the caller runs
// estimate_state, when the last call derived markers (estimate_state has
// no marker column, and the form is known to work): on two cores the
// database works on the sums beside estimate_state instead of after it.
// nil when it does not.
func (db *DB) digestsAhead(ctx context.Context, set jobSet) *digestRun {
	if db.q.quoteFields != nil {
		return nil
	}
	d := &db.digest
	d.mu.Lock()
	q, ahead := d.q, d.ahead && d.off == ""
	d.mu.Unlock()
	if q == nil || !ahead {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &digestRun{q: q, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.sums, r.err = db.readDigests(ctx, q, set)
	}()
	return r
}

// DerivedMarkers reports how JobStates derives markers: the form in use
// ("" before the first try, or when it does not), and why not.
func (db *DB) DerivedMarkers() (form, why string) {
	d := &db.digest
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.q != nil {
		return digestForms[d.form].name, ""
	}
	return "", d.off
}

// deriveMarkers sets the Marker of every job of states from the sums of
// its lines, using early's when it was started (digestsAhead). It leaves
// them "" when it cannot: the caller then reads the lines. err is for a
// failure of the moment (the database, a cancelled pass), not for a
// server or mapping that cannot derive.
func (db *DB) deriveMarkers(ctx context.Context, set jobSet, states map[string]JobState, early *digestRun) error {
	if early != nil && len(states) == 0 {
		early.stop()
	}
	if db.q.quoteFields != nil || len(states) == 0 {
		return nil
	}
	d := &db.digest
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.off != "" {
		if early != nil {
			early.stop()
		}
		return nil
	}
	if d.names == nil {
		names, err := db.lineColumns(ctx, set.list[0])
		if err != nil {
			return err
		}
		d.names = names
	}
	for d.form < len(digestForms) {
		if d.q == nil {
			q, err := newDigestQuery(db.q.lineItems, d.names, d.form)
			if err != nil {
				d.off = err.Error()
				return nil
			}
			d.q = &q
		}
		var sums map[string]string
		var err error
		if early != nil && early.q == d.q {
			sums, err = early.wait()
			d.aheadUsed++
		} else {
			if early != nil {
				early.stop()
			}
			sums, err = db.readDigests(ctx, d.q, set)
		}
		early = nil
		var me *mysql.MySQLError
		switch {
		case err == nil:
			d.ahead = true
			for job, st := range states {
				st.Marker = derivedMarkerPrefix + "0"
				if s, ok := sums[job]; ok {
					st.Marker = derivedMarkerPrefix + s
				}
				states[job] = st
			}
			return nil
		case ctx.Err() != nil || !errors.As(err, &me) && !errors.Is(err, errNullSums):
			return err
		}
		// The server refused this form: try the next.
		d.q, d.ahead = nil, false
		d.form++
		if d.form == len(digestForms) {
			d.off = fmt.Sprintf("the database refused every form of the statement (%v)", err)
		}
	}
	return nil
}

// lineColumns reads the names of line_items' columns, running it for one
// job.
func (db *DB) lineColumns(ctx context.Context, job string) ([]string, error) {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	rows, err := db.q.lineItems.query(ctx, db.x, map[string]any{ParamJobs: []string{job}})
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("read columns of %s: %w", db.q.lineItems.key, err)
	}
	if _, err := columnIndex(db.q.lineItems.key, names, lineColumnsRequired, lineColumnsOptional); err != nil {
		return nil, err
	}
	return names, rows.Close()
}

// newDigestQuery wraps line_items, whose columns are names, into the
// statement of digestForms[form].
func newDigestQuery(lineItems namedQuery, names []string, form int) (namedQuery, error) {
	col := func(n string) string { return "qs_l.`" + strings.ReplaceAll(n, "`", "``") + "`" }
	job := ""
	var vals, nulls []string
	for _, n := range names {
		if strings.EqualFold(n, "job") {
			job = col(n)
			continue
		}
		vals = append(vals, col(n))
		nulls = append(nulls, "ISNULL("+col(n)+")")
	}
	if job == "" || len(vals) == 0 {
		return namedQuery{}, errors.New("line_items returns no job column, or nothing beside it")
	}
	// CHAR(31) is a binary string, so every column is taken as its bytes:
	// no mix of character sets to refuse.
	line := "CONCAT_WS(CHAR(31), " + strings.Join(vals, ", ") + ", CONCAT(" + strings.Join(nulls, ", ") + "))"
	text := "SELECT " + job + " AS job, CONCAT(COUNT(*), '::', " + fmt.Sprintf(digestForms[form].sums, line) +
		") AS sums FROM (\n" + lineItems.text + "\n) AS qs_l GROUP BY " + job
	return compileJobsQuery(lineItems.key+" (sums)", text)
}

// readDigests runs q for the jobs of set and returns each job's sums:
// in two statements at once for more than digestSplit jobs.
func (db *DB) readDigests(ctx context.Context, q *namedQuery, set jobSet) (map[string]string, error) {
	sums := make(map[string]string, len(set.list))
	if len(set.list) <= digestSplit {
		return sums, db.readDigestPart(ctx, q, set, set.list, sums)
	}
	half := len(set.list) / 2
	other := make(map[string]string, len(set.list)-half)
	done := make(chan error, 1)
	go func() { done <- db.readDigestPart(ctx, q, set, set.list[half:], other) }()
	err := db.readDigestPart(ctx, q, set, set.list[:half], sums)
	if err2 := <-done; err == nil {
		err = err2
	}
	for job, s := range other {
		sums[job] = s
	}
	return sums, err
}

// readDigestPart runs q for jobs (of set) into sums.
func (db *DB) readDigestPart(ctx context.Context, q *namedQuery, set jobSet, jobs []string, sums map[string]string) error {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	rows, err := q.query(ctx, db.x, map[string]any{ParamJobs: jobs})
	if err != nil {
		return err
	}
	return scanRows(rows, q.key, func(vals []any) error {
		raw, ok := text(vals[0])
		if !ok {
			return fmt.Errorf("%s returned a row with a NULL job", q.key)
		}
		job, ok := set.resolve(raw)
		if !ok {
			return nil
		}
		s, ok := text(vals[1])
		if !ok {
			return errNullSums
		}
		if prev, dup := sums[job]; dup {
			// Two spellings of one job (a case-sensitive collation):
			// both count.
			s = prev + "+" + s
		}
		sums[job] = s
		return nil
	})
}
