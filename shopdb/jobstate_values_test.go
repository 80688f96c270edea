package shopdb_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// TestJobStatesValuesAsRead: JobStates reads its rows' values where the
// driver has them; what it keeps is copied (every marker of many rows is
// its own, not the last row's bytes), a marker of another type reads as
// its text, final's numbers and words read as before, and a job named in
// another case resolves to the job asked for.
func TestJobStatesValuesAsRead(t *testing.T) {
	d := shopdbtest.NewSampleShop(t)
	ctx := testContext(t)
	_, err := d.SQL.Exec(`CREATE TABLE fixture_states (seq INT AUTO_INCREMENT PRIMARY KEY, job VARCHAR(20),
final VARCHAR(20), marker VARCHAR(200), stamp DATETIME(6), num INT)`)
	if err != nil {
		t.Fatal(err)
	}
	var jobs, values []string
	var args []any
	want := map[string]shopdb.JobState{}
	finals := []struct {
		v    string
		want bool
	}{{"1", true}, {"0", false}, {" 1 ", true}, {"2", true}, {"0.0", false}, {"-1", true}, {"TRUE", true}, {"N", false}}
	for i := range 3000 {
		job := fmt.Sprintf("J-%04d", i)
		f := finals[i%len(finals)]
		marker := fmt.Sprintf("%s|ünïcödé|%d|%s", job, i, strings.Repeat("x", i%150))
		named := job
		if i%10 == 3 {
			named = strings.ToLower(job) // the shop names it in another case
		}
		values = append(values, "(?, ?, ?, ?, ?)")
		args = append(args, named, f.v, marker, fmt.Sprintf("2026-11-25 06:45:%02d.%06d", i%60, i), i)
		jobs = append(jobs, job)
		want[job] = shopdb.JobState{Job: job, Final: f.want, Marker: marker}
	}
	if _, err := d.SQL.Exec("INSERT INTO fixture_states (job, final, marker, stamp, num) VALUES "+strings.Join(values, ","), args...); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, marker string
		want         func(i int, job string) string
	}{
		{"Text", "marker", func(i int, _ string) string { return want[jobs[i]].Marker }},
		{"Datetime", "stamp", func(i int, _ string) string { return fmt.Sprintf("2026-11-25 06:45:%02d.%06d", i%60, i) }},
		{"Number", "num", func(i int, _ string) string { return fmt.Sprint(i) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := d.Config()
			cfg.Queries.EstimateState = "SELECT job, final, " + tc.marker + " AS marker FROM fixture_states WHERE job IN (:jobs) ORDER BY seq"
			states, bad, err := d.Open(t, cfg).JobStates(ctx, jobs)
			if err != nil || len(bad) != 0 {
				t.Fatalf("JobStates: %v, bad %v", err, bad)
			}
			wantHere := map[string]shopdb.JobState{}
			for i, job := range jobs {
				st := want[job]
				st.Marker = tc.want(i, job)
				if tc.marker == "stamp" {
					st.Marker = strings.TrimRight(strings.TrimRight(st.Marker, "0"), ".")
				}
				wantHere[job] = st
			}
			if diff := cmp.Diff(wantHere, states); diff != "" {
				t.Errorf("states (-want +got):\n%s", diff)
			}
		})
	}
}
