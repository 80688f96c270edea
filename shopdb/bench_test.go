package shopdb_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// BenchmarkLines10k measures the reading a pass does when every one of
// 10,000 tracked jobs of 30 lines may have changed (their markers moved,
// or none can be derived): Lines in the engine's chunks of 1,250
// jobs, one after the other, against its floor, the same statements read
// as raw bytes (the least any reader can do).
// Reported per op: ms/op, floor-ms/op, x-floor, and B/op and allocs/op,
// which the machine's load does not change.
//
//	go test -run '^$' -bench Lines10k -benchtime 10x ./shopdb/
func BenchmarkLines10k(b *testing.B) {
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
			got, err := db.Lines(ctx, c)
			if err != nil {
				b.Fatal(err)
			}
			for job, jl := range got {
				if jl.Err() != nil {
					b.Fatalf("Lines: job %s: %v", job, jl.Err())
				}
				hashed += len(jl.Lines)
			}
		}
		wall += time.Since(start)
		if hashed != jobs*linesPerJob {
			b.Fatalf("Lines delivered %d lines, want %d", hashed, jobs*linesPerJob)
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
