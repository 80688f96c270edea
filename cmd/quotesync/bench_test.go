package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
)

// BenchmarkOnceIdle10k runs the real binary's `quotesync once` over 10,000
// tracked jobs of 30 lines, all drafted and unchanged: what a process pays
// on top of the in-process pass (start-up, configuration, connection,
// migrations check, lock). It reports ms/op, peak-rss-MiB (the process's
// maximum resident set, VmHWM) and remote-calls/op, with and without
// shop.queries.shop_changed. Run with
//
//	go test -run '^$' -bench OnceIdle -benchtime 5x ./cmd/quotesync/
func BenchmarkOnceIdle10k(b *testing.B) {
	const jobs, lines = 10000, 30
	for _, shopChanged := range []bool{true, false} {
		name := map[bool]string{true: "shop-changed", false: "marker"}[shopChanged]
		b.Run(name, func(b *testing.B) {
			e := newE2E(b, e2eOptions{Concurrency: 32, MaxNewPerPass: -1, NoShopChanged: !shopChanged})
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
			// Accept and draft everything (a loaded machine may take a few
			// passes), then one idle pass.
			for try := 0; ; try++ {
				if res := e.once(); res.Code == 0 {
					break
				} else if try == 5 {
					b.Fatalf("setup: quotesync once: exit %d\n%s", res.Code, e2eTail(res.Output, 20))
				}
			}
			e.mustOnce()
			var wall time.Duration
			var rss int64
			calls, n := 0, 0
			for b.Loop() {
				before := e.Emu.Calls()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				cmd := exec.CommandContext(ctx, e.bin, "once", "--config", e.Conf)
				cmd.Env = e.environ()
				var buf strings.Builder
				cmd.Stdout, cmd.Stderr = &buf, &buf
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
				wall += time.Since(s0)
				cancel()
				out := buf.String()
				if err != nil {
					b.Fatalf("quotesync once: %v\n%s", err, out)
				}
				rss = max(rss, hwm) // KiB
				d := e2eCallsDiff(before, e.Emu.Calls())
				if w := e2eWrites(d); w != 0 {
					b.Fatalf("an idle once made %d remote writes: %s", w, e2eFmtCalls(d))
				}
				for _, v := range d {
					calls += v
				}
				n++
			}
			b.ReportMetric(float64(wall.Microseconds())/1000/float64(n), "ms/op")
			b.ReportMetric(float64(rss)/1024, "peak-rss-MiB")
			b.ReportMetric(float64(calls)/float64(n), "remote-calls/op")
		})
	}
}

// vmHWM returns the peak resident set (KiB) of a running process from
// /proc (0 once it is gone). The rusage of a child is no use here: Linux
// carries the forking test process's own peak over the exec.
func vmHWM(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
