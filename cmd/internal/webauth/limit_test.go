package webauth

import (
	"crypto/tls"
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
