package emulator

import (
	"encoding/json"
	"slices"
	"time"
)

// History entry kinds: one per kind of successful state change.
const (
	HistoryAccept       = "accept"        // a request was accepted and its job created
	HistoryQuoteCreate  = "quote_create"  // POST /jobs/{id}/quotes created a quote (201)
	HistoryQuoteReplace = "quote_replace" // POST /jobs/{id}/quotes replaced a Draft (200)
	HistoryQuoteUpdate  = "quote_update"  // PUT /jobs/{id}/quotes/{type} updated a Draft
	HistoryStatusChange = "status_change" // a status route submitted a Draft
)

// Request states in RequestState.Status, as of the snapshot's Now.
const (
	RequestPending  = "pending"  // listed by GET /requests
	RequestAccepted = "accepted" // accepted; ReferenceID says with which referenceId
	RequestExpired  = "expired"  // not accepted before its expiry
)

// State is a deep copy of the emulator's data, as returned by
// Emulator.State and GET /_emulator/state.
type State struct {
	Now      time.Time      `json:"now"` // the emulator's clock when the copy was taken
	Requests []RequestState `json:"requests"`
	Jobs     []JobState     `json:"jobs"`
	History  []HistoryEntry `json:"history"`
}

// RequestState is one quote request, pending or not.
type RequestState struct {
	ID           string          `json:"id"`
	ClaimNumber  string          `json:"claim_number"`
	Expiry       time.Time       `json:"expiry"`
	Instructions json.RawMessage `json:"instructions,omitempty"`
	Vehicle      json.RawMessage `json:"vehicle,omitempty"`
	Accident     json.RawMessage `json:"accident,omitempty"`
	Status       string          `json:"status"`                // RequestPending, RequestAccepted or RequestExpired
	ReferenceID  string          `json:"referenceId,omitempty"` // the referenceId it was accepted with
	BookingDate  string          `json:"bookingDate,omitempty"` // as sent with the accept
	AcceptedAt   time.Time       `json:"acceptedAt,omitzero"`
}

// JobState is one job (an accepted request) with its quotes.
type JobState struct {
	ID          string       `json:"id"` // the referenceId
	RequestID   string       `json:"requestId"`
	ClaimNumber string       `json:"claim_number"`
	BookingDate string       `json:"bookingDate,omitempty"`
	CreatedAt   time.Time    `json:"createdAt"`
	NextItemID  int64        `json:"nextItemId"` // last numeric item id assigned in this job
	Quotes      []QuoteState `json:"quotes"`
}

// QuoteState is one quote of a job.
type QuoteState struct {
	Type        string          `json:"type"`
	Status      string          `json:"status"`      // StatusDraft or StatusSubmitted
	SubmitCount int             `json:"submitCount"` // times it became Submitted (1 at most when all is well)
	Writes      int             `json:"writes"`      // successful writes: create, replace, update, status change
	CreatedAt   time.Time       `json:"createdAt"`
	UpdatedAt   time.Time       `json:"updatedAt"`
	SubmittedAt time.Time       `json:"submittedAt,omitzero"`
	Body        json.RawMessage `json:"body"` // the quote as stored and answered
}

// HistoryEntry is one successful state change.
type HistoryEntry struct {
	Seq         int64           `json:"seq"` // 1, 2, 3… in order of the changes
	Time        time.Time       `json:"time"`
	Kind        string          `json:"kind"`  // History… constant
	Route       string          `json:"route"` // the route name, e.g. "POST /requests/{id}"
	RequestID   string          `json:"requestId,omitempty"`
	JobID       string          `json:"jobId"`
	QuoteType   string          `json:"quoteType,omitempty"`
	QuoteStatus string          `json:"quoteStatus,omitempty"` // the quote's status after the change
	Body        json.RawMessage `json:"body"`                  // the Job (accept) or the Quote as stored after the change
}

// Request returns the request with the given id.
func (s State) Request(id string) (RequestState, bool) {
	return find(s.Requests, func(r RequestState) bool { return r.ID == id })
}

// Job returns the job with the given id (referenceId).
func (s State) Job(id string) (JobState, bool) {
	return find(s.Jobs, func(j JobState) bool { return j.ID == id })
}

// Quote returns the job's quote of the given type.
func (j JobState) Quote(typ string) (QuoteState, bool) {
	return find(j.Quotes, func(q QuoteState) bool { return q.Type == typ })
}

func find[T any](list []T, match func(T) bool) (T, bool) {
	if i := slices.IndexFunc(list, match); i >= 0 {
		return list[i], true
	}
	var zero T
	return zero, false
}

// store is the emulator's data; the Emulator's mutex guards it. Its
// records are the State's own types, their derived fields (a request's
// Status, a job's Quotes, a quote's Body) filled in by snapshot.
type store struct {
	requests      map[string]*RequestState
	reqOrder      []string
	jobs          map[string]*job
	jobOrder      []string
	history       []HistoryEntry
	nextRequestID int64
}

type job struct {
	JobState
	quotes     map[string]*storedQuote
	quoteOrder []string
}

type storedQuote struct {
	QuoteState
	quote quote
}

func newStore() *store {
	return &store{requests: make(map[string]*RequestState), jobs: make(map[string]*job), nextRequestID: 1000}
}

// status is the request's state at now.
func (r *RequestState) status(now time.Time) string {
	switch {
	case r.ReferenceID != "":
		return RequestAccepted
	case !now.Before(r.Expiry):
		return RequestExpired
	default:
		return RequestPending
	}
}

func (s *store) record(h HistoryEntry) {
	h.Seq = 1
	if n := len(s.history); n > 0 {
		h.Seq = s.history[n-1].Seq + 1
	}
	s.history = append(s.history, h)
}

// snapshot copies the store into a State.
func (s *store) snapshot(now time.Time) State {
	st := State{Now: now, Requests: []RequestState{}, Jobs: []JobState{}, History: []HistoryEntry{}}
	for _, id := range s.reqOrder {
		r := *s.requests[id]
		r.Instructions, r.Vehicle, r.Accident = cloneRaw(r.Instructions), cloneRaw(r.Vehicle), cloneRaw(r.Accident)
		r.Status = r.status(now)
		st.Requests = append(st.Requests, r)
	}
	for _, id := range s.jobOrder {
		j := s.jobs[id]
		js := j.JobState
		js.Quotes = []QuoteState{}
		for _, typ := range j.quoteOrder {
			q := j.quotes[typ].QuoteState
			q.Type, q.Status, q.Body = typ, j.quotes[typ].quote.Status, j.quotes[typ].quote.render()
			js.Quotes = append(js.Quotes, q)
		}
		st.Jobs = append(st.Jobs, js)
	}
	for _, h := range s.history {
		h.Body = cloneRaw(h.Body)
		st.History = append(st.History, h)
	}
	return st
}

func cloneRaw(raw json.RawMessage) json.RawMessage { return slices.Clone(raw) }
