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
// sums are read in two statements at once. From the second call on,
// estimate_state and the sums are one statement (two at once over many
// jobs), their rows one after the other:
//
//	SELECT qs_s.job, qs_s.final, NULL AS qs_lines_sums, 's' AS qs_part FROM (<estimate_state>) AS qs_s
//	UNION ALL
//	SELECT qs_d.job, NULL, qs_d.sums, 'd' FROM (<sums>) AS qs_d
//
// and quotesync matches each job's sums to its state as it does those of
// the two statements apart (not a JOIN: the database's collations could
// match spellings of a job otherwise). A server that refuses it (two
// explicit collations of the job, say) gets the two apart from then on;
// one that fails it for a moment (a timeout) gets them apart for that
// call, and from then on after three such calls in a row.
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

// digestForm is a per-line sum the database may compute; %[1]s in sums
// is one line as text.
type digestForm struct{ name, sums string }

// digestForms are the forms, best first.
var digestForms = [...]digestForm{
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
	forms []digestForm // digestForms (a test's own in its place)
	split int          // digestSplit (a test's own in its place)
	names []string     // line_items' columns, once read
	form  int          // index in forms
	q     *namedQuery
	off   string // why nothing is derived; "" while it may be
	// joined is estimate_state and the sums in one statement, built when
	// a call derived markers with q: the next calls run it instead of
	// the two (joinedStates). joinOff says why not, once it is off
	// (joinFailed).
	joined    *namedQuery
	joinOff   string
	joinFails int // calls in a row joined failed (joinFailed)
	// joinedUsed counts the calls answered by joined (for tests).
	joinedUsed int
	// hasFinal: estimate_state returns a final column, as the last
	// call that returned rows saw (finalKnown).
	hasFinal, finalKnown bool
}

// joinedQuery returns the statement of estimate_state and the sums in
// one when the last call derived markers and the server has not refused
// it: nil otherwise.
func (db *DB) joinedQuery() *namedQuery {
	if db.q.quoteFields != nil {
		return nil
	}
	d := &db.digest
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.off != "" || d.joinOff != "" {
		return nil
	}
	return d.joined
}

// newJoinedQuery puts estimate_state's rows (without a marker column) and
// sums' in one statement, told apart by qs_part: 's' for a state row,
// 'd' for a job's sums. The jobs are matched in quotesync, as the
// two statements' are (jobSet: exactly, else ignoring case), not by the
// database, whose collations may match them otherwise.
// Without a final column (hasFinal false) its rows carry NULL there.
func newJoinedQuery(estimateState, sums namedQuery, hasFinal bool) (namedQuery, error) {
	final := "qs_s.final"
	if !hasFinal {
		final = "NULL AS final"
	}
	text := "SELECT qs_s.job, " + final + ", NULL AS " + joinedSumsColumn + ", 's' AS " + joinedPartColumn + " FROM (\n" +
		estimateState.text + "\n) AS qs_s\nUNION ALL\nSELECT qs_d.job, NULL, qs_d.sums, 'd' FROM (\n" + sums.text + "\n) AS qs_d"
	return compileJobsQuery(estimateState.key+" (with the sums of "+sums.key+")", text)
}

// The columns newJoinedQuery adds to estimate_state's.
const (
	joinedSumsColumn = "qs_lines_sums"
	joinedPartColumn = "qs_part"
)

// joinedColumnsOpt are the optional columns of newJoinedQuery's rows.
var joinedColumnsOpt = []string{"final", joinedSumsColumn, joinedPartColumn}

// joinedStates runs q (newJoinedQuery) for the jobs of set, in two
// statements at once for more than its split of jobs, into JobStates'
// states and bad, each state's Marker derived from its sums as
// deriveMarkers does.
func (db *DB) joinedStates(ctx context.Context, q *namedQuery, set jobSet) (map[string]JobState, map[string]error, error) {
	parts := [][]string{set.list}
	if len(set.list) > db.digest.split {
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
	var wg sync.WaitGroup
	for i, jobs := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := answer{states: make(map[string]JobState, len(jobs)), bad: map[string]error{}, sums: make(map[string]string, len(jobs))}
			part := set
			if len(parts) > 1 {
				part = newJobSet(jobs)
			}
			a.err = db.scanJobRows(ctx, q, part, stateColumnsReq, joinedColumnsOpt, a.bad,
				func(job string, idx map[string]int, vals []any) error {
					if kind, _ := text(vals[idx[joinedPartColumn]]); kind == "d" {
						return addSums(a.sums, job, vals[idx[joinedSumsColumn]])
					}
					if st, ok := stateRow(job, idx, vals, a.states, a.bad); ok {
						a.states[job] = st
					}
					return nil
				})
			answers[i] = a
		}()
	}
	wg.Wait()
	states, bad := answers[0].states, answers[0].bad
	for _, a := range answers {
		if a.err != nil {
			return nil, nil, a.err
		}
	}
	for _, a := range answers[1:] {
		for job, st := range a.states {
			states[job] = st
		}
		for job, err := range a.bad {
			bad[job] = err
		}
	}
	for _, a := range answers {
		setMarkers(states, a.sums, a.states)
	}
	return states, bad, nil
}

// addSums adds a job's sums (a row's value v) to sums: NULL is a form
// the server does not really have (errNullSums); two spellings of one job
// (a case-sensitive collation) both count.
func addSums(sums map[string]string, job string, v any) error {
	s, ok := text(v)
	if !ok {
		return errNullSums
	}
	if prev, dup := sums[job]; dup {
		s = prev + "+" + s
	}
	sums[job] = s
	return nil
}

// setMarkers sets the derived Marker of each job of states that is in
// of (all of them when of is nil) from sums: "qs-lines:0" for a job
// without.
func setMarkers(states map[string]JobState, sums map[string]string, of map[string]JobState) {
	for job, st := range states {
		if of != nil {
			if _, ok := of[job]; !ok {
				continue
			}
		}
		st.Marker = derivedMarkerPrefix + "0"
		if s, ok := sums[job]; ok {
			st.Marker = derivedMarkerPrefix + s
		}
		states[job] = st
	}
}

// joinedFailuresOff is how many calls in a row the joined statement may
// fail for a reason other than a refusal (a timeout, a killed statement)
// before it is turned off: each such call runs the two apart.
const joinedFailuresOff = 3

// joinFailed notes that q failed with err (the call then runs the two
// statements apart): a refusal of the statement, or joinedFailuresOff
// failures in a row, turn it off from then on.
func (db *DB) joinFailed(q *namedQuery, err error) {
	d := &db.digest
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.joined != q {
		return
	}
	d.joinFails++
	if refusedStatement(err) || d.joinFails >= joinedFailuresOff {
		d.joinOff = err.Error()
	}
}

// joinServed notes that the joined statement answered a call.
func (db *DB) joinServed() {
	d := &db.digest
	d.mu.Lock()
	d.joinFails = 0
	d.joinedUsed++
	d.mu.Unlock()
}

// refusedStatement reports whether err is the server refusing a statement
// as written (its syntax, its columns, a mix of collations, a function it
// lacks), not a failure of the moment.
func refusedStatement(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return errors.Is(err, errNullSums)
	}
	switch me.Number {
	case 1054, // unknown column
		1060,       // duplicate column name
		1064,       // syntax
		1140, 1055, // GROUP BY rules
		1222,             // UNION of different numbers of columns
		1235,             // not supported by this version
		1248,             // derived table without an alias
		1267, 1270, 1271, // mix of collations
		1305, 1630, // no such function
		1582, 1583, 1584: // wrong arguments to a function
		return true
	}
	return false
}

// DerivedMarkers reports how JobStates derives markers: the form in use
// ("" before the first try, or when it does not), and why not.
func (db *DB) DerivedMarkers() (form, why string) {
	d := &db.digest
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.q != nil {
		return d.forms[d.form].name, ""
	}
	return "", d.off
}

// deriveMarkers sets the Marker of every job of states from the sums of
// its lines. It leaves them "" when it cannot: the caller then reads the
// lines. err is for a failure of the moment (the database, a cancelled
// pass), not for a server or mapping that cannot derive.
func (db *DB) deriveMarkers(ctx context.Context, set jobSet, states map[string]JobState) error {
	if db.q.quoteFields != nil || len(states) == 0 {
		return nil
	}
	d := &db.digest
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.off != "" {
		return nil
	}
	if d.names == nil {
		names, err := db.lineColumns(ctx, set.list[0])
		if err != nil {
			return err
		}
		d.names = names
	}
	for d.form < len(d.forms) {
		if d.q == nil {
			q, err := newDigestQuery(db.q.lineItems, d.names, d.forms[d.form])
			if err != nil {
				d.off = err.Error()
				return nil
			}
			d.q = &q
		}
		sums, err := db.readDigests(ctx, d.q, set)
		var me *mysql.MySQLError
		switch {
		case err == nil:
			if d.joined == nil && d.joinOff == "" && d.finalKnown {
				if j, jerr := newJoinedQuery(db.q.estimateState, *d.q, d.hasFinal); jerr != nil {
					d.joinOff = jerr.Error()
				} else {
					d.joined = &j
				}
			}
			setMarkers(states, sums, nil)
			return nil
		case ctx.Err() != nil || !errors.As(err, &me) && !errors.Is(err, errNullSums):
			return err
		}
		// The server refused this form: try the next.
		d.q, d.joined = nil, nil
		d.form++
		if d.form == len(d.forms) {
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
// statement of form.
func newDigestQuery(lineItems namedQuery, names []string, form digestForm) (namedQuery, error) {
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
	text := "SELECT " + job + " AS job, CONCAT(COUNT(*), '::', " + fmt.Sprintf(form.sums, line) +
		") AS sums FROM (\n" + lineItems.text + "\n) AS qs_l GROUP BY " + job
	return compileJobsQuery(lineItems.key+" (sums)", text)
}

// readDigests runs q for the jobs of set and returns each job's sums:
// in two statements at once for more than its split of jobs.
func (db *DB) readDigests(ctx context.Context, q *namedQuery, set jobSet) (map[string]string, error) {
	sums := make(map[string]string, len(set.list))
	if len(set.list) <= db.digest.split {
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
		return addSums(sums, job, vals[1])
	})
}
