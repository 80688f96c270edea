package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"

	qsync "github.com/quotesync/quotesync/sync"
)

// Timeouts of the metrics listener.
const (
	healthPingTimeout   = 2 * time.Second
	listenerReadTimeout = 10 * time.Second
	listenerStopTimeout = 5 * time.Second
)

// healthFunc computes /healthz's verdict.
type healthFunc func(ctx context.Context) (bool, qsync.HealthReport)

// obsHandler serves /metrics (Prometheus text format) and /healthz.
func obsHandler(m *promMetrics, h healthFunc) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.reg.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), healthPingTimeout+time.Second)
		defer cancel()
		ok, rep := h(ctx)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "quotesync "+version+": /metrics (Prometheus), /healthz (200 healthy, 503 not), /status (the status page, unless metrics.status_page is false)")
	})
	return mux
}

// obsServer is the running metrics listener.
type obsServer struct {
	addr string // the address it listens on (the real port when :0 was asked)
	srv  *http.Server
	done chan struct{}
}

// startObsServer listens on addr and serves h until Close.
func startObsServer(addr string, h http.Handler, log *zap.Logger) (*obsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics.listen: listen on %s: %w", addr, err)
	}
	s := &obsServer{
		addr: ln.Addr().String(),
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: listenerReadTimeout,
			ReadTimeout:       listenerReadTimeout,
			WriteTimeout:      30 * time.Second,
			ErrorLog:          zap.NewStdLog(log.Named(loggerHTTP)),
		},
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(msgMetricsFailed, zap.String(fieldAddr, s.addr), zap.Error(err))
		}
	}()
	log.Info(msgMetricsListen, zap.String(fieldAddr, s.addr))
	return s, nil
}

// Close stops the listener, letting scrapes in flight finish for a moment.
func (s *obsServer) Close() error {
	if s == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), listenerStopTimeout)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	<-s.done
	return err
}
