package store_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// TestReadRequestsEveryField writes rows with every column set, NULL and
// empty in turn (more rows than a read's first chunks hold), and reads
// them back through OpenRequests, ListRequests and Request: every field as
// written, times in UTC, texts that share nothing with the next row's,
// in order.
func TestReadRequestsEveryField(t *testing.T) {
	db, d := newStore(t)
	ctx := testContext(t)
	const n = 5000
	base := time.Date(2026, 11, 25, 6, 45, 12, 123456000, time.UTC)
	at := func(i, k int) time.Time {
		return base.Add(time.Duration(i)*time.Second + time.Duration(k)*time.Microsecond)
	}
	phases := []store.Phase{phWaiting, phReserved, phAccepted, phDrafted}
	want := make([]store.Request, n)
	for i := range want {
		r := store.Request{Insurer: shopdb.DefaultInsurer,
			RequestID:   fmt.Sprintf("r-%05d", i),
			ClaimNumber: fmt.Sprintf("CLM-%d-ÄÖÜ-日本", i),
			Phase:       phases[i%len(phases)],
			Attempts:    i % 5,
			CreatedAt:   at(i/2, 0), // two rows a second: the id breaks the tie
			UpdatedAt:   at(i, 1),
			Version:     int64(i) + 1,
		}
		if i%7 != 0 {
			r.JobNumber = fmt.Sprintf("RO-%d", 100000+i)
		}
		if i%3 == 0 {
			r.ResumePhase, r.Reason, r.Intent = phAccepted, store.Reason(fmt.Sprintf("reason-%d", i%4)), "push"
		}
		r.JobCreated, r.SupplementNeeded = i%2 == 0, i%3 == 1
		if i%5 == 0 {
			r.ReleasedJob = fmt.Sprintf("RO-%d", i)
		}
		if i%4 != 0 {
			r.PushedHash = fmt.Sprintf("%064x", i*7919)
			r.PushedMarker = fmt.Sprintf("DRAFT|%s|%d|é", at(i, 2).Format("2006-01-02 15:04:05.000000"), i%30)
			r.PushedAt = at(i, 3)
		}
		switch i % 11 {
		case 0:
			r.LastError = strings.Repeat("ünïcödé error; ", 100) + fmt.Sprint(i)
		case 1:
			r.NextAttemptAt = at(i, 4)
		}
		if i%6 == 0 {
			r.Expiry, r.BookingDate, r.SubmittedAt = at(i, 5), at(i, 6), at(i, 7)
		}
		switch i {
		case 1: // the ends of DATETIME's range
			r.NextAttemptAt = time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)
			r.Expiry = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
		case 2: // before 1970
			r.BookingDate = time.Date(1969, 12, 31, 23, 59, 59, 1000, time.UTC)
		}
		want[i] = r
	}
	nullable := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	nullTime := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t
	}
	for start := 0; start < n; start += 500 {
		var q strings.Builder
		q.WriteString(`INSERT INTO quotesync_requests (insurer, request_id, claim_number, job_number, phase, resume_phase, reason, intent,
job_created, released_job, pushed_hash, pushed_marker, supplement_needed, attempts, next_attempt_at, last_error, expiry,
booking_date, request_json, created_at, updated_at, pushed_at, submitted_at, version) VALUES `)
		var args []any
		for i := start; i < start+500; i++ {
			r := want[i]
			if i > start {
				q.WriteString(",")
			}
			q.WriteString("('default',?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
			var reqJSON any // NULL, empty and a document in turn
			switch i % 3 {
			case 1:
				reqJSON = ""
			case 2:
				reqJSON = fmt.Sprintf(`{"id":%q,"claim":"ÄÖÜ"}`, r.RequestID)
			}
			lastErr := nullable(r.LastError)
			if i%11 == 2 {
				lastErr = "" // empty, not NULL
			}
			args = append(args, r.RequestID, r.ClaimNumber, nullable(r.JobNumber), r.Phase, r.ResumePhase, r.Reason, r.Intent,
				r.JobCreated, r.ReleasedJob, r.PushedHash, r.PushedMarker, r.SupplementNeeded, r.Attempts, nullTime(r.NextAttemptAt),
				lastErr, nullTime(r.Expiry), nullTime(r.BookingDate), reqJSON, r.CreatedAt, r.UpdatedAt,
				nullTime(r.PushedAt), nullTime(r.SubmittedAt), r.Version)
		}
		if _, err := d.SQL.ExecContext(ctx, q.String(), args...); err != nil {
			t.Fatal(err)
		}
	}
	withJSON := func(i int) store.Request {
		r := want[i]
		if i%3 == 2 {
			r.RequestJSON = json.RawMessage(fmt.Sprintf(`{"id":%q,"claim":"ÄÖÜ"}`, r.RequestID))
		}
		return r
	}
	check := func(what string, got []store.Request, want func(i int) store.Request, order func(k int) int) {
		t.Helper()
		if len(got) != n {
			t.Fatalf("%s: %d rows, want %d", what, len(got), n)
		}
		for k := range got {
			w := want(order(k))
			if !reflect.DeepEqual(got[k], w) {
				t.Fatalf("%s: row %d is\n%#v\nwant\n%#v", what, k, got[k], w)
			}
		}
	}
	open, err := db.OpenRequests(ctx, store.OpenQuery{Phases: phases})
	if err != nil {
		t.Fatal(err)
	}
	// Without their RequestJSON, oldest first.
	check("OpenRequests", open, func(i int) store.Request { return want[i] }, func(k int) int { return k })
	// With it, newest first.
	list, err := db.ListRequests(ctx, store.ListQuery{})
	if err != nil {
		t.Fatal(err)
	}
	check("ListRequests", list, withJSON, func(k int) int { return n - 1 - k })
	for _, i := range []int{0, 1, 2, 7, 11, 4999} {
		got, err := db.Request(ctx, want[i].RequestID)
		if err != nil {
			t.Fatal(err)
		}
		if w := withJSON(i); !reflect.DeepEqual(got, w) {
			t.Errorf("Request(%s) is\n%#v\nwant\n%#v", w.RequestID, got, w)
		}
	}
	// A NULL where the table's definition allows none is an error that
	// names the column.
	if _, err := d.SQL.ExecContext(ctx, "ALTER TABLE quotesync_requests MODIFY pushed_marker VARCHAR(255) NULL"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.SQL.ExecContext(ctx, "UPDATE quotesync_requests SET pushed_marker = NULL WHERE request_id = 'r-00003'"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.OpenRequests(ctx, store.OpenQuery{Phases: phases}); err == nil || !strings.Contains(err.Error(), "pushed_marker") {
		t.Errorf("OpenRequests over a NULL pushed_marker: %v, want an error that names the column", err)
	}
}
