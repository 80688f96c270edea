package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// settings builds the world's configuration as the binary does, its
// secrets read from the credentials directory.
func (e *cliEnv) settings() *config.Settings {
	e.t.Helper()
	fc, err := config.Load(e.Conf)
	if err != nil {
		e.t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "CREDENTIALS_DIRECTORY" {
			return e.Creds
		}
		return os.Getenv(k)
	}
	set, err := fc.Build(config.BuildOptions{Getenv: getenv, Scope: config.AllSecrets, UserAgent: userAgent()})
	if err != nil {
		e.t.Fatal(err)
	}
	return set
}

// TestEveryPathReachesEveryObserver: whichever path writes a request's
// row — a pass's step (apply), the reservation's transaction, a request
// that could not be reserved (deferred, or rejected as too long for the
// shop), `quotesync retry` — goes through the engine's executor, so its
// event reaches every observer the daemon is assembled with: the log
// line, the Prometheus metrics, the outbox (the write-back the notice
// table gives the event queued with it, and nothing else), and any other
// observer (a recorder here).
func TestEveryPathReachesEveryObserver(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	core, logs := observer.New(zap.DebugLevel)
	m := newPromMetrics()
	var mu gosync.Mutex
	var seen []qsync.Event // what a recorder observes
	rec := observerFunc(func(ev qsync.Event) {
		mu.Lock()
		seen = append(seen, ev)
		mu.Unlock()
	})
	// count counts the events of kind for request ("": any); first is the
	// request of the first of kind.
	count := func(kind qsync.EventKind, request string) (n int, first string) {
		mu.Lock()
		defer mu.Unlock()
		for _, ev := range seen {
			if ev.Kind == kind && (request == "" || ev.Request == request) {
				if n++; n == 1 {
					first = ev.Request
				}
			}
		}
		return n, first
	}
	qd, err := qsync.Open(ctx, e.settings().Daemon, qsync.OpenOptions{Migrate: true, Log: zap.New(core),
		Observers: []qsync.Observer{m, rec}, ObserveCall: m.observe})
	if err != nil {
		t.Fatal(err)
	}
	defer qd.Close()

	// Two requests for one claim: one reserves its job, the other finds
	// the job held (deferred); a third's registration does not fit the
	// shop's column (rejected). Then a person retries the third.
	long := e.Emu.AddRequests(
		emulator.SeedRequest{ClaimNumber: sampleshop.ClaimDraft},
		emulator.SeedRequest{ClaimNumber: sampleshop.ClaimDraft},
		emulator.SeedRequest{ClaimNumber: "CLM-LONG", Vehicle: json.RawMessage(`{"registration":"THIS PLATE IS FAR TOO LONG FOR THE COLUMN"}`)},
	)[2]
	if _, err := qd.Engine.Pass(ctx); err != nil {
		t.Fatalf("pass: %v", err)
	}
	if _, after, err := qd.Engine.Retry(ctx, long, "column widened"); err != nil || after.Phase != qsync.PhaseWaiting {
		t.Fatalf("retry: %s, %v; want waiting", after.Phase, err)
	}
	_, reserved := count(qsync.EventReserved, "")
	_, deferred := count(qsync.EventReserveFailed, "")
	if reserved == "" || deferred == "" || reserved == deferred {
		t.Fatalf("reserved %q, deferred %q: want one request of each", reserved, deferred)
	}

	w := httptest.NewRecorder()
	m.handler.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	metrics := w.Body.String()
	ds, err := qd.Store.PendingDeliveries(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	queued := func(request, notice string) int {
		n := 0
		for _, d := range ds {
			if d.RequestID == request && d.Kind == notice && d.Target == store.TargetWriteBack {
				n++
			}
		}
		return n
	}
	deliveriesOf := func(request string) int {
		n := 0
		for _, d := range ds {
			if d.RequestID == request {
				n++
			}
		}
		return n
	}

	for _, tt := range []struct {
		path, request string
		kind          qsync.EventKind
		line          string // the log line
		series        string // a metric the event moves
		notice        string // the write-back it queues; "" none
		deliveries    int    // the request's deliveries after every path
	}{
		{"Reserve", reserved, qsync.EventReserved, "job number reserved",
			`quotesync_transitions_total{from="new",insurer="default",to="reserved"} 1`, "", 2},
		{"Apply", reserved, qsync.EventAccepted, "request accepted",
			`quotesync_transitions_total{from="reserved",insurer="default",to="accepted"} 1`, shopdb.WriteBackAccepted, 2},
		{"Deferred", deferred, qsync.EventReserveFailed, "job number not reserved; the request waits and is tried again",
			`quotesync_errors_total{insurer="default",kind="reserve"} 1`, "", 0},
		{"TooLong", long, qsync.EventRejected, "request rejected",
			`quotesync_transitions_total{from="new",insurer="default",to="rejected"} 1`, shopdb.WriteBackRejected, 2},
		{"Retry", long, qsync.EventRetry, "request put back into the flow",
			`quotesync_transitions_total{from="rejected",insurer="default",to="waiting"} 1`, shopdb.WriteBackRetried, 2},
	} {
		t.Run(tt.path, func(t *testing.T) {
			if got, _ := count(tt.kind, tt.request); got != 1 {
				t.Errorf("the recorder saw %d %s events of request %s, want 1", got, tt.kind, tt.request)
			}
			if got := logs.FilterMessage(tt.line).FilterField(zap.String("request", tt.request)).Len(); got != 1 {
				t.Errorf("%d log lines %q of request %s, want 1", got, tt.line, tt.request)
			}
			if !strings.Contains(metrics, tt.series) {
				t.Errorf("/metrics lacks %s", tt.series)
			}
			if tt.notice != "" && queued(tt.request, tt.notice) != 1 {
				t.Errorf("the outbox holds no %s write-back of request %s: %+v", tt.notice, tt.request, ds)
			}
			if got := deliveriesOf(tt.request); got != tt.deliveries {
				t.Errorf("the outbox holds %d deliveries of request %s, want %d (one per event the notice table maps): %+v", got, tt.request, tt.deliveries, ds)
			}
		})
	}
}

// observerFunc adapts a function to qsync.Observer.
type observerFunc func(qsync.Event)

// Observe calls f(ev).
func (f observerFunc) Observe(ev qsync.Event) { f(ev) }
