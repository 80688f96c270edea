package emulator

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// admin serves one call of the admin API; a refused one is its error.
func (e *Emulator) admin(w http.ResponseWriter, r *http.Request) *apiError {
	if !e.opts.AllowRemoteAdmin && !isLoopback(r.RemoteAddr) {
		return newError(http.StatusForbidden, CodeForbidden, "the admin API answers loopback clients only")
	}
	path := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, AdminPrefix), "/")
	var out any // the JSON of a 200 answer; none answers 204
	var aerr *apiError
	switch verb := r.Method + " " + path; {
	case verb == "GET state":
		out = e.State()
	case verb == "GET calls":
		out = e.Calls()
	case verb == "GET routes":
		out = Routes()
	case verb == "GET faults":
		list := []faultJSON{}
		for _, fi := range e.Faults() {
			list = append(list, toFaultJSON(fi))
		}
		out = list
	case verb == "POST requests":
		return e.adminSeed(w, r)
	case verb == "POST faults":
		return e.adminAddFault(w, r)
	case verb == "DELETE faults":
		e.ClearFaults()
	case r.Method == http.MethodDelete && strings.HasPrefix(path, "faults/"):
		if id := strings.TrimPrefix(path, "faults/"); !e.RemoveFault(id) {
			aerr = newError(http.StatusNotFound, CodeFaultNotFound, "no fault %s", id)
		}
	case r.Method == http.MethodPost && strings.HasPrefix(path, "requests/") && strings.HasSuffix(path, "/take"):
		// Another party accepts the request with its own referenceId.
		var in struct {
			ReferenceID string `json:"referenceId"`
		}
		if aerr = decodeAdmin(w, r, &in); aerr == nil {
			aerr = e.takeElsewhere(strings.TrimSuffix(strings.TrimPrefix(path, "requests/"), "/take"), in.ReferenceID)
		}
	case verb == "POST tokens/expire":
		e.ExpireTokens()
	case verb == "POST reset":
		e.Reset()
	case verb == "POST seed":
		var in struct {
			Seed uint64 `json:"seed"`
		}
		if aerr = decodeAdmin(w, r, &in); aerr == nil {
			e.SetSeed(in.Seed)
		}
	default:
		aerr = newError(http.StatusNotFound, CodeRouteNotFound, "no admin route %s %s", r.Method, r.URL.Path)
	}
	switch {
	case aerr != nil:
		return aerr
	case out != nil:
		writeJSON(w, http.StatusOK, out)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
	return nil
}

func isLoopback(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// decodeAdmin decodes an admin body strictly (unknown fields are errors).
func decodeAdmin(w http.ResponseWriter, r *http.Request, v any) *apiError {
	body, aerr := readAdmin(w, r)
	if aerr != nil {
		return aerr
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return newError(http.StatusBadRequest, CodeInvalidBody, "decode admin body: %v", err)
	}
	return nil
}

// readAdmin reads an admin body of any Content-Type.
func readAdmin(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	body, aerr := readCapped(w, r, DefaultMaxBodyBytes*8)
	if aerr == nil && len(body) == 0 {
		aerr = newError(http.StatusBadRequest, CodeInvalidBody, "body is empty; a JSON value is required")
	}
	return body, aerr
}

// adminSeed serves POST /_emulator/requests: an array of requests, one
// request object, or {"count":N} for N random requests.
func (e *Emulator) adminSeed(w http.ResponseWriter, r *http.Request) *apiError {
	body, aerr := readAdmin(w, r)
	if aerr != nil {
		return aerr
	}
	var ids []string
	if obj, _ := decodeObject(body, ""); obj != nil && obj["count"] != nil {
		if len(obj) != 1 {
			return newError(http.StatusBadRequest, CodeInvalidBody, `{"count":N} takes no other field`)
		}
		var n json.Number
		if aerr := (field{kind: kInteger, dst: &n}).decode(obj["count"], "count"); aerr != nil {
			return aerr
		}
		count, err := strconv.Atoi(string(n))
		if err != nil || count < 0 || count > MaxRandomRequests {
			return fieldError(CodeInvalidField, "count", "count must be 0 to %d", MaxRandomRequests)
		}
		ids = e.AddRandomRequests(count)
	} else {
		seeds, aerr := decodeSeeds(body)
		if aerr != nil {
			return aerr
		}
		ids = e.AddRequests(seeds...)
	}
	e.mu.Lock()
	aerr = e.commitLocked() // AddRequests does not report a failed save
	e.mu.Unlock()
	if aerr != nil {
		return aerr
	}
	writeJSON(w, http.StatusCreated, map[string][]string{"ids": ids})
	return nil
}

// decodeSeeds decodes an array of seed requests or a single one.
func decodeSeeds(body []byte) ([]SeedRequest, *apiError) {
	var seeds []SeedRequest
	seed := func(raw json.RawMessage, at string) *apiError {
		var sr SeedRequest
		var id itemID // string or number; absent: the next numeric id
		_, aerr := decodeFields(raw, at, []field{
			{name: "id", kind: kID, orNull: true, dst: &id},
			{name: "claim_number", kind: kString, orNull: true, dst: &sr.ClaimNumber},
			{name: "expiry", kind: kString, orNull: true, dst: &sr.Expiry},
			{name: "vehicle", kind: kObject, orNull: true, dst: &sr.Vehicle},
			{name: "accident", kind: kObject, orNull: true, dst: &sr.Accident},
			{name: "instructions", kind: kObject, orNull: true, dst: &sr.Instructions},
		}, unknown("unknown field %s; a seed request has id, claim_number, expiry, vehicle, accident and instructions"))
		sr.ID = id.text
		seeds = append(seeds, sr)
		return aerr
	}
	switch kind(body) {
	case "object":
		return seeds, seed(body, "")
	case "array":
		if json.Valid(body) {
			return seeds, elements(body, "", seed)
		}
	}
	return nil, newError(http.StatusBadRequest, CodeInvalidBody,
		`body must be an array of seed requests, one seed request or {"count":N}`)
}

// faultSpec is a Fault as the admin API takes it; durations are Go
// duration strings ("250ms", "2s").
type faultSpec struct {
	Route       string  `json:"route"`
	Action      string  `json:"action"`
	Status      int     `json:"status,omitempty"`
	RetryAfter  string  `json:"retryAfter,omitempty"`
	Latency     string  `json:"latency,omitempty"`
	Count       int     `json:"count,omitempty"`
	Probability float64 `json:"probability,omitempty"`
}

// faultJSON is a Fault in the admin API's list.
type faultJSON struct {
	ID string `json:"id,omitempty"`
	faultSpec
	Fired  int  `json:"fired"`
	Active bool `json:"active"`
}

func toFaultJSON(fi FaultInfo) faultJSON {
	fj := faultJSON{ID: fi.ID, faultSpec: faultSpec{Route: fi.Fault.Route, Action: fi.Fault.Action, Status: fi.Fault.Status,
		Count: fi.Fault.Count, Probability: fi.Fault.Probability}, Fired: fi.Fired, Active: fi.Active}
	if fi.Fault.RetryAfter > 0 {
		fj.RetryAfter = fi.Fault.RetryAfter.String()
	}
	if fi.Fault.Latency > 0 {
		fj.Latency = fi.Fault.Latency.String()
	}
	return fj
}

// adminAddFault serves POST /_emulator/faults.
func (e *Emulator) adminAddFault(w http.ResponseWriter, r *http.Request) *apiError {
	var in faultSpec
	if aerr := decodeAdmin(w, r, &in); aerr != nil {
		return aerr
	}
	f := Fault{Route: in.Route, Action: in.Action, Status: in.Status, Count: in.Count, Probability: in.Probability}
	for _, d := range []struct {
		name, text string
		dst        *time.Duration
	}{{"retryAfter", in.RetryAfter, &f.RetryAfter}, {"latency", in.Latency, &f.Latency}} {
		if d.text == "" {
			continue
		}
		v, err := time.ParseDuration(d.text)
		if err != nil {
			return fieldError(CodeInvalidField, d.name, "%s must be a duration such as \"2s\": %v", d.name, err)
		}
		*d.dst = v
	}
	if err := f.Validate(); err != nil {
		return newError(http.StatusBadRequest, CodeInvalidField, "%v", err)
	}
	writeJSON(w, http.StatusCreated, map[string]string{"id": e.AddFault(f)})
	return nil
}
