package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
)

// BenchmarkLoad10kJobs measures what a pass reads for 10,000 tracked jobs
// of 30 lines each: the idle part (OpenRequests + JobStates, all a pass
// reads when nothing changed) and loading every job's lines (Lines, the
// worst case: everything changed). Reported per op:
// round trips and wall time of each part.
//
//	go test -run '^$' -bench Load10kJobs -benchtime 5x ./shopdb/
func BenchmarkLoad10kJobs(b *testing.B) {
	const jobs, linesPerJob = 10000, 30
	db, d := newStore(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := d.Shop().GenerateJobs(ctx, jobs, linesPerJob); err != nil {
		b.Fatal(err)
	}
	_, err := d.SQL.ExecContext(ctx, `INSERT INTO quotesync_requests
(insurer, request_id, claim_number, job_number, phase, pushed_hash, created_at, updated_at, version)
SELECT 'default', CONCAT('gen-', job_id), claim_number, job_no, 'drafted', 'sha256:x', NOW(6), NOW(6), 1
FROM jobs WHERE claim_number LIKE 'GEN-%'`)
	if err != nil {
		b.Fatal(err)
	}
	var idleTrips, lineTrips int64
	var idleTime, lineTime time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n, start := trips(db), time.Now()
		open, err := db.OpenRequests(ctx, store.OpenQuery{Phases: []store.Phase{phWaiting, phReserved, phAccepted, phDrafted},
			Recent: []store.Phase{phSubmitted}, Since: time.Now().Add(-24 * time.Hour)})
		if err != nil {
			b.Fatal(err)
		}
		numbers := make([]string, 0, len(open))
		for _, r := range open {
			numbers = append(numbers, r.JobNumber)
		}
		states, badStates, err := db.shop.JobStates(ctx, numbers)
		if err != nil {
			b.Fatal(err)
		}
		if len(badStates) != 0 {
			b.Fatalf("JobStates: %d bad jobs, want 0: %v", len(badStates), badStates)
		}
		idleTrips += n()
		idleTime += time.Since(start)

		n, start = trips(db), time.Now()
		lines, bad, err := shopdbtest.LineItems(ctx, db.shop, numbers)
		if err != nil {
			b.Fatal(err)
		}
		lineTrips += n()
		lineTime += time.Since(start)

		if len(open) != jobs || len(states) != jobs || len(lines) != jobs || len(bad) != 0 || len(lines[numbers[0]]) != linesPerJob {
			b.Fatalf("read %d open, %d states, %d jobs with lines (%d bad); want %d each with %d lines",
				len(open), len(states), len(lines), len(bad), jobs, linesPerJob)
		}
	}
	b.StopTimer()
	per := float64(b.N)
	b.ReportMetric(float64(idleTrips)/per, "idle-roundtrips/op")
	b.ReportMetric(float64(idleTime.Milliseconds())/per, "idle-ms/op")
	b.ReportMetric(float64(lineTrips)/per, "lines-roundtrips/op")
	b.ReportMetric(float64(lineTime.Milliseconds())/per, "lines-ms/op")
}

// BenchmarkUpdateMarkers10k measures writing 10,000 rows' change markers
// (the sample mapping's form) each way UpdateMarkers can: its JSON_TABLE
// statement, and the CASE statements of 500 rows a server without
// JSON_TABLE gets, one after the other in each op so that both see the
// same load. Reported per op: wall time and round trips of each.
//
//	go test -run '^$' -bench UpdateMarkers10k -benchtime 10x ./shopdb/
func BenchmarkUpdateMarkers10k(b *testing.B) {
	db, d := newStore(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ids := seqIDs(10000, "gen-%05d")
	insertRows(b, d, ids)
	byCase := openStore(b, d, d.Config())
	refuseJSON(byCase)
	// The server refuses the JSON statement once; the ops see CASE only.
	if _, err := byCase.UpdateMarkers(ctx, []store.MarkerUpdate{{RequestID: "none", Version: 1}}); err != nil {
		b.Fatal(err)
	}
	forms := []struct {
		name  string
		db    testDB
		trips int64
		time  time.Duration
	}{{name: "json", db: db}, {name: "case", db: byCase}}
	version := int64(1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for f := range forms {
			us := markerUpdates(ids, func(j int) string {
				return fmt.Sprintf("DRAFT|2026-11-02 09:%02d:%02d.%06d|30|2026-11-02 09:30:15.123456", i%60, j%60, j)
			})
			for k := range us {
				us[k].Version = version
			}
			n, start := trips(forms[f].db), time.Now()
			written, err := forms[f].db.UpdateMarkers(ctx, us)
			forms[f].time += time.Since(start)
			forms[f].trips += n()
			if err != nil || written != len(ids) {
				b.Fatalf("%s: written %d, %v; want %d", forms[f].name, written, err, len(ids))
			}
			version++
		}
	}
	b.StopTimer()
	if store.MarkersByCase(db.Store) || !store.MarkersByCase(byCase.Store) {
		b.Fatal("the JSON form fell back to CASE, or the CASE form did not")
	}
	for _, f := range forms {
		b.ReportMetric(float64(f.time.Microseconds())/1000/float64(b.N), f.name+"-ms/op")
		b.ReportMetric(float64(f.trips)/float64(b.N), f.name+"-roundtrips/op")
	}
}
