package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// The cost of a site among many (issue 32): BenchmarkSites runs N sites on
// this machine, each its own `quotesync run` process on its own schema of
// the one test server (1,000 tracked jobs, every one accepted and drafted)
// and its own instance of one `quotesync-emulator --instance …` process,
// and measures each site once every pass is idle.
const (
	// sitesEnv lists the site counts to measure ("1,10,30"); unset, the
	// benchmark is skipped (it takes minutes): `make sites` sets it.
	sitesEnv = "QUOTESYNC_SITES"
	// sitesWindowEnv is the measuring window (default sitesWindow).
	sitesWindowEnv = "QUOTESYNC_SITES_WINDOW"
	sitesWindow    = time.Minute
	// sitesJobs and sitesLines are each site's tracked jobs and the lines
	// of each job's estimate.
	sitesJobs, sitesLines = 1000, 10
	// sitesSchedule is every site's sync.schedule: a short one, so that
	// the window holds a dozen idle passes of each site.
	sitesSchedule = "@every 5s"
)

// BenchmarkSites measures, for each N of $QUOTESYNC_SITES, what one site
// costs when N run side by side, as the mean over the sites of:
//
//	rss-MiB/site     resident set (VmRSS) at the end of the window
//	cpu-ms/pass      CPU time (all threads, from /proc/PID/task/*/schedstat)
//	                 over the window divided by the site's passes in it
//	                 (its GET /requests at the emulator): the pass and what
//	                 runs between passes (the lock's heartbeat, the GC)
//	conns/site       the most connections to the site's schema the server
//	                 listed (information_schema.PROCESSLIST, sampled every
//	                 second) during the window
//
// with the worst site's figures as max-…, and a table in the log. The
// sites are built once: a reference site is synchronised through the
// real binary (`quotesync once`), then its schema is copied table by
// table and its emulator's state file once per site. Run with
//
//	make sites
//
// or QUOTESYNC_SITES=1,10,30 go test -run '^$' -bench Sites -benchtime 1x -timeout 60m ./cmd/quotesync/
func BenchmarkSites(b *testing.B) {
	spec := os.Getenv(sitesEnv)
	if spec == "" {
		b.Skipf("the cost of many sites takes minutes: set %s=1,10,30 (make sites)", sitesEnv)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		b.Setenv("GOMEMLIMIT", unitMemoryLimit(b)) // each site runs as its unit runs it
	}
	var counts []int
	for _, f := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("%s=%q: want site counts such as 1,10,30", sitesEnv, spec)
		}
		counts = append(counts, n)
	}
	window := sitesWindow
	if w := os.Getenv(sitesWindowEnv); w != "" {
		d, err := time.ParseDuration(w)
		if err != nil || d < 10*time.Second {
			b.Fatalf("%s=%q: want a duration of at least 10s", sitesWindowEnv, w)
		}
		window = d
	}
	ref := newSitesReference(b)
	var table []string
	for _, n := range counts {
		b.Run(fmt.Sprintf("sites=%d", n), func(b *testing.B) {
			for b.Loop() {
				row := benchSites(b, ref, n, window)
				table = append(table, row)
			}
		})
	}
	b.Logf("per site, mean (worst):\n%-6s %-16s %-18s %s\n%s", "N", "RSS MiB", "CPU ms/idle pass", "connections", strings.Join(table, "\n"))
}

// sitesReference is the synchronised site every measured site copies.
type sitesReference struct {
	e     *e2eEnv
	state []byte // the emulator's state file
}

// newSitesReference builds the reference site: the sample shop with
// sitesJobs generated jobs, a request for each at the emulator, and
// `quotesync once` until a pass writes nothing.
func newSitesReference(b *testing.B) *sitesReference {
	b.Helper()
	e := newE2E(b, e2eOptions{Concurrency: 16, MaxNewPerPass: -1, Schedule: "@every 1h"})
	benchSyncJobs(b, e, sitesJobs, sitesLines)
	state, err := json.Marshal(map[string]any{"format": 1, "state": e.Emu.State()})
	if err != nil {
		b.Fatal(err)
	}
	return &sitesReference{e: e, state: state}
}

// siteRun is one measured site.
type siteRun struct {
	name, schema, base, conf string
	proc                     *e2eProc
	cpu0                     time.Duration
	list0                    int
	conns                    int
}

// benchSites runs n sites copied from ref for window once they are idle
// and returns the row of the log's table.
func benchSites(b *testing.B, ref *sitesReference, n int, window time.Duration) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	admin, err := sqlx.Open("mysql", shopdbtest.DSN(b, ""))
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	dir := b.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(e2eToken), 0o600); err != nil {
		b.Fatal(err)
	}

	sites := make([]*siteRun, n)
	args := []string{}
	for i := range sites {
		s := &siteRun{name: fmt.Sprintf("site%02d", i+1), schema: shopdbtest.NewDatabase(b).Name}
		copySchema(ctx, b, admin, ref.e.DB.Name, s.schema)
		state := filepath.Join(dir, s.name+".json")
		if err := os.WriteFile(state, ref.state, 0o600); err != nil {
			b.Fatal(err)
		}
		args = append(args, "--instance", fmt.Sprintf("name=%s,listen=127.0.0.1:0,token-file=%s,state=%s", s.name, tokenFile, state))
		sites[i] = s
	}
	var emuErr e2eBuffer
	emu, stdout := startEmulatorProgram(b, &emuErr, args...)
	defer func() { _ = emu.Process.Kill() }()
	bases := readEmulatorBases(b, stdout, n, &emuErr)
	for _, s := range sites {
		s.base = bases[s.name]
		s.conf = writeSiteConfig(b, ref, dir, s)
	}

	for _, s := range sites {
		s.proc = startSite(b, ref.e, s)
	}
	// Idle: every site has passed at least twice (its first pass after
	// the copy writes the shop's markers of its own clock).
	deadline := time.Now().Add(5*time.Minute + time.Duration(n)*10*time.Second)
	for _, s := range sites {
		for emulatorListCalls(b, s.base) < 2 {
			if time.Now().After(deadline) || s.proc.exited() {
				b.Fatalf("%s: not two passes in time:\n%s", s.name, e2eTail(s.proc.out.String(), 20))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	// The pool's surplus from those passes is closed once idle this long.
	time.Sleep(shopdb.DefaultConnMaxIdleTime + 5*time.Second)

	for _, s := range sites {
		s.cpu0 = processCPU(s.proc.cmd.Process.Pid)
		s.list0 = emulatorListCalls(b, s.base)
	}
	start := time.Now()
	for time.Since(start) < window {
		counts := schemaConnections(ctx, b, admin)
		for _, s := range sites {
			s.conns = max(s.conns, counts[s.schema])
		}
		time.Sleep(time.Second)
	}
	var rss, cpu, conns []float64
	for _, s := range sites {
		pid := s.proc.cmd.Process.Pid
		used := processCPU(pid) - s.cpu0
		passes := emulatorListCalls(b, s.base) - s.list0
		if passes < 1 {
			b.Fatalf("%s: no pass in the window of %s", s.name, window)
		}
		rss = append(rss, float64(procStatus(pid, "VmRSS:"))/1024)
		cpu = append(cpu, float64(used.Microseconds())/1000/float64(passes))
		conns = append(conns, float64(s.conns))
	}
	for _, s := range sites {
		if code := s.proc.stop(30 * time.Second); code != 0 {
			b.Errorf("%s: quotesync run: exit %d\n%s", s.name, code, e2eTail(s.proc.out.String(), 20))
		}
	}
	if err := emu.Process.Signal(os.Interrupt); err != nil {
		b.Fatal(err)
	}
	if err := emu.Wait(); err != nil {
		b.Errorf("quotesync-emulator exited with %v after an interrupt, want status 0", err)
	}

	mean := func(v []float64) float64 {
		t := 0.0
		for _, x := range v {
			t += x
		}
		return t / float64(len(v))
	}
	b.ReportMetric(mean(rss), "rss-MiB/site")
	b.ReportMetric(slices.Max(rss), "max-rss-MiB/site")
	b.ReportMetric(mean(cpu), "cpu-ms/pass")
	b.ReportMetric(slices.Max(cpu), "max-cpu-ms/pass")
	b.ReportMetric(mean(conns), "conns/site")
	b.ReportMetric(slices.Max(conns), "max-conns/site")
	return fmt.Sprintf("%-6d %-16s %-18s %s", n,
		fmt.Sprintf("%.1f (%.1f)", mean(rss), slices.Max(rss)),
		fmt.Sprintf("%.2f (%.2f)", mean(cpu), slices.Max(cpu)),
		fmt.Sprintf("%.1f (%.0f)", mean(conns), slices.Max(conns)))
}

// copySchema copies every table of schema from into schema to, rows and
// all, on the server.
func copySchema(ctx context.Context, b *testing.B, admin *sqlx.DB, from, to string) {
	b.Helper()
	var tables []string
	if err := admin.SelectContext(ctx, &tables, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE'", from); err != nil {
		b.Fatal(err)
	}
	for _, t := range tables {
		for _, stmt := range []string{
			fmt.Sprintf("CREATE TABLE `%s`.`%s` LIKE `%s`.`%s`", to, t, from, t),
			fmt.Sprintf("INSERT INTO `%s`.`%s` SELECT * FROM `%s`.`%s`", to, t, from, t),
		} {
			if _, err := admin.ExecContext(ctx, stmt); err != nil {
				b.Fatalf("copy %s.%s: %v", from, t, err)
			}
		}
	}
}

// readEmulatorBases reads the emulator's start lines: instance name →
// base URL.
func readEmulatorBases(b *testing.B, stdout io.Reader, n int, stderr *e2eBuffer) map[string]string {
	b.Helper()
	bases := map[string]string{}
	var seen strings.Builder
	buf := make([]byte, 0, 4096)
	tmp := make([]byte, 4096)
	deadline := time.Now().Add(time.Minute)
	for len(bases) < n {
		if time.Now().After(deadline) {
			b.Fatalf("emulator: %d of %d instances started:\n%s\n%s", len(bases), n, seen.String(), stderr.String())
		}
		k, err := stdout.Read(tmp)
		buf = append(buf, tmp[:k]...)
		for {
			i := strings.IndexByte(string(buf), '\n')
			if i < 0 {
				break
			}
			line := string(buf[:i])
			buf = buf[i+1:]
			seen.WriteString(line + "\n")
			if m := siteEmulatorLine.FindStringSubmatch(line); m != nil {
				bases[m[1]] = m[3]
			}
		}
		if err != nil {
			b.Fatalf("emulator output: %v\n%s\n%s", err, seen.String(), stderr.String())
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return bases
}

// writeSiteConfig writes site s's file: the reference's, on s's schema and
// emulator instance, with the defaults a site runs with (the lock's
// heartbeat and session timeout) and the sites' schedule.
func writeSiteConfig(b *testing.B, ref *sitesReference, dir string, s *siteRun) string {
	b.Helper()
	path := filepath.Join(dir, s.name+".yaml")
	e2eEditYAML(b, ref.e.Conf, path, func(doc map[string]any) {
		shop := doc["shop"].(map[string]any)
		shop["database"] = s.schema
		delete(shop, "lock_heartbeat")
		delete(shop, "lock_session_timeout")
		doc["remote"].(map[string]any)["base_url"] = s.base
		doc["sync"].(map[string]any)["schedule"] = sitesSchedule
		doc["log"].(map[string]any)["level"] = "info"
		doc["control"] = map[string]any{"socket": filepath.Join(dir, s.name+".sock")}
	})
	return path
}

// startSite starts `quotesync run` for s and waits for its ready line.
func startSite(b *testing.B, e *e2eEnv, s *siteRun) *e2eProc {
	b.Helper()
	orig := e.Conf
	e.Conf = s.conf
	p := e.start("run")
	e.Conf = orig
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(p.out.String(), `"msg":"ready"`) {
		if time.Now().After(deadline) || p.exited() {
			b.Fatalf("%s: not ready within a minute:\n%s", s.name, e2eTail(p.out.String(), 20))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return p
}

// emulatorListCalls returns how many GET /requests the emulator at base
// has answered: one per pass of the site that uses it.
func emulatorListCalls(b *testing.B, base string) int {
	b.Helper()
	resp, err := http.Get(base + emulator.AdminPrefix + "calls")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var calls map[string]int
	if err := json.NewDecoder(resp.Body).Decode(&calls); err != nil {
		b.Fatal(err)
	}
	return calls[emulator.RouteListRequests]
}

// schemaConnections returns, per schema, the server's connections whose
// current database it is.
func schemaConnections(ctx context.Context, b *testing.B, admin *sqlx.DB) map[string]int {
	b.Helper()
	rows, err := admin.QueryContext(ctx, "SELECT DB, COUNT(*) FROM information_schema.PROCESSLIST WHERE DB IS NOT NULL GROUP BY DB")
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var db string
		var n int
		if err := rows.Scan(&db, &n); err != nil {
			b.Fatal(err)
		}
		out[db] = n
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

// processCPU returns the CPU time every thread of process pid has run,
// from /proc/PID/task/*/schedstat (nanoseconds, unlike the clock ticks
// of /proc/PID/stat).
func processCPU(pid int) time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var total int64
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		f := strings.Fields(string(data))
		if len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			total += n
		}
	}
	return time.Duration(total)
}

// startEmulatorProgram builds cmd/quotesync-emulator (the insurer's
// service is a program of its own, not a verb of the daemon) and starts
// it with args, its standard error to stderr; it is killed when the
// benchmark ends.
func startEmulatorProgram(b *testing.B, stderr io.Writer, args ...string) (*exec.Cmd, io.Reader) {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "quotesync-emulator")
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if out, err := exec.Command(goTool, "build", "-o", bin, "../quotesync-emulator").CombinedOutput(); err != nil {
		b.Fatalf("build quotesync-emulator: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return cmd, stdout
}

// siteEmulatorLine is quotesync-emulator's start line of one instance:
// its name, mode and base URL.
var siteEmulatorLine = regexp.MustCompile(`^quotesync-emulator ([A-Za-z0-9_-]+) listening on \S+ \(mode (\w+)\); base URL (http://[0-9.:]+) `)
