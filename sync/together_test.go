package sync_test

import (
	"strings"
	"testing"
	"time"

	qsync "github.com/quotesync/quotesync/sync"
)

// TestInsurersLive: the watchdog's question holds while at least one
// insurer's scheduler makes progress, and fails only when none does; its
// reason and /healthz name the insurers that make none.
func TestInsurersLive(t *testing.T) {
	p := newPair(t, nil)
	now := time.Now()
	ticked := func(names ...string) *qsync.Progress {
		prog := &qsync.Progress{}
		prog.Restart(now.Add(-time.Hour)) // every tick since is long overdue
		for _, n := range names {
			prog.Tick(qsync.Tick{Insurer: n, Leader: true, Ran: true}, now)
		}
		return prog
	}
	for _, tc := range []struct {
		name    string
		ticked  []string
		live    bool
		stuck   []string
		healthy bool
	}{
		{"Both", []string{"aa", "bb"}, true, nil, true},
		{"OnlyAa", []string{"aa"}, true, []string{"bb"}, true},
		{"OnlyBb", []string{"bb"}, true, []string{"aa"}, true},
		{"None", nil, false, []string{"aa", "bb"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prog := ticked(tc.ticked...)
			live, why := p.qd.Live(now, prog)
			if live != tc.live {
				t.Errorf("Live = %v (%s), want %v", live, why, tc.live)
			}
			ok, rep := p.qd.Health(now, prog, 0, nil)
			if ok != tc.healthy {
				t.Errorf("Health = %v %+v, want %v", ok, rep, tc.healthy)
			}
			for _, n := range pairNames {
				named := "insurer " + n + ": the scheduler has not ticked"
				want := false
				for _, s := range tc.stuck {
					want = want || s == n
				}
				if got := strings.Contains(why, named); got != want {
					t.Errorf("Live's reason %q names %s: %v, want %v", why, n, got, want)
				}
				if got := strings.Contains(rep.Reason, named); got != want {
					t.Errorf("/healthz reason %q names %s: %v, want %v", rep.Reason, n, got, want)
				}
			}
		})
	}
}
