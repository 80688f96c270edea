package emulator

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
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
	e.changed()
	e.mu.Unlock()
	_ = e.save()
	return ids
}

// addRequest inserts or updates one request and returns its id.
func (s *store) addRequest(sr SeedRequest, now time.Time) string {
	id := sr.ID
	if id == "" {
		for {
			s.nextRequestID++
			id = strconv.FormatInt(s.nextRequestID, 10)
			if s.requests[id] == nil {
				break
			}
		}
	} else if n, err := strconv.ParseInt(id, 10, 64); err == nil && n > s.nextRequestID {
		s.nextRequestID = n
	}
	r := s.requests[id]
	if r == nil {
		r = &request{id: id}
		s.requests[id] = r
		s.reqOrder = append(s.reqOrder, id)
	}
	r.claimNumber = sr.ClaimNumber
	if r.claimNumber == "" {
		r.claimNumber = "CLM-" + id
	}
	r.expiry = sr.Expiry
	if r.expiry.IsZero() {
		r.expiry = now.Add(DefaultRequestTTL)
	}
	r.expiry = r.expiry.UTC().Truncate(time.Second)
	r.vehicle, r.accident, r.instructions = objectOrNil(sr.Vehicle), objectOrNil(sr.Accident), objectOrNil(sr.Instructions)
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
// integer, else as a JSON string.
func idJSON(id string) []byte {
	if n, err := strconv.ParseUint(id, 10, 63); err == nil && strconv.FormatUint(n, 10) == id {
		return []byte(id)
	}
	b, _ := json.Marshal(id)
	return b
}

// render encodes a request as GET /requests lists it; documented gives
// the documented mode's form (string id, local expiry, claimNumber).
func (r *request) render(documented bool) []byte {
	var w jsonWriter
	w.open()
	if documented {
		w.value("id", r.id)
		w.value("expiry", r.expiry.In(documentedZone).Format(time.RFC3339))
		w.value("claimNumber", r.claimNumber)
	} else {
		w.raw("id", idJSON(r.id))
		w.value("expiry", r.expiry.UTC().Format(time.RFC3339))
		w.value("claim_number", r.claimNumber)
	}
	if r.instructions != nil {
		w.raw("instructions", r.instructions)
	} else {
		w.raw("instructions", []byte("{}"))
	}
	if r.vehicle != nil {
		w.raw("vehicle", r.vehicle)
	}
	if r.accident != nil {
		w.raw("accident", r.accident)
	}
	w.close()
	return w.buf.Bytes()
}

// render encodes a job as the accept answers it; documented gives the
// documented mode's form (string requestId, claimNumber).
func (j *job) render(documented bool) []byte {
	var w jsonWriter
	w.open()
	w.value("id", j.id)
	if documented {
		w.value("requestId", j.requestID)
		w.value("claimNumber", j.claimNumber)
	} else {
		w.raw("requestId", idJSON(j.requestID))
		w.value("claim_number", j.claimNumber)
	}
	if j.bookingDate != "" {
		w.value("bookingDate", j.bookingDate)
	}
	w.close()
	return w.buf.Bytes()
}

// listRequests serves GET /requests: pending, non-expired requests.
func (e *Emulator) listRequests(w http.ResponseWriter, _ *http.Request, _ params) {
	e.mu.Lock()
	now := e.now()
	var buf bytes.Buffer
	buf.WriteByte('[')
	n := 0
	for _, id := range e.st.reqOrder {
		r := e.st.requests[id]
		if r.status(now) != RequestPending {
			continue
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		buf.Write(r.render(e.documented()))
		n++
	}
	buf.WriteByte(']')
	e.mu.Unlock()
	writeRawJSON(w, http.StatusOK, buf.Bytes())
}

// accept serves POST /requests/{id}.
func (e *Emulator) accept(w http.ResponseWriter, r *http.Request, p params) {
	body, aerr := readBody(w, r, e.opts.MaxBodyBytes, true)
	if aerr != nil {
		e.writeError(w, aerr)
		return
	}
	ref, booking, aerr := decodeAccept(body)
	if aerr != nil {
		e.writeError(w, aerr)
		return
	}
	e.mu.Lock()
	j, aerr := e.acceptLocked(p.get("id"), ref, booking)
	var jobJSON []byte
	if aerr == nil {
		jobJSON = j.render(e.documented())
	}
	e.mu.Unlock()
	if aerr == nil {
		aerr = e.commit()
	}
	if aerr != nil {
		e.writeError(w, aerr)
		return
	}
	w.Header().Set("Location", baseURL(r)+APIPrefix+"/jobs/"+url.PathEscape(ref))
	writeRawJSON(w, http.StatusCreated, jobJSON)
}

// acceptLocked accepts request id with referenceId ref; e.mu is held.
func (e *Emulator) acceptLocked(id, ref, booking string) (*job, *apiError) {
	now := e.now()
	req := e.st.requests[id]
	switch {
	case req == nil:
		return nil, newError(http.StatusNotFound, CodeRequestNotFound, "request %s does not exist", id)
	case req.referenceID != "":
		return nil, e.alreadyAccepted(id, ref, req.referenceID)
	case req.status(now) == RequestExpired:
		return nil, newError(http.StatusGone, CodeRequestExpired,
			"request %s expired at %s", id, req.expiry.Format(time.RFC3339))
	}
	if other := e.st.jobs[ref]; other != nil {
		aerr := newError(http.StatusConflict, CodeReferenceInUse,
			"referenceId %q is already used by request %s", ref, other.requestID)
		aerr.detail.Field, aerr.detail.ReferenceID, aerr.detail.RequestID = "referenceId", ref, other.requestID
		return nil, aerr
	}
	j := &job{id: ref, requestID: id, claimNumber: req.claimNumber, bookingDate: booking,
		createdAt: now, quotes: make(map[string]*storedQuote)}
	e.st.jobs[ref] = j
	e.st.jobOrder = append(e.st.jobOrder, ref)
	req.referenceID, req.bookingDate, req.acceptedAt = ref, booking, now
	e.st.record(HistoryEntry{Time: now, Kind: HistoryAccept, Route: RouteAccept,
		RequestID: id, JobID: ref, Body: j.render(e.documented())})
	e.changed()
	return j, nil
}

// decodeAccept parses the accept body {"referenceId":…,"bookingDate":…}.
func decodeAccept(body []byte) (ref, booking string, aerr *apiError) {
	obj, aerr := decodeObject(body, "")
	if aerr != nil {
		return "", "", aerr
	}
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		raw := obj[name]
		switch name {
		case "referenceId":
			if ref, aerr = asString(raw, name); aerr != nil {
				return "", "", aerr
			}
			if aerr = checkReferenceID(ref); aerr != nil {
				return "", "", aerr
			}
		case "bookingDate":
			if booking, aerr = asString(raw, name); aerr != nil {
				return "", "", aerr
			}
			if _, err := time.Parse(time.DateOnly, booking); err != nil {
				return "", "", fieldError(CodeInvalidField, name, "bookingDate must be a date YYYY-MM-DD, got %q", booking)
			}
		default:
			return "", "", fieldError(CodeUnknownField, name, "unknown field %q; the accept body has referenceId and bookingDate", name)
		}
	}
	if _, ok := obj["referenceId"]; !ok {
		return "", "", fieldError(CodeMissingField, "referenceId", "referenceId is required")
	}
	return ref, booking, nil
}

// checkReferenceID enforces the emulator's bounds on a referenceId.
func checkReferenceID(ref string) *apiError {
	switch {
	case ref == "":
		return fieldError(CodeInvalidField, "referenceId", "referenceId must not be empty")
	case len([]rune(ref)) > MaxReferenceIDLength:
		return fieldError(CodeInvalidField, "referenceId", "referenceId is longer than %d characters", MaxReferenceIDLength)
	}
	for _, c := range ref {
		if unicode.IsControl(c) {
			return fieldError(CodeInvalidField, "referenceId", "referenceId contains a control character")
		}
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
