package shopdb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/go-sql-driver/mysql"
)

// Derived change markers. Without a marker column in estimate_state, the
// only way to tell that a job's lines did not change is to read them all
// and hash them: for 10,000 jobs of 30 lines, 300,000 rows through the
// driver every pass. So when estimate_state has no marker, JobStates
// derives one: the database sums a checksum of every line line_items
// returns, per job (line_items as a derived table), and only the sums
// cross the wire, in the statement of estimate_state itself, their rows
// after the states':
//
//	SELECT CAST(qs_s.job AS BINARY) AS job, qs_s.final, NULL AS qs_lines_sums, 's' AS qs_part FROM (<estimate_state>) AS qs_s
//	UNION ALL
//	SELECT CAST(qs_d.job AS BINARY), NULL, qs_d.sums, 'd' FROM (
//	  SELECT l.job, CONCAT(COUNT(*), '::', SUM(CRC32(<line>))) AS sums
//	  FROM (<line_items>) AS l GROUP BY l.job) AS qs_d
//
// where <line> is every column but job as text, joined by the byte 31,
// and a digit per column for whether it is NULL. quotesync matches each
// job's sums to its state as it matches any row's job (jobSet: exactly,
// else ignoring case), not the database, whose collations could match
// spellings of a job otherwise; as bytes, the two jobs never mix
// collations. Over many jobs the statement is sent twice at once, for
// half the jobs each: the database works on each on a core of its own
// (BenchmarkIdlePass10k, case no-marker). The first call needs the
// columns of estimate_state (known when ReadFinalColumn ran; else the
// call runs estimate_state alone first) and of line_items (one statement
// for one job). A server without CRC32 gets 64 bits of an MD5 instead; a
// server that refuses both (or a mapping the derived table does not fit)
// gets no derived marker, and its lines are read and hashed every pass.
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

// digestSplit is how many jobs make the joined statement worth sending
// twice at once, for half the jobs each.
const digestSplit = 2000

// errNullSums is a form the server runs but answers NULL to (a function
// it does not really have): refused like one it does not run.
var errNullSums = errors.New("the sums are NULL")

// lineDigest is what a DB learned of estimate_state's columns and how it
// derives markers.
type lineDigest struct {
	mu    sync.Mutex
	forms []digestForm // digestForms (a test's own in its place)
	split int          // digestSplit (a test's own in its place)
	// known: estimate_state's columns were seen; hasFinal and hasMarker
	// say which it returns.
	known, hasFinal, hasMarker bool
	form                       int         // index in forms of joined's
	joined                     *namedQuery // estimate_state with the sums, once built
	off                        string      // why nothing is derived; "" while it may be
}

// sawColumns notes estimate_state's columns (idx); it reports whether
// this is the first time and markers are to be derived (the caller then
// runs the joined statement).
func (db *DB) sawColumns(idx map[string]int) bool {
	d := &db.digest
	d.mu.Lock()
	defer d.mu.Unlock()
	first := !d.known
	_, d.hasFinal = idx["final"]
	_, d.hasMarker = idx["marker"]
	d.known = true
	return first && db.derives()
}

// derives reports whether markers are derived (d.mu held).
func (db *DB) derives() bool {
	d := &db.digest
	return d.known && !d.hasMarker && d.off == "" && db.q.quoteFields == nil
}

// statesQuery returns the statement JobStates runs: estimate_state, or,
// when markers are derived, it joined with the sums, built at the first
// call (which reads line_items' columns, running it for one job). err is
// for a failure of the moment.
func (db *DB) statesQuery(ctx context.Context) (*namedQuery, error) {
	d := &db.digest
	d.mu.Lock()
	defer d.mu.Unlock()
	if !db.derives() {
		return &db.q.estimateState, nil
	}
	if d.joined != nil {
		return d.joined, nil
	}
	names, err := db.lineColumns(ctx)
	if err != nil {
		return nil, err
	}
	q, err := newJoinedQuery(db.q.estimateState, db.q.lineItems, names, d.forms[d.form], d.hasFinal)
	if err != nil {
		d.off = err.Error()
		return &db.q.estimateState, nil
	}
	d.joined = &q
	return d.joined, nil
}

// refused notes that the server refused q, the joined statement (err):
// the next form is built at the next call, or, when none is left, nothing
// is derived from then on.
func (db *DB) refused(q *namedQuery, err error) {
	d := &db.digest
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.joined != q {
		return
	}
	d.joined = nil
	if d.form++; d.form == len(d.forms) {
		d.off = fmt.Sprintf("the database refused every form of the statement (%v)", err)
	}
}

// The columns newJoinedQuery adds to estimate_state's.
const (
	joinedSumsColumn = "qs_lines_sums"
	joinedPartColumn = "qs_part"
)

// joinedColumnsOpt are the optional columns of newJoinedQuery's rows.
var joinedColumnsOpt = []string{"final", joinedSumsColumn, joinedPartColumn}

// newJoinedQuery puts estimate_state's rows (without a marker column,
// with a final column when hasFinal) and the sums of form of line_items
// (whose columns are names) in one statement, told apart by qs_part: 's'
// for a state row, 'd' for a job's sums.
func newJoinedQuery(estimateState, lineItems namedQuery, names []string, form digestForm, hasFinal bool) (namedQuery, error) {
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
	sums := "SELECT " + job + " AS job, CONCAT(COUNT(*), '::', " + fmt.Sprintf(form.sums, line) +
		") AS sums FROM (\n" + lineItems.text + "\n) AS qs_l GROUP BY " + job
	final := "qs_s.final"
	if !hasFinal {
		final = "NULL AS final"
	}
	text := "SELECT CAST(qs_s.job AS BINARY) AS job, " + final + ", NULL AS " + joinedSumsColumn + ", 's' AS " + joinedPartColumn +
		" FROM (\n" + estimateState.text + "\n) AS qs_s\nUNION ALL\nSELECT CAST(qs_d.job AS BINARY), NULL, qs_d.sums, 'd' FROM (\n" +
		sums + "\n) AS qs_d"
	return compileJobsQuery(estimateState.key+" (with the "+form.name+" sums of "+lineItems.key+")", text)
}

// lineColumns reads line_items' column names, running it for one job.
func (db *DB) lineColumns(ctx context.Context) ([]string, error) {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	rows, names, err := db.q.lineItems.queryColumns(ctx, db.x, map[string]any{ParamJobs: []string{probe}})
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	if _, err := columnIndex(db.q.lineItems.key, names, lineColumnsRequired, lineColumnsOptional); err != nil {
		return nil, err
	}
	return names, rows.Close()
}

// addSums adds a job's sums (a row's value v) to sums: NULL is a form
// the server does not really have (errNullSums); two spellings of one job
// (a case-sensitive collation) both count, in sorted order: the rows come
// in no order the server promises, and the marker must not flip with it.
func addSums(sums map[string]string, job string, v any) error {
	s, ok := text(v)
	if !ok {
		return errNullSums
	}
	if prev, dup := sums[job]; dup {
		parts := append(strings.Split(prev, "+"), s)
		slices.Sort(parts)
		s = strings.Join(parts, "+")
	}
	sums[job] = s
	return nil
}

// setMarkers sets the derived Marker of each job of states that is in
// of from sums: "qs-lines:0" for a job without.
func setMarkers(states map[string]JobState, sums map[string]string, of map[string]JobState) {
	for job := range of {
		st := states[job]
		st.Marker = derivedMarkerPrefix + "0"
		if s, ok := sums[job]; ok {
			st.Marker = derivedMarkerPrefix + s
		}
		states[job] = st
	}
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
// ("" before the first call, or when it does not), and why not.
func (db *DB) DerivedMarkers() (form, why string) {
	d := &db.digest
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.joined != nil {
		return d.forms[d.form].name, ""
	}
	return "", d.off
}
