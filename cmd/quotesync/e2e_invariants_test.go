package main

// The invariants every end-to-end, crash and fault test checks, read from
// the shop database, quotesync's state and the emulator's history.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// e2eItem is one quote item as text, the way both sides are compared:
// amounts as their exact decimal text; OnReport "true", "false" or ""
// (absent); Meta the metadata as key=value, ordered by key.
type e2eItem struct {
	ID, Order, Type, Description, PartNumber, Quantity, Price, Total string
	Markup, OnReport, Meta                                           string
}

// e2eShopJob is one job as the shop holds it, its live lines turned into
// the items the remote must hold (totals the shop left NULL computed by
// MariaDB: ROUND(qty * unit_price, 2)).
type e2eShopJob struct {
	Job, Claim, Booking string
	Final               bool
	Items               []e2eItem
}

// e2eQuerier is what the invariant reads run on: the pool, or one
// read-only transaction so that several reads see one snapshot.
type e2eQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// shopJobs reads every job of the shop with its live lines.
func (e *e2eEnv) shopJobs(q e2eQuerier) (map[string]*e2eShopJob, error) {
	rows, err := q.QueryContext(e.ctx(), `SELECT j.job_no, COALESCE(j.claim_number, ''),
  COALESCE(DATE_FORMAT(j.booking_date, '%Y-%m-%d'), ''), e.status,
  l.line_id, l.line_no, l.op_code, l.description, l.part_no, l.qty, l.unit_price,
  COALESCE(l.line_total, ROUND(l.qty * l.unit_price, 2)), l.markup, l.on_report, l.supplier
FROM jobs j JOIN estimates e ON e.job_id = j.job_id
LEFT JOIN estimate_lines l ON l.estimate_id = e.estimate_id AND l.deleted = 0
ORDER BY j.job_no, l.line_no, l.line_id`)
	if err != nil {
		return nil, fmt.Errorf("read the shop's jobs: %w", err)
	}
	defer rows.Close()
	types := sampleshop.WorkTypes()
	jobs := make(map[string]*e2eShopJob)
	for rows.Next() {
		var job, claim, booking, status string
		var id, no, code, desc, part, qty, price, total, markup, onReport, supplier *string
		if err := rows.Scan(&job, &claim, &booking, &status, &id, &no, &code, &desc, &part, &qty, &price, &total,
			&markup, &onReport, &supplier); err != nil {
			return nil, fmt.Errorf("read the shop's jobs: %w", err)
		}
		j := jobs[job]
		if j == nil {
			j = &e2eShopJob{Job: job, Claim: claim, Booking: booking, Final: status == "FINAL"}
			jobs[job] = j
		}
		if id != nil {
			it := e2eItem{ID: *id, Order: *no, Type: types[e2eDeref(code)], Description: e2eDeref(desc),
				PartNumber: e2eDeref(part), Quantity: e2eDeref(qty), Price: e2eDeref(price), Total: e2eDeref(total),
				Markup: e2eDeref(markup)}
			switch e2eDeref(onReport) {
			case "1":
				it.OnReport = "true"
			case "0":
				it.OnReport = "false"
			}
			if v := strings.TrimSpace(e2eDeref(supplier)); v != "" {
				it.Meta = "supplier=" + v
			}
			j.Items = append(j.Items, it)
		}
	}
	return jobs, rows.Err()
}

func e2eDeref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// e2eRow is quotesync's state row of one request.
type e2eRow struct {
	Request, Claim, Job, Phase, LastError string
	Reason                                string
	Attempts                              int
	Supplement                            bool
}

// stateRows reads quotesync's state table.
func (e *e2eEnv) stateRows(q e2eQuerier) (map[string]e2eRow, error) {
	out := make(map[string]e2eRow)
	rows, err := q.QueryContext(e.ctx(), `SELECT request_id, claim_number, COALESCE(job_number, ''), phase,
  COALESCE(last_error, ''), attempts, supplement_needed, reason FROM quotesync_requests`)
	if err != nil {
		none, err := e.noStateYet(q, err)
		if none {
			return out, nil
		}
		return nil, fmt.Errorf("read quotesync's state: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r e2eRow
		if err := rows.Scan(&r.Request, &r.Claim, &r.Job, &r.Phase, &r.LastError, &r.Attempts, &r.Supplement, &r.Reason); err != nil {
			return nil, fmt.Errorf("read quotesync's state: %w", err)
		}
		out[r.Request] = r
	}
	return out, rows.Err()
}

// e2eBody is a quote body as the emulator stores it; numbers keep their
// text.
type e2eBody struct {
	Type        string `json:"type"`
	Status      string `json:"status"`
	ReferenceID string `json:"referenceId"`
	Rates       []struct {
		Type string      `json:"type"`
		Rate json.Number `json:"rate"`
	} `json:"rates"`
	Items []struct {
		ID          json.RawMessage   `json:"id"`
		Order       json.Number       `json:"order"`
		Type        string            `json:"type"`
		Description string            `json:"description"`
		PartNumber  string            `json:"partNumber"`
		Quantity    json.Number       `json:"quantity"`
		Price       json.Number       `json:"price"`
		Total       json.Number       `json:"total"`
		Metadata    map[string]string `json:"metadata"`
		Markup      json.Number       `json:"markup"`
		IsOnReport  *bool             `json:"isOnReport"`
	} `json:"items"`
}

// e2eBodyDiff compares a stored quote body with the shop's job: type, the
// job number as referenceId, the configured rates and every item, amounts
// as exact text. It returns "" when they agree.
func e2eBodyDiff(raw json.RawMessage, j *e2eShopJob) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var b e2eBody
	if err := dec.Decode(&b); err != nil {
		return fmt.Sprintf("undecodable body %s: %v", raw, err)
	}
	type head struct{ Type, ReferenceID, Rates string }
	wantRates := make([]string, 0, len(e2eRates))
	for _, k := range slices.Sorted(maps.Keys(e2eRates)) {
		wantRates = append(wantRates, k+"="+e2eRates[k])
	}
	gotRates := make([]string, 0, len(b.Rates))
	for _, r := range b.Rates {
		gotRates = append(gotRates, r.Type+"="+r.Rate.String())
	}
	got := make([]e2eItem, 0, len(b.Items))
	for _, it := range b.Items {
		var id string
		if err := json.Unmarshal(it.ID, &id); err != nil {
			id = "not a string id: " + string(it.ID)
		}
		var onReport string
		if it.IsOnReport != nil {
			onReport = fmt.Sprint(*it.IsOnReport)
		}
		meta := make([]string, 0, len(it.Metadata))
		for _, k := range slices.Sorted(maps.Keys(it.Metadata)) {
			meta = append(meta, k+"="+it.Metadata[k])
		}
		got = append(got, e2eItem{ID: id, Order: it.Order.String(), Type: it.Type, Description: it.Description,
			PartNumber: it.PartNumber, Quantity: it.Quantity.String(), Price: it.Price.String(), Total: it.Total.String(),
			Markup: it.Markup.String(), OnReport: onReport, Meta: strings.Join(meta, ",")})
	}
	want := j.Items
	if want == nil {
		want = []e2eItem{}
	}
	return cmp.Diff(
		struct {
			H     head
			Items []e2eItem
		}{head{"Estimate", j.Job, strings.Join(wantRates, ",")}, want},
		struct {
			H     head
			Items []e2eItem
		}{head{b.Type, b.ReferenceID, strings.Join(gotRates, ",")}, got})
}

// snapshot reads the shop's jobs and quotesync's state rows in one
// read-only snapshot. A killed binary's last COMMIT can still land on the
// server after the kill: two reads at different moments could see its job
// without its row (or the reverse). A table created after the snapshot
// began (MariaDB error 1412) retries the read.
func (e *e2eEnv) snapshot() (jobs map[string]*e2eShopJob, rows map[string]e2eRow, err error) {
	err = e2eRetrySnapshot(func() (err error) {
		jobs, rows, err = e.snapshotOnce()
		return err
	})
	return jobs, rows, err
}

// e2eRetrySnapshot runs read until it does not fail with MariaDB's 1412
// (a table created or changed after the snapshot began: a killed binary's
// migration can still run on the server), a second at most.
func e2eRetrySnapshot(read func() error) error {
	for try := 0; ; try++ {
		err := read()
		var me *mysql.MySQLError
		if err == nil || try == 20 || !errors.As(err, &me) || me.Number != 1412 {
			return err
		}
		time.Sleep(50 * time.Millisecond) // let the migration end
	}
}

// noStateYet reports whether err, from reading quotesync's state, only
// means that there is none yet: the binary was killed before its first
// migration (no table, 1146), or during the first migrations, before the
// one that adds a column read (1054), when no row can have been written.
// It returns err when it does not (or the error of the count, which may
// be a 1412 for e2eRetrySnapshot).
func (e *e2eEnv) noStateYet(q e2eQuerier, err error) (bool, error) {
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &me) && me.Number == 1146:
		return true, nil
	case errors.As(err, &me) && me.Number == 1054:
		rows, cerr := q.QueryContext(e.ctx(), "SELECT COUNT(*) FROM quotesync_requests")
		if cerr != nil {
			return false, fmt.Errorf("count quotesync's rows: %w", cerr)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			if cerr := rows.Scan(&n); cerr != nil {
				return false, cerr
			}
		}
		if cerr := rows.Err(); cerr != nil {
			return false, fmt.Errorf("count quotesync's rows: %w", cerr)
		}
		return n == 0, err
	}
	return false, err
}

func (e *e2eEnv) snapshotOnce() (map[string]*e2eShopJob, map[string]e2eRow, error) {
	tx, err := e.sql.BeginTx(e.ctx(), &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, nil, fmt.Errorf("begin the snapshot read: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	jobs, err := e.shopJobs(tx)
	if err != nil {
		return nil, nil, err
	}
	rows, err := e.stateRows(tx)
	return jobs, rows, err
}

// invariants returns every broken invariant, each a sentence. The safety
// invariants hold at every moment, even right after a SIGKILL: no request
// accepted twice; no job number used for two requests (on the remote, in
// quotesync's state, and every job number is the shop's job of the
// request's claim); a request accepted on the remote has its state row
// with that job number (intent before effect); no quote submitted twice;
// every Submitted quote holds exactly the shop's final lines; a submitted
// state row has a Submitted quote. With converged, also what must hold
// once the daemon has caught up: every request accepted; every final
// estimate Submitted; every other job with lines has a Draft equal to
// its current lines; state rows agree with the remote (submitted ⇔
// Submitted, drafted ⇔ a Draft) and carry no error.
func (e *e2eEnv) invariants(converged bool) []string {
	// The remote first, then the shop and quotesync's state in one
	// snapshot: a killed binary's last COMMIT can still land on the server
	// after the kill, and reading the two tables at different moments would
	// see its job without its row (or the reverse). Read in this order,
	// whatever the remote holds was committed locally before it was sent.
	st := e.Emu.State()
	jobs, rows, err := e.snapshot()
	if err != nil {
		return []string{err.Error()}
	}
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }

	accepts, submits := e2eHistoryCounts(st)
	for _, id := range slices.Sorted(maps.Keys(accepts)) {
		if n := accepts[id]; n > 1 {
			bad("request %s accepted %d times", id, n)
		}
	}
	for _, job := range slices.Sorted(maps.Keys(submits)) {
		if n := submits[job]; n > 1 {
			bad("quote of job %s submitted %d times", job, n)
		}
	}

	byRef := map[string]string{}
	for _, r := range st.Requests {
		row, tracked := rows[r.ID]
		if r.ReferenceID == "" {
			if converged {
				bad("request %s (claim %s) is still %s on the remote", r.ID, r.ClaimNumber, r.Status)
			}
			continue
		}
		if other, dup := byRef[r.ReferenceID]; dup {
			bad("job number %s used for requests %s and %s", r.ReferenceID, other, r.ID)
		}
		byRef[r.ReferenceID] = r.ID
		if j := jobs[r.ReferenceID]; j == nil || j.Claim != r.ClaimNumber {
			bad("request %s (claim %s) accepted with %s, which is not the shop's job of that claim", r.ID, r.ClaimNumber, r.ReferenceID)
		}
		switch {
		case !tracked:
			bad("request %s accepted on the remote with %s but quotesync has no row for it", r.ID, r.ReferenceID)
		case row.Job != r.ReferenceID:
			bad("request %s accepted with %s but quotesync's row has job %q", r.ID, r.ReferenceID, row.Job)
		}
	}
	byJob := map[string]string{}
	for _, id := range slices.Sorted(maps.Keys(rows)) {
		row := rows[id]
		if row.Job == "" {
			continue
		}
		if other, dup := byJob[row.Job]; dup {
			bad("quotesync's rows %s and %s share job %s", other, id, row.Job)
		}
		byJob[row.Job] = id
		if j := jobs[row.Job]; j == nil || j.Claim != row.Claim {
			bad("quotesync's row %s (claim %s) holds job %s, which is not the shop's job of that claim", id, row.Claim, row.Job)
		}
	}

	for _, rj := range st.Jobs {
		q, hasQuote := rj.Quote("Estimate")
		if len(rj.Quotes) > 1 || (len(rj.Quotes) == 1 && !hasQuote) {
			bad("job %s holds %d quotes; want one Estimate", rj.ID, len(rj.Quotes))
		}
		row := rows[rj.RequestID]
		j := jobs[rj.ID]
		if j == nil {
			continue // reported above
		}
		if q.SubmitCount > 1 {
			bad("quote of job %s has SubmitCount %d", rj.ID, q.SubmitCount)
		}
		submitted := hasQuote && q.Status == emulator.StatusSubmitted
		if submitted && !row.Supplement {
			if !j.Final {
				bad("job %s is Submitted on the remote but its estimate is not final in the shop", rj.ID)
			}
			if d := e2eBodyDiff(q.Body, j); d != "" {
				bad("job %s was submitted with content other than the shop's final lines (-shop +remote):\n%s", rj.ID, d)
			}
		}
		if row.Phase == "submitted" && !submitted {
			bad("quotesync's row %s is submitted but the remote quote of job %s is not Submitted", row.Request, rj.ID)
		}
		if !converged {
			continue
		}
		switch {
		case row.Phase == "accept_unknown" && row.Reason == "accept_lost" && len(j.Items) == 0 && !j.Final:
			// The accept's answer was lost (a dropped database link after
			// the call landed, then a repeated accept refused as already
			// accepted): only the first Draft push confirms it, and this
			// job has no lines to push yet. Right, and documented.
		case row.Phase != "accepted" && row.Phase != "drafted" && row.Phase != "submitted":
			bad("request %s (job %s) is %s in quotesync's state, want accepted, drafted or submitted", row.Request, rj.ID, row.Phase)
		case row.Attempts != 0 || row.LastError != "":
			bad("request %s (job %s) has %d failed attempts: %s", row.Request, rj.ID, row.Attempts, row.LastError)
		case j.Final && (!submitted || row.Phase != "submitted"):
			bad("job %s is final in the shop; remote submitted=%v, quotesync phase %s", rj.ID, submitted, row.Phase)
		case !j.Final && submitted:
			bad("job %s is Submitted but not final in the shop", rj.ID)
		case !j.Final && len(j.Items) > 0 && (!hasQuote || row.Phase != "drafted"):
			bad("job %s has %d lines; remote has a quote: %v, quotesync phase %s; want a Draft", rj.ID, len(j.Items), hasQuote, row.Phase)
		case !j.Final && hasQuote:
			if d := e2eBodyDiff(q.Body, j); d != "" {
				bad("the Draft of job %s differs from the shop's lines (-shop +remote):\n%s", rj.ID, d)
			}
		}
	}
	return probs
}

// e2eHistoryCounts counts a service's accepts by request id and its
// status changes by job.
func e2eHistoryCounts(st emulator.State) (accepts, submits map[string]int) {
	accepts, submits = map[string]int{}, map[string]int{}
	for _, h := range st.History {
		switch h.Kind {
		case emulator.HistoryAccept:
			accepts[h.RequestID]++
		case emulator.HistoryStatusChange:
			submits[h.JobID]++
		}
	}
	return accepts, submits
}

// checkInvariants fails the test with every broken invariant; what tells
// how to replay a randomized run.
func (e *e2eEnv) checkInvariants(converged bool, what string) {
	e.tb.Helper()
	if probs := e.invariants(converged); len(probs) > 0 {
		e.tb.Errorf("%s: %d invariants broken:\n- %s", what, len(probs), strings.Join(probs, "\n- "))
	}
}

// converge runs passes until one makes no remote write and the converged
// invariants hold; it returns the passes it ran and what is still broken
// after maxPasses.
func (e *e2eEnv) converge(maxPasses int) (int, []string) {
	return e2eConverge(maxPasses, func() (e2eResult, int) {
		before := e.Emu.Calls()
		res := e.once()
		return res, e2eWrites(e2eCallsDiff(before, e.Emu.Calls()))
	}, func() []string { return e.invariants(true) })
}

// e2eConverge runs pass (a run of once, returning the remote writes it
// made) until one succeeds without a write and check finds nothing
// broken; it returns the passes it ran and what is still broken after
// maxPasses.
func e2eConverge(maxPasses int, pass func() (e2eResult, int), check func() []string) (int, []string) {
	var probs []string
	for i := 1; i <= maxPasses; i++ {
		res, writes := pass()
		if res.Code != 0 {
			probs = []string{fmt.Sprintf("pass %d: exit %d: %s", i, res.Code, e2eTail(res.Output, 5))}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		probs = check()
		if len(probs) == 0 && writes == 0 {
			return i, nil
		}
		time.Sleep(50 * time.Millisecond) // let a retry backoff run out
	}
	return maxPasses, probs
}
