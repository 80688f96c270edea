package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

// TestTimelineObserver feeds events shaped like the engine's to the
// timeline (it observes the engine) and reads the lines it prints.
func TestTimelineObserver(t *testing.T) {
	var out bytes.Buffer
	tl := newTimeline(&out, time.Now())
	req := func(kind qsync.EventKind) qsync.Event {
		return qsync.Event{Kind: kind, Insurer: "harbour", Request: "7300", Claim: "CLM-1005", Job: "RO-50005", To: qsync.PhaseAccepted}
	}
	tl.Observe(qsync.Event{Kind: qsync.EventLeader, Insurer: "acme"}) // the lock is every insurer's
	tl.Observe(req(qsync.EventAccepted))
	held := req(qsync.EventHeld)
	held.Err = errors.New("job RO-50005 line 2 (line_id 11): column price is NULL")
	tl.Observe(held)
	// acme's request of the same id was never held: its draft releases
	// nothing.
	tl.Observe(qsync.Event{Kind: qsync.EventDrafted, Insurer: "acme", Request: "7300", Claim: "CLM-2041", Job: "RO-50006", Items: 1})
	drafted := req(qsync.EventDrafted)
	drafted.Items, drafted.Released = 2, true // the engine marks the push that releases a held job
	tl.Observe(drafted)
	redrafted := req(qsync.EventRedrafted)
	redrafted.Items = 3
	tl.Observe(redrafted)
	tl.Observe(req(qsync.EventSubmitted))
	tl.Observe(qsync.Event{Kind: qsync.EventPassDone, Summary: &qsync.Summary{Accepted: 1}}) // left to the pass line
	tl.Observe(req(qsync.EventSubmitDeferred))                                               // not worth a line
	retrying := qsync.Event{Kind: qsync.EventRetrying, Insurer: "acme", Err: errors.New("503")}
	tl.Observe(retrying)
	tl.line(time.Now(), actorShop, ref{Insurer: "harbour", Claim: "CLM-1003", Job: "RO-50003"}, "added 3 lines")
	tl.pass(qsync.Tick{Insurer: "harbour", Leader: true, Ran: true, Summary: qsync.Summary{Drafted: 3, Duration: 24 * time.Millisecond}})
	tl.pass(qsync.Tick{Insurer: "acme", Leader: true, Ran: true, Summary: qsync.Summary{Pending: 0, Tracked: 6}})
	tl.pass(qsync.Tick{Insurer: "acme", Leader: true, Ran: true, Err: errors.New("list pending requests: boom")})
	tl.line(time.Now(), actorDemo, ref{}, "daemon stopped")

	var got []string
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if len(line) < 9 || line[2] != ':' || line[5] != '.' {
			t.Fatalf("line %q does not start with the elapsed time", line)
		}
		got = append(got, line[9:])
	}
	r := "quotesync  harbour  request 7300  claim CLM-1005  job RO-50005  "
	want := []string{
		"quotesync  leadership acquired (GET_LOCK on the shop database): this instance runs the passes",
		r + "request accepted",
		r + "held, nothing pushed: job RO-50005 line 2 (line_id 11): column price is NULL",
		"quotesync  acme     request 7300  claim CLM-2041  job RO-50006  draft pushed: 1 item",
		r + "draft pushed: 2 items (released: the shop fixed its data)",
		r + "draft re-pushed: 3 items",
		r + "quote submitted",
		"quotesync  acme     retrying: 503",
		"shop       harbour                claim CLM-1003  job RO-50003  added 3 lines",
		"quotesync  harbour  pass 1 done in 24ms: 3 drafted",
		"quotesync  acme     pass 1 done in 0s: nothing to do (0 pending, 6 tracked)",
		"quotesync  acme     pass 2 failed after 0s: list pending requests: boom",
		"demo       daemon stopped",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
}
