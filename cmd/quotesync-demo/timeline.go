package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
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
// time since the demo started, and counts each insurer's passes. It is
// safe for concurrent use: the engines' goroutines and the shop's script
// print to it at once.
type timeline struct {
	start time.Time

	mu     sync.Mutex
	w      io.Writer
	passes map[string]int // ticks of each insurer's engine
}

func newTimeline(w io.Writer, start time.Time) *timeline {
	return &timeline{w: w, start: start, passes: make(map[string]int)}
}

// elapsed formats the time since the start as "mm:ss.t".
func (t *timeline) elapsed(at time.Time) string {
	d := max(at.Sub(t.start), 0).Truncate(100 * time.Millisecond)
	return fmt.Sprintf("%02d:%04.1f", int(d/time.Minute), (d % time.Minute).Seconds())
}

func (t *timeline) line(at time.Time, actor string, r ref, text string) {
	s := fmt.Sprintf("%s  %-9s  ", t.elapsed(at), actor)
	if r != (ref{}) {
		s += fmt.Sprintf("%-9s", r.Insurer)
	}
	if r.Request != "" || r.Claim != "" || r.Job != "" {
		s += fmt.Sprintf("%-14s%-16s%-14s", labeled("request", r.Request), labeled("claim", r.Claim), labeled("job", r.Job))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintln(t.w, strings.TrimRight(s+text, " "))
}

func labeled(label, v string) string {
	if v == "" {
		return ""
	}
	return label + " " + v
}

// pass counts a tick of an insurer's engine and prints its outcome.
func (t *timeline) pass(tick qsync.Tick) {
	t.mu.Lock()
	t.passes[tick.Insurer]++
	n := t.passes[tick.Insurer]
	t.mu.Unlock()
	text := fmt.Sprintf("pass %d done in %s: %s", n, round(tick.Summary.Duration), describe(tick.Summary))
	switch {
	case !tick.Ran:
		text = fmt.Sprintf("tick %d: no pass: %v", n, tick.Err)
	case tick.Err != nil:
		text = fmt.Sprintf("pass %d failed after %s: %v", n, round(tick.Summary.Duration), tick.Err)
	}
	t.line(time.Now(), actorDaemon, ref{Insurer: tick.Insurer}, text)
}

// round is how many passes every one of the n insurers has finished:
// the fewest of any.
func (t *timeline) round(n int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.passes) < n || len(t.passes) == 0 {
		return 0
	}
	return slices.Min(slices.Collect(maps.Values(t.passes)))
}

func (t *timeline) passCount(insurer string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.passes[insurer]
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

// eventWords word the daemon's events for a newcomer; other kinds show as
// "kind: detail".
var eventWords = map[qsync.EventKind]string{
	qsync.EventReserved:  "job number reserved (recorded before the accept call)",
	qsync.EventAccepted:  "request accepted",
	qsync.EventDrafted:   "draft pushed: ",
	qsync.EventRedrafted: "draft re-pushed: ",
	qsync.EventSubmitted: "quote submitted",
	qsync.EventHeld:      "held, nothing pushed: ",
	qsync.EventReleased:  "released: the shop fixed its data",
	qsync.EventLeader:    "leadership acquired (GET_LOCK on the shop database): this instance runs the passes",
	qsync.EventWaiting:   "waiting: the shop has no job for this claim yet",
}

// Observe renders one event of the daemon on the timeline (a
// qsync.Observer); pass summaries are left out: the tick lines give them.
func (t *timeline) Observe(ev qsync.Event) {
	r := ref{Insurer: ev.Insurer, Request: ev.Request, Claim: ev.Claim, Job: ev.Job}
	text, ok := eventWords[ev.Kind]
	detail := ev.Detail
	if ev.Err != nil {
		detail = ev.Err.Error()
	}
	switch ev.Kind {
	case qsync.EventPassDone, qsync.EventStale, qsync.EventSubmitDeferred:
		return
	case qsync.EventDrafted, qsync.EventRedrafted:
		text += qsync.Plural(ev.Items, "item")
		if ev.Released {
			text += " (released: the shop fixed its data)"
		}
	case qsync.EventHeld:
		text += detail
	case qsync.EventLeader:
		r = ref{} // one lock for every insurer's engine
	default:
		if !ok {
			text = strings.TrimSuffix(string(ev.Kind)+": "+detail, ": ")
		}
	}
	t.line(cmp.Or(ev.At, time.Now()), actorDaemon, r, text)
}
