package sync_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	qsync "github.com/quotesync/quotesync/sync"
)

// TestNextAttemptAfterTheAnswer: the backoff of a failed remote call counts
// from when its answer came, not from the start of the pass. Every call
// here takes ten minutes on the engine's clock (longer than the 1m
// backoff): a next_attempt counted from the pass start would lie before
// the log line that announces it, and the next pass would retry at once.
func TestNextAttemptAfterTheAnswer(t *testing.T) {
	for _, route := range []string{emulator.RouteAccept, emulator.RouteCreateQuote} {
		t.Run(route, func(t *testing.T) {
			r := newRig(t, rigOptions{remote: func(c *remote.Config) { c.MaxAttempts = 1 }})
			slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				r.clock.advance(10 * time.Minute)
				r.emu.ServeHTTP(w, req)
			}))
			t.Cleanup(slow.Close)
			r.restart(func(s *qsync.Settings) { s.Insurers[0].Remote.BaseURL = slow.URL })
			id := r.seed(sampleshop.ClaimDraft)[0]
			r.emu.AddFault(emulator.Fault{Route: route, Action: emulator.FaultStatus, Status: 503})
			if s := r.pass(); s.Retrying != 1 {
				t.Fatalf("pass: %+v, want 1 retrying", s)
			}
			evs := r.events.of(qsync.EventRetrying)
			if len(evs) != 1 {
				t.Fatalf("%d retrying events, want 1", len(evs))
			}
			// The line was logged before the pass ended.
			if ev, end := evs[0], r.clock.Now(); !ev.Next.After(end) {
				t.Errorf("next_attempt %s is not after the end of the pass that logged it (%s)", ev.Next.Format(time.TimeOnly), end.Format(time.TimeOnly))
			}
			row := r.row(id)
			if wait := row.NextAttemptAt.Sub(r.clock.Now()); wait < 40*time.Second {
				t.Errorf("next attempt in %s after the pass, want about the 1m backoff", wait)
			}
			before := r.emu.Calls()
			r.pass()
			if w := r.writes(before); len(w) != 0 {
				t.Errorf("the next pass retried before the backoff ran out: %v", w)
			}
		})
	}
}
