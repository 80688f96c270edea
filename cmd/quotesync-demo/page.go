package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/statuspage"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// DefaultPageAddr is where the demo serves the status page: loopback, a
// free port.
const DefaultPageAddr = "127.0.0.1:0"

// pageServer serves the daemon's status page over the demo's database,
// as `quotesync run` serves it on its listener.
type pageServer struct {
	url  string // the list's address
	srv  *http.Server
	done chan struct{}
}

// startPage serves the status page on addr, reading db, naming the
// insurers of d.
func startPage(addr string, st *store.Store, d *qsync.Daemon) (*pageServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("status page: listen on %s: %w", addr, err)
	}
	names := make([]string, len(d.Engines))
	for i, e := range d.Engines {
		names[i] = e.Insurer()
	}
	h := statuspage.New(statuspage.Options{Store: func() *store.Store { return st }, Insurers: func() []string { return names },
		Refresh: 5 * time.Second, Version: "demo"})
	p := &pageServer{url: "http://" + ln.Addr().String() + "/status",
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		_ = p.srv.Serve(ln)
	}()
	return p, nil
}

// linger keeps serving for d (0: not at all) or until ctx ends, saying
// so on w, then stops the server.
func (p *pageServer) linger(ctx context.Context, d time.Duration, w io.Writer) {
	if d > 0 {
		fmt.Fprintf(w, "\nthe status page stays at %s for %s (Ctrl-C stops it)\n", p.url, d)
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := p.srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		fmt.Fprintf(w, "status page: shut down: %v\n", err)
	}
	<-p.done
}
