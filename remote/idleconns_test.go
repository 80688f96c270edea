package remote

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestIdleConnsMatchConcurrency: after a burst of n calls at once, a
// second burst reuses the connections of the first when the client keeps n
// idle, and opens new ones when it keeps fewer (the old fixed 16).
func TestIdleConnsMatchConcurrency(t *testing.T) {
	const n = 32
	for _, tc := range []struct {
		idle    int
		wantNew func(int) bool
		want    string
	}{
		{n, func(got int) bool { return got == 0 }, "none"},
		{16, func(got int) bool { return got > 0 }, "some"},
	} {
		var opened atomic.Int32
		var gate sync.WaitGroup
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(50 * time.Millisecond) // keep n calls in flight at once
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("[]"))
		}))
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				opened.Add(1)
			}
		}
		srv.Start()
		cfg := testConfig(srv.URL)
		cfg.IdleConns = tc.idle
		c, err := New(cfg, StaticToken(testToken))
		if err != nil {
			t.Fatal(err)
		}
		burst := func() {
			gate.Add(n)
			for range n {
				go func() {
					defer gate.Done()
					if _, err := c.ListRequests(context.Background()); err != nil {
						t.Error(err)
					}
				}()
			}
			gate.Wait()
		}
		burst()
		first := int(opened.Load())
		burst()
		newConns := int(opened.Load()) - first
		srv.Close()
		if first < n/2 {
			t.Fatalf("idle %d: first burst opened %d connections; the test needs about %d", tc.idle, first, n)
		}
		if !tc.wantNew(newConns) {
			t.Errorf("idle %d: second burst of %d calls opened %d new connections, want %s", tc.idle, n, newConns, tc.want)
		}
	}
}
