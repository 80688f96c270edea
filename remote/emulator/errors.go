package emulator

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
)

// Error codes of the error body (error.code), with their statuses.
const (
	CodeInvalidBody            = "invalid_body"             // 400: not a JSON object, empty, trailing data
	CodeMissingField           = "missing_field"            // 400: a required field is absent
	CodeInvalidField           = "invalid_field"            // 400: a field has the wrong type or value
	CodeUnknownField           = "unknown_field"            // 400: a field the accept body does not know
	CodeUnauthorized           = "unauthorized"             // 401: missing or wrong bearer token
	CodeForbidden              = "forbidden"                // 403: admin API called from a non-loopback peer
	CodeRequestNotFound        = "request_not_found"        // 404
	CodeJobNotFound            = "job_not_found"            // 404
	CodeQuoteNotFound          = "quote_not_found"          // 404
	CodeFaultNotFound          = "fault_not_found"          // 404 (admin API)
	CodeRouteNotFound          = "route_not_found"          // 404: no such path
	CodeMethodNotAllowed       = "method_not_allowed"       // 405: path known, method not
	CodeRequestAlreadyAccepted = "request_already_accepted" // 409
	CodeReferenceInUse         = "reference_in_use"         // 409
	CodeQuoteSubmitted         = "quote_submitted"          // 409: modifying a Submitted quote
	CodeQuoteAlreadySubmitted  = "quote_already_submitted"  // 409: submitting a Submitted quote
	CodeRequestExpired         = "request_expired"          // 410
	CodeBodyTooLarge           = "body_too_large"           // 413
	CodeUnsupportedMediaType   = "unsupported_media_type"   // 415
	CodeInjectedFault          = "injected_fault"           // any status: answered by a "status" fault
	CodeStateSaveFailed        = "state_save_failed"        // 500: the change is applied in memory, not on disk
)

// ErrorBody is the JSON body of every error answer (the package
// documentation shows one).
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inside of ErrorBody. Field names the offending body
// field ("referenceId", "items[2].quantity") for 400 answers; ReferenceID and
// RequestID say which acceptance a 409 of accept collided with.
type ErrorDetail struct {
	Code        string `json:"code"`
	Message     string `json:"message"`
	Field       string `json:"field,omitempty"`
	ReferenceID string `json:"referenceId,omitempty"`
	RequestID   string `json:"requestId,omitempty"`
}

type apiError struct {
	status int
	detail ErrorDetail
	plain  string // ModeDocumented's text, when not detail.Message
	body   []byte // ModeDocumented's JSON body, when it has one
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.status, e.detail.Code, e.detail.Message)
}

func newError(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, detail: ErrorDetail{Code: code, Message: fmt.Sprintf(format, args...)}}
}

func fieldError(code, field, format string, args ...any) *apiError {
	e := newError(http.StatusBadRequest, code, format, args...)
	e.detail.Field = field
	return e
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := marshal(v)
	if err != nil { // only the package's own types are encoded
		panic("emulator: encode answer: " + err.Error())
	}
	writeRawJSON(w, status, body)
}

func writeRawJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(body)+1))
	w.WriteHeader(status)
	_, _ = w.Write(body)
	_, _ = w.Write([]byte("\n"))
}

// writeError answers aerr: the JSON error body, or with plain set
// (ModeDocumented's API: its documentation gives no error shape) plain
// text, or aerr's own JSON body (the 409 naming another party's
// referenceId).
func writeError(w http.ResponseWriter, aerr *apiError, plain bool) {
	if aerr.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="quotesync-emulator"`)
	}
	switch {
	case !plain:
		writeJSON(w, aerr.status, ErrorBody{Error: aerr.detail})
	case aerr.body != nil:
		writeRawJSON(w, aerr.status, aerr.body)
	default:
		http.Error(w, cmp.Or(aerr.plain, aerr.detail.Message), aerr.status)
	}
}

// readBody reads the request body, capped at limit bytes. With required set
// the body must be declared JSON; otherwise an empty body is accepted with
// any Content-Type and a non-empty one must be declared JSON.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, required bool) ([]byte, *apiError) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	declared := err == nil && mt == "application/json"
	var body []byte
	var aerr *apiError
	if declared || !required {
		body, aerr = readCapped(w, r, limit)
	}
	switch {
	case aerr != nil:
		return nil, aerr
	case !declared && (required || len(body) > 0):
		return nil, newError(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType,
			"Content-Type must be application/json, got %q", r.Header.Get("Content-Type"))
	case len(body) == 0 && required:
		return nil, newError(http.StatusBadRequest, CodeInvalidBody, "body is empty; a JSON object is required")
	case len(body) == 0:
		return nil, nil
	}
	return body, nil
}

// readCapped reads the request body, capped at limit bytes (413 beyond).
func readCapped(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *apiError) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, newError(http.StatusRequestEntityTooLarge, CodeBodyTooLarge,
				"body larger than %d bytes", limit)
		}
		return nil, newError(http.StatusBadRequest, CodeInvalidBody, "read body: %v", err)
	}
	return body, nil
}
