package emulator

import (
	"cmp"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// MaxReferenceIDLength bounds a referenceId (the seed gives no limit).
const MaxReferenceIDLength = 100

// SeedRequest is a quote request to add to the emulator.
type SeedRequest struct {
	// ID is the request id; "" means the next free numeric id. Numeric ids
	// travel as JSON numbers, others as JSON strings. Adding an id that
	// exists replaces its claim number, expiry and objects and keeps its
	// acceptance.
	ID string
	// ClaimNumber is the claim the request belongs to; "" means "CLM-<id>".
	ClaimNumber string
	// Expiry is when the request stops being pending; zero means
	// DefaultRequestTTL from now. It is kept to the second.
	Expiry time.Time
	// Vehicle, Accident and Instructions are JSON objects listed as they
	// are; nil (or anything that is not a JSON object) leaves vehicle and
	// accident out and lists instructions as {}.
	Vehicle, Accident, Instructions json.RawMessage
}

// AddRequests adds pending quote requests and returns their ids in order.
// With StatePath set, a failed save is reported by the next API call that
// changes state (and retried by it).
func (e *Emulator) AddRequests(reqs ...SeedRequest) []string {
	e.mu.Lock()
	now := e.now()
	ids := make([]string, 0, len(reqs))
	for _, sr := range reqs {
		ids = append(ids, e.st.addRequest(sr, now))
	}
	_ = e.commitLocked()
	e.mu.Unlock()
	return ids
}

// addRequest inserts or updates one request and returns its id.
func (s *store) addRequest(sr SeedRequest, now time.Time) string {
	id := sr.ID
	if n, err := strconv.ParseInt(id, 10, 64); err == nil && n > s.nextRequestID {
		s.nextRequestID = n
	}
	for id == "" {
		s.nextRequestID++
		if next := strconv.FormatInt(s.nextRequestID, 10); s.requests[next] == nil {
			id = next
		}
	}
	r := s.requests[id]
	if r == nil {
		r = &RequestState{ID: id}
		s.requests[id] = r
		s.reqOrder = append(s.reqOrder, id)
	}
	r.ClaimNumber = cmp.Or(sr.ClaimNumber, "CLM-"+id)
	r.Expiry = sr.Expiry
	if r.Expiry.IsZero() {
		r.Expiry = now.Add(DefaultRequestTTL)
	}
	r.Expiry = r.Expiry.UTC().Truncate(time.Second)
	r.Vehicle, r.Accident, r.Instructions = objectOrNil(sr.Vehicle), objectOrNil(sr.Accident), objectOrNil(sr.Instructions)
	return id
}

// objectOrNil returns raw compacted when it is a JSON object, else nil.
func objectOrNil(raw json.RawMessage) json.RawMessage {
	if kind(raw) != "object" || !json.Valid(raw) {
		return nil
	}
	return compactRaw(cloneRaw(raw))
}

// idJSON encodes an id as a JSON number when it is a canonical decimal
// integer, else (and in the documented mode) as a JSON string.
func idJSON(id string, documented bool) json.RawMessage {
	if n, err := strconv.ParseUint(id, 10, 63); err == nil && strconv.FormatUint(n, 10) == id && !documented {
		return json.RawMessage(id)
	}
	b, _ := json.Marshal(id)
	return b
}

// render encodes a request as GET /requests lists it; documented gives
// the documented mode's form (string id, local expiry, claimNumber).
func (r *RequestState) render(documented bool) []byte {
	w := struct {
		ID           json.RawMessage `json:"id"`
		Expiry       string          `json:"expiry"`
		Claim        *string         `json:"claim_number,omitempty"`
		ClaimDoc     *string         `json:"claimNumber,omitempty"`
		Instructions json.RawMessage `json:"instructions"`
		Vehicle      json.RawMessage `json:"vehicle,omitempty"`
		Accident     json.RawMessage `json:"accident,omitempty"`
	}{ID: idJSON(r.ID, documented), Expiry: r.Expiry.UTC().Format(time.RFC3339), Claim: &r.ClaimNumber,
		Instructions: r.Instructions, Vehicle: r.Vehicle, Accident: r.Accident}
	if documented {
		w.Expiry, w.Claim, w.ClaimDoc = r.Expiry.In(documentedZone).Format(time.RFC3339), nil, &r.ClaimNumber
	}
	if w.Instructions == nil {
		w.Instructions = json.RawMessage("{}")
	}
	b, _ := marshal(w)
	return b
}

// render encodes a job as the accept answers it; documented gives the
// documented mode's form (string requestId, claimNumber).
func (j *job) render(documented bool) []byte {
	w := struct {
		ID          string          `json:"id"`
		RequestID   json.RawMessage `json:"requestId"`
		Claim       *string         `json:"claim_number,omitempty"`
		ClaimDoc    *string         `json:"claimNumber,omitempty"`
		BookingDate string          `json:"bookingDate,omitempty"`
	}{j.ID, idJSON(j.RequestID, documented), &j.ClaimNumber, nil, j.BookingDate}
	if documented {
		w.Claim, w.ClaimDoc = nil, &j.ClaimNumber
	}
	b, _ := marshal(w)
	return b
}

// listRequests serves GET /requests: pending, non-expired requests.
func (e *Emulator) listRequests(w http.ResponseWriter, _ *http.Request) {
	e.mu.Lock()
	now, list := e.now(), []json.RawMessage{}
	for _, id := range e.st.reqOrder {
		if r := e.st.requests[id]; r.status(now) == RequestPending {
			list = append(list, r.render(e.documented()))
		}
	}
	e.mu.Unlock()
	writeJSON(w, http.StatusOK, list)
}

// accept serves POST /requests/{id}.
func (e *Emulator) accept(w http.ResponseWriter, r *http.Request) {
	body, aerr := readBody(w, r, e.opts.MaxBodyBytes, true)
	var ref, booking string
	if aerr == nil {
		ref, booking, aerr = decodeAccept(body)
	}
	var out []byte
	if aerr == nil {
		out, aerr = e.acceptRequest(r.PathValue("id"), ref, booking)
	}
	if aerr == nil {
		w.Header().Set("Location", baseURL(r)+APIPrefix+"/jobs/"+url.PathEscape(ref))
	}
	e.answerChange(w, http.StatusCreated, out, aerr)
}

// acceptRequest accepts request id with referenceId ref and returns the
// job created, as answered.
func (e *Emulator) acceptRequest(id, ref, booking string) ([]byte, *apiError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	req := e.st.requests[id]
	switch {
	case req == nil:
		return nil, newError(http.StatusNotFound, CodeRequestNotFound, "request %s does not exist", id)
	case req.ReferenceID != "":
		return nil, e.alreadyAccepted(id, ref, req.ReferenceID)
	case req.status(now) == RequestExpired:
		return nil, newError(http.StatusGone, CodeRequestExpired,
			"request %s expired at %s", id, req.Expiry.Format(time.RFC3339))
	}
	if other := e.st.jobs[ref]; other != nil {
		aerr := newError(http.StatusConflict, CodeReferenceInUse,
			"referenceId %q is already used by request %s", ref, other.RequestID)
		aerr.detail.Field, aerr.detail.ReferenceID, aerr.detail.RequestID = "referenceId", ref, other.RequestID
		return nil, aerr
	}
	j := &job{JobState: JobState{ID: ref, RequestID: id, ClaimNumber: req.ClaimNumber, BookingDate: booking, CreatedAt: now},
		quotes: make(map[string]*storedQuote)}
	e.st.jobs[ref] = j
	e.st.jobOrder = append(e.st.jobOrder, ref)
	req.ReferenceID, req.BookingDate, req.AcceptedAt = ref, booking, now
	out := j.render(e.documented())
	e.st.record(HistoryEntry{Time: now, Kind: HistoryAccept, Route: RouteAccept, RequestID: id, JobID: ref, Body: out})
	return out, e.commitLocked()
}

// decodeAccept parses the accept body {"referenceId":…,"bookingDate":…}.
// What was read comes back beside an error; use it only without one.
func decodeAccept(body []byte) (ref, booking string, aerr *apiError) {
	_, aerr = decodeFields(body, "", []field{
		{name: "referenceId", kind: kString, required: true, dst: &ref,
			check: func(json.RawMessage, string) *apiError { return checkReferenceID(ref) }},
		{name: "bookingDate", kind: kString, dst: &booking, check: func(_ json.RawMessage, f string) *apiError {
			if _, err := time.Parse(time.DateOnly, booking); err != nil {
				return fieldError(CodeInvalidField, f, "bookingDate must be a date YYYY-MM-DD, got %q", booking)
			}
			return nil
		}},
	}, unknown("unknown field %q; the accept body has referenceId and bookingDate"))
	return ref, booking, aerr
}

// checkReferenceID enforces the emulator's bounds on a referenceId.
func checkReferenceID(ref string) *apiError {
	switch {
	case ref == "":
		return fieldError(CodeInvalidField, "referenceId", "referenceId must not be empty")
	case len([]rune(ref)) > MaxReferenceIDLength:
		return fieldError(CodeInvalidField, "referenceId", "referenceId is longer than %d characters", MaxReferenceIDLength)
	case strings.ContainsFunc(ref, unicode.IsControl):
		return fieldError(CodeInvalidField, "referenceId", "referenceId contains a control character")
	}
	return nil
}

// baseURL is the scheme and host the client used to reach the emulator.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
		scheme = p
	}
	return scheme + "://" + r.Host
}
