package shopdbtest

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ServerCPU returns the CPU time (user and system) the database server
// on this machine (a process named mariadbd or mysqld) has used so far,
// and false when there is none to read (a remote server, another OS).
// Benchmarks report its difference over a pass: on a machine shared with
// other work, CPU time says what a pass costs when wall time cannot.
func ServerCPU() (time.Duration, bool) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		if name := s[open+1 : end]; name != "mariadbd" && name != "mysqld" {
			continue
		}
		// After the name: state, then fields 4 onwards; utime and stime
		// are fields 14 and 15, in clock ticks (100 a second on Linux).
		f := strings.Fields(s[end+1:])
		if len(f) < 13 {
			continue
		}
		var ut, st int64
		if _, err := fmt.Sscan(f[11]+" "+f[12], &ut, &st); err != nil {
			continue
		}
		return time.Duration(ut+st) * 10 * time.Millisecond, true
	}
	return 0, false
}

// ReadRaw runs query on the test's own pool, reading every row as raw
// bytes (the least any reader can do), and returns how long it took: the
// floor a benchmark times beside what it measures.
func (d *Database) ReadRaw(tb testing.TB, query string) time.Duration {
	tb.Helper()
	start := time.Now()
	rows, err := d.SQL.Query(query)
	if err != nil {
		tb.Fatal(err)
	}
	cols, err := rows.Columns()
	if err != nil {
		tb.Fatal(err)
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			tb.Fatal(err)
		}
	}
	if err := rows.Close(); err != nil {
		tb.Fatal(err)
	}
	return time.Since(start)
}
