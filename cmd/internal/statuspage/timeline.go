package statuspage

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// Step is one entry of a request's timeline: an event of quotesync's
// event log, in words.
type Step struct {
	At    time.Time `json:"at"`
	Kind  string    `json:"kind"`  // the event kind as stored, e.g. "drafted"
	What  string    `json:"what"`  // what happened, in words
	Words string    `json:"words"` // the reason's words, when the event has a reason
	// Details are the event's own details (an error, a note), whole.
	Details string `json:"details,omitempty"`
	From    string `json:"from,omitempty"` // the phase before, for a change of phase
	To      string `json:"to,omitempty"`   // the phase after
	Reason  string `json:"reason,omitempty"`
	Job     string `json:"job,omitempty"`   // the job number (our referenceId) at the time
	Items   int    `json:"items,omitempty"` // a Draft: how many lines
	Hash    string `json:"hash,omitempty"`  // a Draft, a submit: the quote's hash
	Route   string `json:"route,omitempty"` // a remote call: its route
	Status  int    `json:"status,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
}

// Timeline turns events (in any order) into steps, oldest first.
func Timeline(evs []store.Event) []Step {
	evs = slices.Clone(evs)
	slices.SortFunc(evs, func(a, b store.Event) int { return cmp.Compare(a.ID, b.ID) })
	out := make([]Step, 0, len(evs))
	for _, ev := range evs {
		out = append(out, stepOf(ev))
	}
	return out
}

// stepOf describes one event.
func stepOf(ev store.Event) Step {
	s := Step{At: ev.At, Kind: ev.Kind, Details: ev.Message, From: string(ev.From), To: string(ev.To),
		Reason: string(ev.Reason), Job: ev.Job, Items: ev.Items, Hash: ev.Hash, Route: ev.Route,
		Status: ev.Status, Attempt: ev.Attempt}
	if ev.Reason != qsync.ReasonNone {
		s.Words = qsync.Reason(ev.Reason).Words
		// The engine stores the words ahead of the cause: say them once.
		s.Details = strings.TrimPrefix(strings.TrimPrefix(s.Details, s.Words), "; ")
	}
	s.What = what(ev)
	return s
}

// what says in words what ev reports; the reason's words (Step.Words)
// and the details come beside it.
func what(ev store.Event) string {
	first := ev.From == "" && ev.To != "" // the request's first event: it was listed
	job := ev.Job
	switch qsync.EventKind(ev.Kind) {
	case qsync.EventWaiting:
		if first {
			return "listed by the insurer; the shop has no job for the claim yet"
		}
		return "waiting for a job in the shop"
	case qsync.EventReserveFailed:
		if first {
			return "listed by the insurer; finding or creating the shop's job failed"
		}
		return "finding or creating the shop's job failed"
	case qsync.EventReserved:
		if first {
			return fmt.Sprintf("listed by the insurer; job %s reserved for it", job)
		}
		return fmt.Sprintf("job %s reserved for it", job)
	case qsync.EventAccepted:
		return fmt.Sprintf("accepted with referenceId %s", job)
	case qsync.EventAcceptUnknown:
		return fmt.Sprintf("accept with referenceId %s probably landed (its answer was lost)", job)
	case qsync.EventAcceptConflict:
		return fmt.Sprintf("the accept with referenceId %s was refused as a conflict; tried again", job)
	case qsync.EventTakenElsewhere:
		return "taken by someone else"
	case qsync.EventDrafted:
		return fmt.Sprintf("Draft pushed: %s, hash %s", qsync.Plural(ev.Items, "line"), short(ev.Hash))
	case qsync.EventRedrafted:
		return fmt.Sprintf("Draft pushed again after a change: %s, hash %s", qsync.Plural(ev.Items, "line"), short(ev.Hash))
	case qsync.EventSubmitted:
		if ev.Hash != "" {
			return fmt.Sprintf("Submitted for assessment (the Draft with hash %s)", short(ev.Hash))
		}
		return "Submitted for assessment"
	case qsync.EventSupplement:
		return "the shop's lines changed after submission: a supplement is needed (never pushed)"
	case qsync.EventRejected:
		return "rejected by the remote"
	case qsync.EventGone:
		if first {
			return "listed by the insurer, and gone before quotesync could accept it"
		}
		return "gone: expired or left the pending list before our accept landed"
	case qsync.EventHeld:
		return "held: nothing is pushed until the cause is fixed"
	case qsync.EventReleased:
		return "released: the job's data is valid again"
	case qsync.EventRetrying:
		return fmt.Sprintf("a remote call failed for now (attempt %d); tried again after a backoff", ev.Attempt)
	case qsync.EventUnreadable:
		return "the remote took the write; its answer could not be read"
	case qsync.EventRetry:
		return "put back into the flow by a person (quotesync retry)"
	}
	return ev.Kind
}

// short is the first twelve characters of a hash (enough to tell two
// Drafts apart on a screen), "-" for none.
func short(h string) string {
	switch {
	case h == "":
		return "-"
	case len(h) > 12:
		return h[:12]
	}
	return h
}
