package main

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/statuspage"
	"github.com/quotesync/quotesync/cmd/internal/webauth"
	"github.com/quotesync/quotesync/remote/redact"
	"github.com/quotesync/quotesync/shopdb/store"
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

// liveFunc computes /livez's verdict: the watchdog's question.
type liveFunc func(now time.Time) (ok bool, why string)

// liveReport is the body of /livez.
type liveReport struct {
	Status string `json:"status"` // "ok" or "stuck"
	Reason string `json:"reason,omitempty"`
}

// obsHandler serves /metrics (Prometheus text format), /healthz and /livez.
func obsHandler(m *promMetrics, h healthFunc, live liveFunc) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.handler)
	// /livez answers what systemd's watchdog asks, for an orchestrator
	// that restarts on a failed liveness probe (Kubernetes): whether the
	// scheduler makes progress, standby or not. Unlike /healthz it stays
	// 200 while the database or the insurer's service is down, which a
	// restart does not mend.
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, r *http.Request) {
		if ok, why := live(time.Now()); !ok {
			verdict(w, false, liveReport{Status: "stuck", Reason: why}, "")
		} else {
			verdict(w, true, liveReport{Status: "ok"}, "")
		}
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), healthPingTimeout+time.Second)
		defer cancel()
		ok, rep := h(ctx)
		verdict(w, ok, rep, "  ")
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "quotesync "+version+": /metrics (Prometheus), /healthz (200 healthy, 503 not), /livez (200 while the scheduler makes progress), /status (the status page, unless metrics.status_page is false)")
	})
	return mux
}

// verdict answers a probe: rep as JSON (indented by indent), with 503
// when not ok.
func verdict(w http.ResponseWriter, ok bool, rep any, indent string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", indent)
	_ = enc.Encode(rep)
}

// obsServer is the running metrics listener.
type obsServer struct {
	addr  string // the address it listens on (the real port when :0 was asked)
	srv   *http.Server
	guard *webauth.Guard // its login
	cert  *webauth.Cert  // its certificate; nil: plain HTTP
	done  chan struct{}
}

// startObsServer listens on addr and serves guard until Close: over TLS
// with the certificate of cert, unless cert is nil.
func startObsServer(addr string, guard *webauth.Guard, cert *webauth.Cert, log *zap.Logger) (*obsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics.listen: listen on %s: %w", addr, err)
	}
	s := &obsServer{
		addr: ln.Addr().String(),
		srv: &http.Server{
			Handler:           guard,
			ReadHeaderTimeout: listenerReadTimeout,
			ReadTimeout:       listenerReadTimeout,
			WriteTimeout:      30 * time.Second,
			ErrorLog:          zap.NewStdLog(log.Named(loggerHTTP)),
		},
		guard: guard,
		cert:  cert,
		done:  make(chan struct{}),
	}
	if cert != nil {
		s.srv.TLSConfig = cert.TLSConfig()
	}
	go func() {
		defer close(s.done)
		var err error
		if cert != nil {
			err = s.srv.ServeTLS(ln, "", "") // the certificate comes from TLSConfig
		} else {
			err = s.srv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(msgMetricsFailed, zap.String(fieldAddr, s.addr), zap.Error(err))
		}
	}()
	log.Info(msgMetricsListen, zap.String(fieldAddr, s.addr), zap.Bool(fieldTLS, cert != nil))
	return s, nil
}

// startListener starts the listener of a configuration at addr: at the
// start, or on a reload while the running one (d.obs) still serves. When
// the running one holds the port so that the new one cannot bind beside
// it (the same address with TLS switched on or off, 0.0.0.0:P after
// 127.0.0.1:P), the running one is closed first, and the port answers
// nothing for that moment. Should the bind fail even then, the running
// one is started again as it was (d.obs) and the error rejects the
// reload: the caller must not fail after a success.
func (d *daemon) startListener(addr string, guard *webauth.Guard, cert *webauth.Cert) (*obsServer, error) {
	s, err := startObsServer(addr, guard, cert, d.log)
	if err == nil || !errors.Is(err, syscall.EADDRINUSE) {
		return s, err
	}
	old := d.listener()
	if old == nil || !samePort(old.addr, addr) {
		return nil, err // another program holds the port
	}
	d.log.Info(msgMetricsRebind, zap.String(fieldAddr, old.addr), zap.String(fieldNextAddr, addr))
	_ = old.Close()
	if s, err = startObsServer(addr, guard, cert, d.log); err == nil {
		return s, nil
	}
	back, berr := startObsServer(old.addr, old.guard, old.cert, d.log)
	if berr != nil {
		d.log.Error(msgMetricsLost, zap.String(fieldAddr, old.addr), zap.Error(berr))
		back = nil
	}
	d.mu.Lock()
	d.obs = back
	d.mu.Unlock()
	return nil, err
}

// listener is the running metrics listener; nil when none runs.
func (d *daemon) listener() *obsServer {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.obs
}

// samePort says whether two listen addresses name the same port.
func samePort(a, b string) bool {
	_, pa, errA := net.SplitHostPort(a)
	_, pb, errB := net.SplitHostPort(b)
	if errA != nil || errB != nil {
		return false
	}
	na, errA := net.LookupPort("tcp", pa)
	nb, errB := net.LookupPort("tcp", pb)
	return errA == nil && errB == nil && na == nb && na != 0
}

// apply puts a reloaded login in force: the users and the policy for the
// next requests, the certificate for the next connections.
func (s *obsServer) apply(a *listenerAuth) {
	if s == nil {
		return
	}
	s.guard.SetPolicy(a.policy())
	if s.cert != nil && a.pair != nil {
		s.cert.Store(a.pair)
	}
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

// redactAnswers is h with the secrets of set removed from the body of
// every answer: /healthz (the last pass's error), the status page (the
// errors quotesync kept, its health line), /metrics. The one door of the
// listener: each answer is held whole (a secret may span two writes),
// redacted, then sent, gzipped when the client accepts it (h is asked
// for no compression, so that it answers text).
func redactAnswers(set *redact.Secrets, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gz := acceptsGzip(r.Header.Get("Accept-Encoding"))
		r = r.Clone(r.Context())
		r.Header.Del("Accept-Encoding")
		held := &heldAnswer{header: w.Header(), status: http.StatusOK}
		h.ServeHTTP(held, r)
		body := []byte(set.Redact(held.body.String()))
		if gz && len(body) >= gzipMin && w.Header().Get("Content-Encoding") == "" {
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			_, _ = zw.Write(body)
			_ = zw.Close()
			body = b.Bytes()
			w.Header().Set("Content-Encoding", "gzip")
		}
		w.Header().Add("Vary", "Accept-Encoding")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(held.status)
		_, _ = w.Write(body)
	})
}

// gzipMin is the smallest answer redactAnswers compresses.
const gzipMin = 1024

// heldAnswer is the ResponseWriter redactAnswers hands its handler: the
// headers are the real ones, the status and the body are held.
type heldAnswer struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (a *heldAnswer) Header() http.Header { return a.header }

func (a *heldAnswer) WriteHeader(status int) {
	if !a.wrote {
		a.status, a.wrote = status, true
	}
}

func (a *heldAnswer) Write(p []byte) (int, error) {
	a.wrote = true
	return a.body.Write(p)
}

// acceptsGzip reports whether an Accept-Encoding header accepts gzip.
func acceptsGzip(h string) bool {
	for _, part := range strings.Split(h, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

// withStatusPage serves the status page (/status and below) beside obs,
// the listener's other handlers.
func withStatusPage(obs, page http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", obs)
	mux.Handle("/status", page)
	mux.Handle("/status/", page)
	return mux
}

// statusPage is the daemon's status page: it reads the database the
// daemon uses now (a reload swaps it) and is on while the running
// configuration's metrics.status_page says so.
func (d *daemon) statusPage(set *config.Settings) http.Handler {
	running := func() *config.Settings { // set until the daemon runs
		_, cur := d.current()
		return cmp.Or(cur, set)
	}
	return statuspage.New(statuspage.Options{
		Store: func() *store.Store {
			if qd, set := d.current(); qd != nil && set != nil {
				return qsync.RequestsStore(qd.Store, set.Daemon)
			}
			return nil
		},
		Insurers: func() []string { return running().Daemon.Names() },
		Enabled:  func() bool { return running().Metrics.StatusPageOn() },
		Health:   d.pageHealth,
		Location: set.Daemon.Sync.Location,
		Version:  version,
	})
}

// pageHealth is /healthz's verdict for the page, without the database
// ping (the page's own reads say whether the database answers).
func (d *daemon) pageHealth() (bool, string, time.Time) {
	qd, set := d.current()
	if qd == nil || set == nil {
		return false, "starting", time.Time{}
	}
	ok, rep := qd.Health(time.Now(), &d.prog, set.Metrics.HealthMaxAge, nil)
	last, _ := time.Parse(time.RFC3339, rep.LastSuccess)
	return ok, rep.Reason, last
}
