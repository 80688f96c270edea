package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// BenchmarkOnceIdle10k runs the real binary's `quotesync once` over 10,000
// tracked jobs of 30 lines, all drafted and unchanged: what a process pays
// on top of the in-process pass (start-up, configuration, connection,
// migrations check, lock). One world, three mappings, as in the
// in-process BenchmarkIdlePass10k: shop-changed (the sample mapping),
// marker (no shop_changed), no-marker (estimate_state without a marker:
// every job's lines are read and hashed). Each reports ms/op, peak-rss-MiB
// (the process's maximum resident set, VmHWM) and remote-calls/op.
// idle-daemon measures `quotesync run` over the same world: its resident
// set (VmRSS) after its first pass, while it waits for the next, as
// rss-MiB, split into anon-rss-MiB (the heap, stacks and runtime) and
// file-rss-MiB (the pages of the binary itself mapped in), and the peak
// of that first pass as peak-rss-MiB; idle-daemon-empty the same before
// the 10,000 jobs exist (the sample shop's few). With
// QUOTESYNC_BENCH_BASE_BIN set to another build (say, of the last
// release), each once case runs again with it as case-base, in the same
// world and minutes, for a before/after on a noisy machine; the daemon
// cases alternate the two binaries run by run instead and report the
// base's figures as base-rss-MiB and so on. Every binary runs with the
// systemd unit's GOMEMLIMIT, unless the environment sets one. Run with
//
//	go test -run '^$' -bench OnceIdle -benchtime 5x ./cmd/quotesync/
func BenchmarkOnceIdle10k(b *testing.B) {
	const jobs, lines = 10000, 30
	if os.Getenv("GOMEMLIMIT") == "" {
		b.Setenv("GOMEMLIMIT", unitMemoryLimit(b)) // the binaries started inherit it
	}
	e := newE2E(b, e2eOptions{Concurrency: 32, MaxNewPerPass: -1, Schedule: "@every 1h"})
	b.Run("idle-daemon-empty", func(b *testing.B) { benchDaemon(b, e) })
	benchSyncJobs(b, e, jobs, lines)
	noShopChanged := func(q map[string]any) { delete(q, "shop_changed") }
	cases := []struct {
		name string
		edit func(queries map[string]any)
	}{
		{"shop-changed", func(map[string]any) {}},
		{"marker", noShopChanged},
		{"no-marker", func(q map[string]any) {
			noShopChanged(q)
			q["estimate_state"] = `SELECT j.job_no AS job, MAX(CASE WHEN e.status = 'FINAL' THEN 1 ELSE 0 END) AS final
FROM jobs j JOIN estimates e ON e.job_id = j.job_id WHERE j.job_no IN (:jobs) GROUP BY j.job_no`
		}},
	}
	bins := []struct{ suffix, path string }{{"", e.bin}}
	if base := os.Getenv("QUOTESYNC_BENCH_BASE_BIN"); base != "" {
		bins = append(bins, struct{ suffix, path string }{"-base", base})
	}
	for _, tc := range cases {
		for _, bin := range bins {
			b.Run(tc.name+bin.suffix, func(b *testing.B) {
				orig := e.bin
				e.bin = bin.path
				defer func() { e.bin = orig }()
				benchOnceCase(b, e, tc.edit)
			})
		}
	}
	b.Run("idle-daemon", func(b *testing.B) {
		// The no-marker case stored markers of its own form: a pass with
		// the sample mapping stores the mapping's again, so that the
		// daemon's first pass finds nothing to do.
		benchOnce(b, e, benchConfig(b, e, func(map[string]any) {}, "info"))
		benchDaemon(b, e)
	})
	// Every estimate's updated_at moved before the daemon starts: its
	// first pass reads and hashes every job's lines and writes 10,000
	// markers, the heaviest first pass there is.
	b.Run("idle-daemon-after-full-read", func(b *testing.B) {
		benchDaemonAfter(b, e, func() {
			if _, err := e.DB.SQL.Exec("UPDATE estimates SET updated_at = NOW(6)"); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// unitMemoryLimit is the GOMEMLIMIT the systemd unit runs quotesync
// with.
func unitMemoryLimit(tb testing.TB) string {
	tb.Helper()
	unit, err := os.ReadFile(filepath.Join("..", "..", "systemd", "quotesync.service"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(unit), "\n") {
		if v, ok := strings.CutPrefix(line, "Environment=GOMEMLIMIT="); ok {
			return v
		}
	}
	tb.Fatal("systemd/quotesync.service sets no GOMEMLIMIT")
	return ""
}

// benchSyncJobs generates jobs of lines each in e's shop, a pending
// request at the emulator for each, and runs `quotesync once` until a
// pass writes nothing: every job accepted and drafted.
func benchSyncJobs(b *testing.B, e *e2eEnv, jobs, lines int) {
	b.Helper()
	generated, err := e.Shop.GenerateJobs(e.ctx(), jobs, lines)
	if err != nil {
		b.Fatal(err)
	}
	seeds := make([]emulator.SeedRequest, len(generated))
	for i, job := range generated {
		num, err := strconv.ParseInt(strings.TrimPrefix(job, "RO-"), 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		seeds[i] = emulator.SeedRequest{ClaimNumber: fmt.Sprintf("GEN-%07d", num)}
	}
	e.Emu.AddRequests(seeds...)
	// Accept and draft everything: a loaded machine may take a few
	// passes (each stops starting steps at 80% of its pass_timeout).
	for try := 0; ; try++ {
		before := e.Emu.Calls()
		res := e.once()
		if res.Code == 0 && e2eWrites(e2eCallsDiff(before, e.Emu.Calls())) == 0 {
			break
		} else if try == 30 {
			b.Fatalf("setup: quotesync once: exit %d, still working after %d passes\n%s", res.Code, try+1, e2eTail(res.Output, 20))
		}
	}
}

// benchOnceCase measures `quotesync once` with e's mapping edited by edit.
func benchOnceCase(b *testing.B, e *e2eEnv, edit func(map[string]any)) {
	conf := benchConfig(b, e, edit, "info")
	// The first pass with a mapping may store markers in its form.
	benchOnce(b, e, conf)
	var wall, cpu, dbCPU time.Duration
	var rss int64
	calls, n := 0, 0
	for b.Loop() {
		before := e.Emu.Calls()
		r := benchOnce(b, e, conf)
		wall += r.wall
		cpu += r.cpu
		dbCPU += r.dbCPU
		rss = max(rss, r.hwm)
		diff := e2eCallsDiff(before, e.Emu.Calls())
		if w := e2eWrites(diff); w != 0 {
			b.Fatalf("an idle once made %d remote writes: %s", w, e2eFmtCalls(diff))
		}
		for _, v := range diff {
			calls += v
		}
		n++
	}
	b.ReportMetric(float64(wall.Microseconds())/1000/float64(n), "ms/op")
	b.ReportMetric(float64(rss)/1024, "peak-rss-MiB")
	b.ReportMetric(float64(calls)/float64(n), "remote-calls/op")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n), "cpu-ms/op")
	if _, ok := shopdbtest.ServerCPU(); ok {
		b.ReportMetric(float64(dbCPU.Microseconds())/1000/float64(n), "db-cpu-ms/op")
	}
}

// benchDaemon starts `quotesync run` on e, waits for its first pass and
// reports its resident set while it waits for the next. With
// QUOTESYNC_BENCH_BASE_BIN set it alternates e's binary and the base run
// by run and reports the base's figures too, prefixed base-.
func benchDaemon(b *testing.B, e *e2eEnv) { benchDaemonAfter(b, e, nil) }

// benchDaemonAfter is benchDaemon with before run before each start. It
// logs the Go runtime's memory classes of the last run (from /metrics).
func benchDaemonAfter(b *testing.B, e *e2eEnv, before func()) {
	type bin struct {
		prefix, path          string
		rss, anon, file, peak []int64
	}
	bins := []*bin{{path: e.bin}}
	if base := os.Getenv("QUOTESYNC_BENCH_BASE_BIN"); base != "" {
		bins = append(bins, &bin{prefix: "base-", path: base})
	}
	// The pages of a binary count in its resident set only when they are
	// in the page cache (the kernel maps those around each page touched):
	// read each file once so that both start from the same state.
	for _, bn := range bins {
		if _, err := os.ReadFile(bn.path); err != nil {
			b.Fatal(err)
		}
	}
	// debug: the idle pass's "pass done" says when it ended.
	conf := benchConfig(b, e, func(map[string]any) {}, "debug")
	listen := benchMetricsListen(b, conf)
	var classes string
	for b.Loop() {
		for _, bn := range bins {
			if before != nil {
				before()
			}
			orig, origBin := e.Conf, e.bin
			e.Conf, e.bin = conf, bn.path
			p := e.start("run")
			e.Conf, e.bin = orig, origBin
			// The first pass runs at start; then the daemon waits an hour.
			deadline := time.Now().Add(time.Minute)
			for !strings.Contains(p.out.String(), `"pass done"`) {
				if time.Now().After(deadline) {
					p.stop(10 * time.Second)
					b.Fatalf("no pass finished within a minute:\n%s", e2eTail(p.out.String(), 20))
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(2 * time.Second) // settle: the scavenger returns freed memory
			pid := p.cmd.Process.Pid
			bn.rss = append(bn.rss, procStatus(pid, "VmRSS:"))
			bn.anon = append(bn.anon, procStatus(pid, "RssAnon:"))
			bn.file = append(bn.file, procStatus(pid, "RssFile:"))
			bn.peak = append(bn.peak, procStatus(pid, "VmHWM:"))
			classes = benchMemoryClasses(b, listen)
			if code := p.stop(30 * time.Second); code != 0 {
				b.Fatalf("quotesync run: exit %d\n%s", code, e2eTail(p.out.String(), 20))
			}
		}
	}
	mib := func(kib []int64) string {
		return fmt.Sprintf("%.1f–%.1f", float64(slices.Min(kib))/1024, float64(slices.Max(kib))/1024)
	}
	b.Logf("the last run's Go memory (MiB): %s", classes)
	for _, bn := range bins {
		b.Logf("%sMiB: rss %s anon %s file %s peak %s", bn.prefix, mib(bn.rss), mib(bn.anon), mib(bn.file), mib(bn.peak))
		b.ReportMetric(float64(slices.Max(bn.rss))/1024, bn.prefix+"rss-MiB")
		b.ReportMetric(float64(slices.Max(bn.anon))/1024, bn.prefix+"anon-rss-MiB")
		b.ReportMetric(float64(slices.Max(bn.file))/1024, bn.prefix+"file-rss-MiB")
		b.ReportMetric(float64(slices.Max(bn.peak))/1024, bn.prefix+"peak-rss-MiB")
	}
}

// benchMetricsListen sets metrics.listen in the configuration file conf to
// a free loopback port, and returns the address.
func benchMetricsListen(b *testing.B, conf string) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	data, err := os.ReadFile(conf)
	if err != nil {
		b.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		b.Fatal(err)
	}
	m, _ := doc["metrics"].(map[string]any)
	if m == nil {
		m = map[string]any{}
		doc["metrics"] = m
	}
	m["listen"] = addr
	if data, err = yaml.Marshal(doc); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(conf, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return addr
}

// benchMemoryClasses reads the Go runtime's memory series from the
// daemon's /metrics at addr, in MiB, as one line.
func benchMemoryClasses(b *testing.B, addr string) string {
	b.Helper()
	resp, err := http.Get("http://" + addr + "/metrics?name[]=go_memstats_heap_inuse_bytes&name[]=go_memstats_heap_idle_bytes&name[]=go_memstats_heap_released_bytes&name[]=go_memstats_stack_inuse_bytes&name[]=go_memstats_mspan_inuse_bytes&name[]=go_memstats_gc_sys_bytes&name[]=go_memstats_other_sys_bytes&name[]=go_memstats_buck_hash_sys_bytes&name[]=go_memstats_mcache_inuse_bytes")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(body), "\n") {
		name, val, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			continue
		}
		out = append(out, fmt.Sprintf("%s %.1f", strings.TrimSuffix(strings.TrimPrefix(name, "go_memstats_"), "_bytes"), v/(1<<20)))
	}
	return strings.Join(out, ", ")
}

// benchConfig writes e's configuration with its shop.queries edited, and
// returns the file's path.
func benchConfig(b *testing.B, e *e2eEnv, edit func(queries map[string]any), logLevel string) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "quotesync.yaml")
	e2eEditYAML(b, e.Conf, path, func(doc map[string]any) {
		edit(doc["shop"].(map[string]any)["queries"].(map[string]any))
		doc["log"].(map[string]any)["level"] = logLevel
	})
	return path
}

// benchOnce runs `quotesync once` with conf and returns its wall time and
// its peak resident set (KiB, sampled every 2 ms).
// onceRun is what one benchOnce measured: wall time, peak RSS (KiB), the
// process's CPU time (user and system) and the database server's over
// the same time.
type onceRun struct {
	wall, cpu, dbCPU time.Duration
	hwm              int64
}

func benchOnce(b *testing.B, e *e2eEnv, conf string) onceRun {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.bin, "once", "--config", conf)
	cmd.Env = e.environ()
	var buf strings.Builder
	cmd.Stdout, cmd.Stderr = &buf, &buf
	db0, _ := shopdbtest.ServerCPU()
	s0 := time.Now()
	err := cmd.Start()
	var hwm int64
	if err == nil {
		exited, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			for {
				if v := vmHWM(cmd.Process.Pid); v > 0 {
					hwm = v
				}
				select {
				case <-exited:
					return
				case <-time.After(2 * time.Millisecond):
				}
			}
		}()
		err = cmd.Wait()
		close(exited)
		<-done
	}
	wall := time.Since(s0)
	db1, _ := shopdbtest.ServerCPU()
	if err != nil {
		b.Fatalf("quotesync once: %v\n%s", err, buf.String())
	}
	ps := cmd.ProcessState
	return onceRun{wall: wall, hwm: hwm, cpu: ps.UserTime() + ps.SystemTime(), dbCPU: db1 - db0}
}

// vmHWM returns the peak resident set (KiB) of a running process from
// /proc (0 once it is gone). The rusage of a child is no use here: Linux
// carries the forking test process's own peak over the exec.
func vmHWM(pid int) int64 { return procStatus(pid, "VmHWM:") }

// procStatus returns a KiB field of /proc/PID/status (0 once the process
// is gone).
func procStatus(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
