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
	"slices"
	"strings"
	"time"

	"github.com/quotesync/quotesync/shopdb"
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
}

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

// requestOf describes a row.
func requestOf(r shopdb.Request) Request {
	out := Request{ID: r.RequestID, Claim: r.ClaimNumber, Job: r.JobNumber, ReleasedJob: r.ReleasedJob,
		Phase: string(r.Phase), Reason: string(r.Reason), Details: r.LastError,
		Held: qsync.Reason(r.Reason).Hold, NeedsPerson: qsync.NeedsPerson(r), Supplement: r.SupplementNeeded,
		Attempts: r.Attempts, NextAttempt: r.NextAttemptAt, Expiry: r.Expiry, Created: r.CreatedAt,
		Updated: r.UpdatedAt, PushedAt: r.PushedAt, SubmittedAt: r.SubmittedAt, PushedHash: r.PushedHash}
	out.PhaseWords, out.WayOut = phaseWords(r.Phase)
	switch {
	case r.Reason != qsync.ReasonNone:
		ri := qsync.Reason(r.Reason)
		out.ReasonWords, out.Fix = ri.Words, strings.ReplaceAll(ri.Fix, "REQUEST", r.RequestID)
	case r.SupplementNeeded:
		out.ReasonWords, out.Fix = qsync.SupplementWords, qsync.SupplementFix
	}
	return out
}

// phaseWords are the state machine's words for ph and its way out.
func phaseWords(ph shopdb.Phase) (words, wayOut string) {
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

// LoadStory reads one request and its timeline (the newest limit
// events; <= 0: DefaultTimelineLimit). shopdb.ErrNotFound when quotesync
// does not track it.
func LoadStory(ctx context.Context, db *shopdb.DB, requestID string, limit int) (Story, error) {
	r, err := db.Request(ctx, requestID)
	if err != nil {
		return Story{}, err
	}
	return storyOf(ctx, db, r, limit)
}

func storyOf(ctx context.Context, db *shopdb.DB, r shopdb.Request, limit int) (Story, error) {
	if limit <= 0 {
		limit = DefaultTimelineLimit
	}
	evs, err := db.Events(ctx, r.RequestID, limit+1)
	if err != nil {
		return Story{}, fmt.Errorf("read the timeline of request %s: %w", r.RequestID, err)
	}
	st := Story{Request: requestOf(r)}
	if len(evs) > limit { // newest first: the extra one is the oldest
		evs, st.Cut = evs[:limit], true
	}
	st.Steps = Timeline(evs)
	if n := len(st.Steps); n > 0 {
		st.Last = &st.Steps[n-1]
	}
	return st, nil
}

// FindStories reads the stories of every tracked request whose id is arg
// or that holds (or gave up) job number arg: a request id and a job
// number may look alike, and a job number given up may have been used
// again. ErrNotFound when there is none.
func FindStories(ctx context.Context, db *shopdb.DB, arg string, limit int) ([]Story, error) {
	var rows []shopdb.Request
	r, err := db.Request(ctx, arg)
	switch {
	case err == nil:
		rows = append(rows, r)
	case !errors.Is(err, shopdb.ErrNotFound):
		return nil, err
	}
	byJob, err := db.RequestsOfJob(ctx, arg)
	if err != nil {
		return nil, err
	}
	for _, j := range byJob {
		if !slices.ContainsFunc(rows, func(x shopdb.Request) bool { return x.RequestID == j.RequestID }) {
			rows = append(rows, j)
		}
	}
	if len(rows) == 0 {
		return nil, ErrNotFound
	}
	out := make([]Story, 0, len(rows))
	for _, r := range rows {
		st, err := storyOf(ctx, db, r, limit)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// PhaseCount is how many requests are in one phase.
type PhaseCount struct {
	Phase string
	Words string
	N     int
}

// List is one page of the list of requests.
type List struct {
	Requests   []Request
	Counts     []PhaseCount // every phase with requests, in the machine's order
	Total      int          // requests tracked
	Person     int          // requests that need a person
	PersonOnly bool         // the list shows only those
	Page       int          // 1-based
	Pages      int          // at least 1
	Size       int          // requests per page
	NoTables   bool         // quotesync's tables do not exist yet
}

// LoadList reads page (1-based) of the requests, size to a page
// (<= 0: DefaultPageSize), newest first, only those that need a person
// when personOnly, with the count of each phase: three statements.
func LoadList(ctx context.Context, db *shopdb.DB, personOnly bool, page, size int) (List, error) {
	if size <= 0 {
		size = DefaultPageSize
	}
	page = max(page, 1)
	l := List{PersonOnly: personOnly, Page: page, Size: size, Pages: 1}
	counts, err := db.PhaseCounts(ctx)
	if err != nil {
		return List{}, err
	}
	byPhase := map[shopdb.Phase]int{}
	for _, c := range counts {
		byPhase[c.Phase] += c.N
		l.Total += c.N
		if c.Reason != qsync.ReasonNone && qsync.Reason(c.Reason).Person {
			l.Person += c.N
		} else {
			l.Person += c.Supplements
		}
	}
	for _, p := range qsync.Phases() {
		if n := byPhase[p.Phase]; n > 0 {
			l.Counts = append(l.Counts, PhaseCount{Phase: string(p.Phase), Words: p.Words, N: n})
			delete(byPhase, p.Phase)
		}
	}
	for ph, n := range byPhase { // phases this quotesync does not know
		l.Counts = append(l.Counts, PhaseCount{Phase: string(ph), Words: "unknown phase", N: n})
	}
	shown := l.Total
	if personOnly {
		shown = l.Person
	}
	l.Pages = max(1, (shown+size-1)/size)
	q := shopdb.PageQuery{Offset: (page - 1) * size, Limit: size}
	if personOnly {
		q.Quiet = qsync.QuietReasons()
	}
	rows, err := db.RequestsPage(ctx, q)
	if errors.Is(err, shopdb.ErrNoStateTables) {
		l.NoTables = true
		return l, nil
	}
	if err != nil {
		return List{}, err
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.RequestID
	}
	last, err := db.LatestEvents(ctx, ids)
	if err != nil {
		return List{}, err
	}
	for _, r := range rows {
		req := requestOf(r)
		if ev, ok := last[r.RequestID]; ok {
			s := stepOf(ev)
			req.Last = &s
		}
		l.Requests = append(l.Requests, req)
	}
	return l, nil
}
