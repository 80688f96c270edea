package shopdb_test

import (
	"context"
	"fmt"
	"strings"
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
(insurer, request_id, claim_number, job_number, phase, pushed_hash, created_at, updated_at, version)
SELECT 'default', CONCAT('gen-', job_id), claim_number, job_no, 'drafted', 'sha256:x', NOW(6), NOW(6), 1
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

// BenchmarkUpdateMarkers10k measures writing 10,000 rows' change markers
// (the sample mapping's form) each way UpdateMarkers can: its JSON_TABLE
// statement, and the CASE statements of 500 rows a server without
// JSON_TABLE gets, one after the other in each op so that both see the
// same load. Reported per op: wall time and round trips of each.
//
//	go test -run '^$' -bench UpdateMarkers10k -benchtime 10x ./shopdb/
func BenchmarkUpdateMarkers10k(b *testing.B) {
	db, d := shopdbtest.New(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ids := seqIDs(10000, "gen-%05d")
	insertRows(b, d, ids)
	byCase := d.Open(b, d.Config())
	refuseJSON(byCase)
	// The server refuses the JSON statement once; the ops see CASE only.
	if _, err := byCase.UpdateMarkers(ctx, []shopdb.MarkerUpdate{{RequestID: "none", Version: 1}}); err != nil {
		b.Fatal(err)
	}
	forms := []struct {
		name  string
		db    *shopdb.DB
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
	if shopdb.MarkersByCase(db) || !shopdb.MarkersByCase(byCase) {
		b.Fatal("the JSON form fell back to CASE, or the CASE form did not")
	}
	for _, f := range forms {
		b.ReportMetric(float64(f.time.Microseconds())/1000/float64(b.N), f.name+"-ms/op")
		b.ReportMetric(float64(f.trips)/float64(b.N), f.name+"-roundtrips/op")
	}
}

// BenchmarkLineTexts10k measures the reading a pass does when every one of
// 10,000 tracked jobs of 30 lines may have changed (their markers moved,
// or none can be derived): LineTexts in the engine's chunks of 1,250
// jobs, one after the other, against its floor, the same statements read
// as raw bytes (the least any reader can do).
// Reported per op: ms/op, floor-ms/op, x-floor, and B/op and allocs/op,
// which the machine's load does not change.
//
//	go test -run '^$' -bench LineTexts10k -benchtime 10x ./shopdb/
func BenchmarkLineTexts10k(b *testing.B) {
	const jobs, linesPerJob, chunk = 10000, 30, 1250
	db, d := shopdbtest.New(b)
	ctx := context.Background()
	numbers, err := d.Shop().GenerateJobs(ctx, jobs, linesPerJob)
	if err != nil {
		b.Fatal(err)
	}
	var chunks [][]string
	for i := 0; i < len(numbers); i += chunk {
		chunks = append(chunks, numbers[i:min(i+chunk, len(numbers))])
	}
	query := d.Config().Queries.LineItems
	floor := func(chunks [][]string) time.Duration {
		var total time.Duration
		for _, c := range chunks {
			total += d.ReadRaw(b, strings.ReplaceAll(query, ":jobs", "'"+strings.Join(c, "','")+"'"))
		}
		return total
	}
	var wall, raw, rawOne time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		hashed := 0
		for _, c := range chunks {
			unsure, err := db.LineTexts(ctx, c, func(_ string, ls []shopdb.LineText) { hashed += len(ls) })
			if err != nil {
				b.Fatal(err)
			}
			if len(unsure) != 0 {
				b.Fatalf("LineTexts: %d unsure jobs, want 0", len(unsure))
			}
		}
		wall += time.Since(start)
		if hashed != jobs*linesPerJob {
			b.Fatalf("LineTexts delivered %d lines, want %d", hashed, jobs*linesPerJob)
		}
		b.StopTimer()
		raw += floor(chunks)
		rawOne += floor([][]string{numbers})
		b.StartTimer()
	}
	b.ReportMetric(float64(wall.Microseconds())/1000/float64(b.N), "ms/op")
	b.ReportMetric(float64(raw.Microseconds())/1000/float64(b.N), "floor-ms/op")
	b.ReportMetric(float64(wall)/float64(raw), "x-floor")
	b.ReportMetric(float64(rawOne.Microseconds())/1000/float64(b.N), "floor-one-statement-ms/op")
}
