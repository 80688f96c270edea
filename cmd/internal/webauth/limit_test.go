package webauth

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"strconv"
	gosync "sync"
	"testing"
)

// TestRateLimitParallel: wrong passwords sent all at once from one
// address are limited as those sent one after another: DefaultFailBurst
// of them are checked (401), the others refused (429) before their
// password is looked at, by the form and by HTTP Basic alike; each
// address is logged as limited once.
func TestRateLimitParallel(t *testing.T) {
	t.Parallel()
	tg := newTestGuard(t, pagePolicy)
	const n = 60
	for _, tt := range []struct {
		name, addr string
		req        func(i int) *http.Request
	}{
		{"Form", "198.51.100.20:1", func(i int) *http.Request { return postLogin("alice", "wrong-"+strconv.Itoa(i), "") }},
		{"Basic", "198.51.100.21:1", func(i int) *http.Request {
			r := get("/metrics", nil)
			r.SetBasicAuth("alice", "wrong-"+strconv.Itoa(i))
			r.TLS = &tls.ConnectionState{}
			return r
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var (
				mu    gosync.Mutex
				codes = map[int]int{}
				wg    gosync.WaitGroup
				start = make(chan struct{})
			)
			for i := range n {
				r := tt.req(i)
				wg.Go(func() {
					<-start
					code := tg.serve(r, tt.addr).Code
					mu.Lock()
					codes[code]++
					mu.Unlock()
				})
			}
			close(start)
			wg.Wait()
			if codes[http.StatusUnauthorized] != DefaultFailBurst || codes[http.StatusTooManyRequests] != n-DefaultFailBurst {
				t.Errorf("%d wrong passwords at once: answers %v, want %d × 401 and %d × 429",
					n, codes, DefaultFailBurst, n-DefaultFailBurst)
			}
			if rec := tg.serve(postLogin("alice", alicePassword, ""), tt.addr); rec.Code != http.StatusTooManyRequests {
				t.Errorf("the right password after them: %d, want 429", rec.Code)
			}
		})
	}
	if got, want := len(tg.logs.FilterMessage(msgLoginLimited).All()), 2; got != want {
		t.Errorf("%d lines saying an address is limited, want %d (one per address)", got, want)
	}
}

// TestRateLimitTableFull: when the addresses the limit remembers fill
// its table (a limited /64 each, as one IPv6 /48 holds 65,536 of), an
// address that never failed still logs in, and the last addresses to
// fail are still limited: the table forgets the oldest failures first.
func TestRateLimitTableFull(t *testing.T) {
	t.Parallel()
	tg := newTestGuard(t, pagePolicy)
	// HTTP Basic over plain HTTP fails without a bcrypt check: quick.
	fail := func(addr string) int {
		r := get("/metrics", nil)
		r.SetBasicAuth("alice", alicePassword)
		return tg.serve(r, addr).Code
	}
	sixtyFour := func(i int) string { return fmt.Sprintf("[2001:db8:7:%x::1]:1", i) }
	for i := range maxLimited {
		if code := fail(sixtyFour(i)); code != http.StatusUnauthorized {
			t.Fatalf("the first failure of /64 number %d: %d, want 401", i, code)
		}
	}
	last := sixtyFour(maxLimited - 1)
	for range DefaultFailBurst - 1 {
		fail(last)
	}
	if rec := tg.serve(postLogin("alice", alicePassword, ""), "192.0.2.50:1"); rec.Code != http.StatusSeeOther {
		t.Errorf("with the table full, an address that never failed: %d, want 303 (logged in)", rec.Code)
	}
	if code := fail("192.0.2.51:1"); code != http.StatusUnauthorized {
		t.Errorf("with the table full, a new address's first failure: %d, want 401", code)
	}
	if rec := tg.serve(postLogin("alice", alicePassword, ""), last); rec.Code != http.StatusTooManyRequests {
		t.Errorf("the last limited /64 after the table was full: %d, want 429", rec.Code)
	}
	tg.limit.mu.Lock()
	defer tg.limit.mu.Unlock()
	if got := len(tg.limit.m); got > maxLimited {
		t.Errorf("%d addresses remembered, want at most %d", got, maxLimited)
	}
}
