package shopdb_test

import (
	"context"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// BenchmarkLoad10kJobs measures what a pass reads for 10,000 tracked jobs
// of 30 lines each: the idle part (OpenRequests + JobStates, all a pass
// reads when nothing changed), loading every job's lines (LineItems, the
// worst case: everything changed), and reading them only to hash them
// (LineTexts, what a pass without a change marker does). Reported per op:
// round trips and wall time of each part.
//
//	go test -run '^$' -bench Load10kJobs -benchtime 5x ./shopdb/
func BenchmarkLoad10kJobs(b *testing.B) {
	const jobs, linesPerJob = 10000, 30
	db, d := shopdbtest.New(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := d.Shop().GenerateJobs(ctx, jobs, linesPerJob); err != nil {
		b.Fatal(err)
	}
	_, err := d.SQL.ExecContext(ctx, `INSERT INTO quotesync_requests
(request_id, claim_number, job_number, phase, pushed_hash, created_at, updated_at, version)
SELECT CONCAT('gen-', job_id), claim_number, job_no, 'drafted', 'sha256:x', NOW(6), NOW(6), 1
FROM jobs WHERE claim_number LIKE 'GEN-%'`)
	if err != nil {
		b.Fatal(err)
	}
	var idleTrips, lineTrips int64
	var idleTime, lineTime, textTime time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n, start := trips(db), time.Now()
		open, err := db.OpenRequests(ctx, shopdb.OpenQuery{Phases: []shopdb.Phase{phWaiting, phReserved, phAccepted, phDrafted},
			Recent: []shopdb.Phase{phSubmitted}, Since: time.Now().Add(-24 * time.Hour)})
		if err != nil {
			b.Fatal(err)
		}
		numbers := make([]string, 0, len(open))
		for _, r := range open {
			numbers = append(numbers, r.JobNumber)
		}
		states, badStates, err := db.JobStates(ctx, numbers)
		if err != nil {
			b.Fatal(err)
		}
		if len(badStates) != 0 {
			b.Fatalf("JobStates: %d bad jobs, want 0: %v", len(badStates), badStates)
		}
		idleTrips += n()
		idleTime += time.Since(start)

		n, start = trips(db), time.Now()
		lines, bad, err := db.LineItems(ctx, numbers)
		if err != nil {
			b.Fatal(err)
		}
		lineTrips += n()
		lineTime += time.Since(start)

		start = time.Now()
		hashed := 0
		unsure, err := db.LineTexts(ctx, numbers, func(_ string, ls []shopdb.LineText) { hashed += len(ls) })
		if err != nil {
			b.Fatal(err)
		}
		textTime += time.Since(start)
		if len(unsure) != 0 || hashed != jobs*linesPerJob {
			b.Fatalf("LineTexts: %d lines, %d unsure jobs; want %d and 0", hashed, len(unsure), jobs*linesPerJob)
		}
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
	b.ReportMetric(float64(textTime.Milliseconds())/per, "line-texts-ms/op")
}
