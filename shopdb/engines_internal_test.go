package shopdb

import (
	"slices"
	"testing"
)

// TestWrittenTables: the tables a mapping statement writes, named as the
// statement names them.
func TestWrittenTables(t *testing.T) {
	for _, tc := range []struct {
		stmt string
		want []string
	}{
		{"UPDATE counters SET next_val = next_val + 1 WHERE name = 'job'", []string{"counters"}},
		{"UPDATE sequences c SET c.last_no = c.last_no + 1 WHERE c.seq_name = 'RO'", []string{"sequences"}},
		{"INSERT INTO jobs (job_no, claim_number) SELECT CONCAT('RO-', c.next_val), :claim_number FROM counters c", []string{"jobs"}},
		{"insert ignore into `Order` (`Number`) values ('A1')", []string{"Order"}},
		{"REPLACE shop.jobs SET job_no = 'x'", []string{"shop.jobs"}},
		{"INSERT INTO `a``b` () VALUES ()", []string{"a`b"}},
		{"UPDATE jobs j JOIN estimates e ON e.job_id = j.job_id SET e.status = 'X' WHERE j.job_no = :job", []string{"estimates"}},
		{"UPDATE jobs AS j, counters c SET j.status = 'CANCELLED', c.next_val = 1", []string{"jobs", "counters"}},
		{"UPDATE jobs SET status = 'CANCELLED'\nWHERE job_no = :job AND NOT EXISTS (SELECT 1 FROM estimates e WHERE e.job_id = jobs.job_id)", []string{"jobs"}},
		{"DELETE FROM job_links WHERE job_no = :job", []string{"job_links"}},
		{"DELETE l FROM job_links l JOIN jobs j ON j.job_id = l.job_id WHERE j.job_no = :job", []string{"job_links"}},
		{"/* make the job */ -- a comment\nINSERT INTO jobs (job_no) VALUES ('a;b')", []string{"jobs"}},
		{"SELECT CONCAT('RO-', c.next_val) AS job FROM counters c", nil},
		{"DO SLEEP(1)", nil},
		{"SET @n = 1", nil},
	} {
		if got := writtenTables(tc.stmt); !slices.Equal(got, tc.want) {
			t.Errorf("writtenTables(%q) = %q, want %q", tc.stmt, got, tc.want)
		}
	}
}
