package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	qsync "github.com/quotesync/quotesync/sync"
)

// Actors of timeline lines.
const (
	actorDaemon = "quotesync"
	actorShop   = "shop"
	actorDemo   = "demo"
)

// ref names what a timeline line is about: an insurer, and one of its
// requests, claims or jobs; empty fields print as blanks.
type ref struct {
	Insurer, Request, Claim, Job string
}

// timeline prints the demo's story, one line per event, stamped with the
// time since the demo started. It is safe for concurrent use: the
// engine's goroutines and the shop's script print to it at once.
type timeline struct {
	start time.Time

	mu   sync.Mutex
	w    io.Writer
	held map[sent]bool // requests held for invalid shop data, not yet released
}

func newTimeline(w io.Writer, start time.Time) *timeline {
	return &timeline{w: w, start: start, held: make(map[sent]bool)}
}

// elapsed formats the time since the start as "mm:ss.t".
func (t *timeline) elapsed(at time.Time) string {
	d := max(at.Sub(t.start), 0).Truncate(100 * time.Millisecond)
	m := d / time.Minute
	s := (d % time.Minute).Seconds()
	return fmt.Sprintf("%02d:%04.1f", int(m), s)
}

// line prints one event.
func (t *timeline) line(at time.Time, actor string, r ref, text string) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %-9s  ", t.elapsed(at), actor)
	if r != (ref{}) {
		fmt.Fprintf(&b, "%-9s", r.Insurer)
	}
	if r.Request != "" || r.Claim != "" || r.Job != "" {
		col := func(label, v string, width int) {
			if v == "" {
				fmt.Fprintf(&b, "%-*s", width, "")
				return
			}
			fmt.Fprintf(&b, "%-*s", width, label+" "+v)
		}
		col("request", r.Request, 14)
		col("claim", r.Claim, 16)
		col("job", r.Job, 14)
	}
	b.WriteString(text)
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintln(t.w, strings.TrimRight(b.String(), " "))
}

func (t *timeline) shop(insurer, claim, job, format string, args ...any) {
	t.line(time.Now(), actorShop, ref{Insurer: insurer, Claim: claim, Job: job}, fmt.Sprintf(format, args...))
}

// pass prints the outcome of the n-th tick of an insurer's engine.
func (t *timeline) pass(n int, tick qsync.Tick) {
	now := time.Now()
	r := ref{Insurer: tick.Insurer}
	switch {
	case !tick.Leader && tick.Err == nil:
		t.line(now, actorDaemon, r, fmt.Sprintf("tick %d: standby, another instance holds the lock", n))
	case !tick.Ran:
		t.line(now, actorDaemon, r, fmt.Sprintf("tick %d: no pass: %v", n, tick.Err))
	case tick.Err != nil:
		t.line(now, actorDaemon, r, fmt.Sprintf("pass %d failed after %s: %v", n, round(tick.Summary.Duration), tick.Err))
	default:
		t.line(now, actorDaemon, r, fmt.Sprintf("pass %d done in %s: %s", n, round(tick.Summary.Duration), describe(tick.Summary)))
	}
}

func round(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

// describe lists what a pass changed, or says it had nothing to do.
func describe(s qsync.Summary) string {
	var parts []string
	for _, c := range []struct {
		n    int
		what string
	}{
		{s.Accepted, "accepted"}, {s.Drafted, "drafted"}, {s.Redrafted, "re-drafted"},
		{s.Submitted, "submitted"}, {s.Held, "held"}, {s.Waiting, "waiting"},
		{s.Retrying, "retrying"}, {s.Rejected, "rejected"}, {s.Gone, "gone"},
	} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("nothing to do (%d pending, %d tracked)", s.Pending, s.Tracked)
	}
	return strings.Join(parts, ", ")
}

// Observe renders one event of the daemon on the timeline, worded for a
// newcomer (it is a qsync.Observer). The pass summaries are left out: the
// tick lines give them.
func (t *timeline) Observe(ev qsync.Event) {
	r := ref{Insurer: ev.Insurer, Request: ev.Request, Claim: ev.Claim, Job: ev.Job}
	var text string
	switch ev.Kind {
	case qsync.EventPassDone, qsync.EventStale, qsync.EventSubmitDeferred:
		return
	case qsync.EventReserved:
		text = "job number reserved (recorded before the accept call)"
	case qsync.EventAccepted:
		text = "request accepted"
		if ev.Inferred {
			text = "request accepted (inferred: " + ev.Detail + ")"
		}
	case qsync.EventDrafted, qsync.EventRedrafted:
		text = "draft pushed: " + qsync.Plural(ev.Items, "item")
		if ev.Kind == qsync.EventRedrafted {
			text = "draft re-pushed: " + qsync.Plural(ev.Items, "item")
		}
		if t.release(r) || ev.Released {
			text += " (released: the shop fixed its data)"
		}
	case qsync.EventSubmitted:
		text = "quote submitted"
	case qsync.EventHeld:
		t.mu.Lock()
		t.held[sent{r.Insurer, r.Request}] = true
		t.mu.Unlock()
		text = "held, nothing pushed: " + errText(ev)
	case qsync.EventReleased:
		t.release(r)
		text = "released: the shop fixed its data"
	case qsync.EventLeader:
		r = ref{} // one lock for every insurer's engine
		text = "leadership acquired (GET_LOCK on the shop database): this instance runs the passes"
	case qsync.EventWaiting:
		text = "waiting: the shop has no job for this claim yet"
	default:
		text = string(ev.Kind)
		if d := errText(ev); d != "" {
			text += ": " + d
		}
	}
	at := ev.At
	if at.IsZero() {
		at = time.Now()
	}
	t.line(at, actorDaemon, r, text)
}

func errText(ev qsync.Event) string {
	if ev.Err != nil {
		return ev.Err.Error()
	}
	return ev.Detail
}

// release forgets that the request of r was held, reporting whether it was.
func (t *timeline) release(r ref) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := sent{r.Insurer, r.Request}
	was := t.held[k]
	delete(t.held, k)
	return was
}
