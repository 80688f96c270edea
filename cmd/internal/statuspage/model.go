// Package statuspage is quotesync's read-only status page, served by the
// daemon on its HTTP listener: every tracked request with its phase, what
// holds it or why it was refused in words (the state machine's own words,
// package sync), and each request's timeline from the event log. The
// same timelines are what `quotesync history` prints.
//
// It only reads quotesync's own tables, a bounded slice at a time, one
// read at a time, so that it never holds up a pass; it shows nothing
// secret (no token, no password, no request body).
package statuspage

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// Defaults of the reads.
const (
	// DefaultPageSize is how many requests one page of the list shows.
	DefaultPageSize = 50
	// DefaultTimelineLimit is how many events (the newest) one request's
	// timeline shows.
	DefaultTimelineLimit = 500
)

// Request is one tracked request as people see it.
type Request struct {
	Insurer     string `json:"insurer"` // whose service sent it
	ID          string `json:"request"`
	Claim       string `json:"claim"`
	Job         string `json:"job"`                    // the shop's job number (our referenceId); "" when none
	ReleasedJob string `json:"released_job,omitempty"` // the job number it gave up
	Phase       string `json:"phase"`
	PhaseWords  string `json:"phase_words"` // what the phase means
	WayOut      string `json:"way_out"`     // how a request leaves it
	Reason      string `json:"reason,omitempty"`
	// ReasonWords and Fix are the state machine's words for the reason
	// (or for a supplement needed), Fix with the request id filled in.
	ReasonWords string `json:"reason_words,omitempty"`
	Fix         string `json:"fix,omitempty"`
	Details     string `json:"details,omitempty"` // the reason's details (last_error), whole
	Held        bool   `json:"held"`
	NeedsPerson bool   `json:"needs_person"`
	Supplement  bool   `json:"supplement_needed"`
	Attempts    int    `json:"attempts,omitempty"`

	NextAttempt time.Time `json:"next_attempt_at,omitzero"`
	Expiry      time.Time `json:"expiry,omitzero"`
	Created     time.Time `json:"created_at"`
	Updated     time.Time `json:"updated_at"`
	PushedAt    time.Time `json:"pushed_at,omitzero"`
	SubmittedAt time.Time `json:"submitted_at,omitzero"`
	PushedHash  string    `json:"pushed_hash,omitempty"`

	// Last is the newest step of its timeline (the list's "last change").
	Last *Step `json:"-"`
	// Named: the insurer is shown, and its URL and Arg carry it (see
	// NameInsurers).
	Named bool `json:"-"`
}

// URL is the address of the request's page: /status/requests/ID, or
// /status/requests/INSURER/ID when Named.
func (r Request) URL() string {
	if r.Named && r.Insurer != "" {
		return "/status/requests/" + url.PathEscape(r.Insurer) + "/" + url.PathEscape(r.ID)
	}
	return "/status/requests/" + url.PathEscape(r.ID)
}

// Anchor is the id of the request's card in a list: request-ID, or
// request-INSURER/ID when Named (an insurer name holds no "/").
func (r Request) Anchor() string {
	if r.Named && r.Insurer != "" {
		return "request-" + r.Insurer + "/" + r.ID
	}
	return "request-" + r.ID
}

// Arg is how a command names the request (see CommandArg).
func (r Request) Arg() string { return CommandArg(r.Insurer, r.ID, r.Named) }

// JobShown is the job number, or the one given up in brackets.
func (r Request) JobShown() string {
	switch {
	case r.Job != "":
		return r.Job
	case r.ReleasedJob != "":
		return "(" + r.ReleasedJob + ")"
	}
	return ""
}

// RequestOf describes a row as people see it, its insurer named when
// named (see NameInsurers).
func RequestOf(r store.Request, named bool) Request {
	out := Request{Insurer: r.Insurer, Named: named, ID: r.RequestID, Claim: r.ClaimNumber, Job: r.JobNumber, ReleasedJob: r.ReleasedJob,
		Phase: string(r.Phase), Reason: string(r.Reason), Details: r.LastError,
		Held: qsync.Reason(r.Reason).Hold, NeedsPerson: qsync.NeedsPerson(r), Supplement: r.SupplementNeeded,
		Attempts: r.Attempts, NextAttempt: r.NextAttemptAt, Expiry: r.Expiry, Created: r.CreatedAt,
		Updated: r.UpdatedAt, PushedAt: r.PushedAt, SubmittedAt: r.SubmittedAt, PushedHash: r.PushedHash}
	out.PhaseWords, out.WayOut = phaseWords(r.Phase)
	switch {
	case r.Reason != qsync.ReasonNone:
		ri := qsync.Reason(r.Reason)
		out.ReasonWords, out.Fix = ri.Words, strings.ReplaceAll(ri.Fix, "REQUEST", out.Arg())
	case r.SupplementNeeded:
		out.ReasonWords, out.Fix = qsync.SupplementWords, qsync.SupplementFix
	}
	return out
}

func phaseWords(ph store.Phase) (words, wayOut string) {
	for _, p := range qsync.Phases() {
		if p.Phase == ph {
			return p.Words, strings.ReplaceAll(p.WayOut, "REQUEST", "the request")
		}
	}
	return "a phase this quotesync does not know (written by a newer one?)", ""
}

// Story is one request with its timeline.
type Story struct {
	Request
	Steps []Step `json:"timeline"` // oldest first
	// Cut: older events were left out (the newest DefaultTimelineLimit
	// are shown).
	Cut bool `json:"older_events_left_out,omitempty"`
}

// ErrNotFound: no tracked request has that id or job number.
var ErrNotFound = errors.New("no tracked request has that id or job number")

// AmbiguousError: a request id is tracked for several insurers and the
// lookup named none of them.
type AmbiguousError struct {
	ID      string
	Matches []Request // one per insurer, ordered by insurer; no timeline
}

func (e *AmbiguousError) Error() string {
	names := make([]string, len(e.Matches))
	for i, m := range e.Matches {
		names[i] = m.Insurer
	}
	return fmt.Sprintf("request %s is tracked for several insurers (%s)", e.ID, strings.Join(names, ", "))
}

// LoadStory reads one request, of key's insurer, and its timeline (the
// newest limit events; <= 0: DefaultTimelineLimit), its insurer named as
// NameInsurers says for configured. store.ErrNotFound when quotesync
// does not track it.
func LoadStory(ctx context.Context, db *store.Store, key store.RequestKey, configured []string, limit int) (Story, error) {
	r, err := db.Insurer(key.Insurer).Request(ctx, key.RequestID)
	if err != nil {
		return Story{}, err
	}
	return storyOf(ctx, db, r, NameInsurers(configured, r.Insurer), limit)
}

func storyOf(ctx context.Context, db *store.Store, r store.Request, named bool, limit int) (Story, error) {
	if limit <= 0 {
		limit = DefaultTimelineLimit
	}
	evs, err := db.Insurer(r.Insurer).Events(ctx, r.RequestID, limit+1)
	if err != nil {
		return Story{}, fmt.Errorf("read the timeline of request %s: %w", r.RequestID, err)
	}
	st := Story{Request: RequestOf(r, named)}
	if len(evs) > limit { // newest first: the extra one is the oldest
		evs, st.Cut = evs[:limit], true
	}
	st.Steps = Timeline(evs)
	if n := len(st.Steps); n > 0 {
		st.Last = &st.Steps[n-1]
	}
	return st, nil
}

// Lookup says which requests FindStories reads.
type Lookup struct {
	// Arg is a request id or a shop job number.
	Arg string
	// IDOnly: Arg is a request id, not a job number.
	IDOnly bool
	// Insurer, when set, keeps that insurer's requests only.
	Insurer string
	// Configured are the configured insurers' names: with one, a request
	// id names its request when it has one (as retry reads it); they
	// also decide whether the stories name their insurer (NameInsurers).
	Configured []string
	// Limit is the newest events read of each request (<= 0:
	// DefaultTimelineLimit).
	Limit int
}

// FindStories reads the stories of every tracked request whose id is
// l.Arg or that holds (or gave up) job number l.Arg: a request id and a
// job number may look alike, and a job number given up may have been
// used again. ErrNotFound when there is none; *AmbiguousError when the
// id is tracked for several insurers and l names none (a job number is
// held by one request at most, whatever its insurer).
func FindStories(ctx context.Context, db *store.Store, l Lookup) ([]Story, error) {
	rows, err := requestsOfID(ctx, db, l)
	if err != nil {
		return nil, err
	}
	if !l.IDOnly {
		byJob, err := db.RequestsOfJob(ctx, l.Arg)
		if err != nil {
			return nil, err
		}
		for _, j := range byJob {
			if (l.Insurer == "" || j.Insurer == l.Insurer) &&
				!slices.ContainsFunc(rows, func(x store.Request) bool { return x.Key() == j.Key() }) {
				rows = append(rows, j)
			}
		}
	}
	if len(rows) == 0 {
		return nil, ErrNotFound
	}
	var insurers []string
	for _, r := range rows {
		insurers = append(insurers, r.Insurer)
	}
	named := NameInsurers(l.Configured, insurers...)
	out := make([]Story, 0, len(rows))
	for _, r := range rows {
		st, err := storyOf(ctx, db, r, named, l.Limit)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// requestsOfID returns the requests the id l.Arg names: l.Insurer's; with
// one insurer configured, its request when it has one; else every
// insurer's, an *AmbiguousError when there are several.
func requestsOfID(ctx context.Context, db *store.Store, l Lookup) ([]store.Request, error) {
	if l.Insurer != "" {
		r, err := db.Insurer(l.Insurer).Request(ctx, l.Arg)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, nil
		case err != nil:
			return nil, err
		}
		return []store.Request{r}, nil
	}
	rows, err := db.RequestsByID(ctx, l.Arg)
	if err != nil || len(rows) < 2 {
		return rows, err
	}
	if len(l.Configured) == 1 {
		for _, r := range rows {
			if r.Insurer == l.Configured[0] {
				return []store.Request{r}, nil
			}
		}
	}
	amb := &AmbiguousError{ID: l.Arg}
	for _, r := range rows {
		amb.Matches = append(amb.Matches, RequestOf(r, true))
	}
	return nil, amb
}
