package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	qsync "github.com/quotesync/quotesync/sync"
)

func TestElapsed(t *testing.T) {
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tl := newTimeline(nil, start)
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "00:00.0"},
		{-time.Second, "00:00.0"},
		{1249 * time.Millisecond, "00:01.2"},
		{59999 * time.Millisecond, "00:59.9"},
		{61*time.Second + 500*time.Millisecond, "01:01.5"},
	} {
		if got := tl.elapsed(start.Add(tc.d)); got != tc.want {
			t.Errorf("elapsed(%s) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// TestTimelineCore feeds log entries shaped like the engine's through a
// zap logger on the timeline core and reads the lines it prints.
func TestTimelineCore(t *testing.T) {
	var out bytes.Buffer
	tl := newTimeline(&out, time.Now())
	log := newDemoLogger(tl, false, nil).Named("sync")
	req := log.With(zap.String("request", "7304"), zap.String("phase", "accepted"), zap.String("claim", "CLM-1005"), zap.String("job", "RO-50005"))

	log.Info(qsync.MsgLeader)
	req.Info(qsync.MsgAccepted, zap.Int("attempt", 1))
	req.Warn(qsync.MsgHeld, zap.Error(errors.New("job RO-50005 line 2 (line_id 11): column price is NULL")))
	req.Info(qsync.MsgDrafted, zap.Int("items", 2))
	req.Info(qsync.MsgRedrafted, zap.Int("items", 3))
	req.Info(qsync.MsgSubmitted)
	log.Info(qsync.MsgPassDone, zap.Int("accepted", 1))                     // left to the pass line
	log.Debug("pass done")                                                  // below the core's level
	log.Info("pass interrupted; the next pass takes over")                  // unknown: as is
	req.Info("estimate changed while the pass read it; submitting is left") // unknown, about a request: as is
	log.Warn("remote call failed; will retry", zap.Error(errors.New("503")))
	log.Named("mysql").Warn("mysql driver", zap.String("detail", "unexpected EOF"))
	tl.shop("CLM-1003", "RO-50003", "added %d lines", 3)
	tl.pass(2, qsync.Tick{Leader: true, Ran: true, Summary: qsync.Summary{Drafted: 3, Duration: 24 * time.Millisecond}})
	tl.pass(3, qsync.Tick{Leader: true, Ran: true, Summary: qsync.Summary{Pending: 0, Tracked: 6}})
	tl.pass(4, qsync.Tick{Leader: true, Ran: true, Err: errors.New("list pending requests: boom")})

	var got []string
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if len(line) < 9 || line[2] != ':' || line[5] != '.' {
			t.Fatalf("line %q does not start with the elapsed time", line)
		}
		got = append(got, line[9:])
	}
	r := "quotesync  request 7304  claim CLM-1005  job RO-50005  "
	want := []string{
		"quotesync  leadership acquired (GET_LOCK on the shop database): this instance runs the passes",
		r + "request accepted",
		r + "held, nothing pushed: job RO-50005 line 2 (line_id 11): column price is NULL",
		r + "draft pushed: 2 items (released: the shop fixed its data)",
		r + "draft re-pushed: 3 items",
		r + "quote submitted",
		"quotesync  pass interrupted; the next pass takes over",
		r + "estimate changed while the pass read it; submitting is left",
		"quotesync  WARN remote call failed; will retry: 503",
		"quotesync  WARN mysql driver: unexpected EOF",
		"shop                     claim CLM-1003  job RO-50003  added 3 lines",
		"quotesync  pass 2 done in 24ms: 3 drafted",
		"quotesync  pass 3 done in 0s: nothing to do (0 pending, 6 tracked)",
		"quotesync  pass 4 failed after 0s: list pending requests: boom",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
}
