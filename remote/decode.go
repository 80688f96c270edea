package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// DecodeError is returned by ListRequests beside the requests it could
// decode when some entries of the list could not be: one broken request (a
// bad expiry, an id of the wrong type) must not hide the others from the
// reconciler. The skipped entries are listed so the caller can report them.
//
// DecodeError matches ErrRejected under errors.Is: the service sent data
// this package refuses, and asking again will not change it.
type DecodeError struct {
	Total   int              // entries in the list
	Skipped []SkippedRequest // entries not returned, in list order
}

// SkippedRequest is one list entry ListRequests could not decode.
type SkippedRequest struct {
	Index int    // position in the list, 0-based
	ID    string // the request id when it could be read, else ""
	Field string // the JSON field at fault ("expiry"), "" for the whole entry
	Err   error
}

// Error lists the skipped requests: "decode requests: skipped 2 of 10:
// request 17: expiry: ...; entry 4: id: missing".
func (e *DecodeError) Error() string {
	parts := make([]string, 0, len(e.Skipped))
	for _, s := range e.Skipped {
		parts = append(parts, s.Err.Error())
	}
	return fmt.Sprintf("decode requests: skipped %d of %d: %s", len(e.Skipped), e.Total, strings.Join(parts, "; "))
}

// Is reports whether target is ErrRejected.
func (e *DecodeError) Is(target error) bool { return target == ErrRejected }

// Unwrap returns the errors of the skipped entries.
func (e *DecodeError) Unwrap() []error {
	errs := make([]error, 0, len(e.Skipped))
	for _, s := range e.Skipped {
		errs = append(errs, s.Err)
	}
	return errs
}

// decodeRequests decodes the body of GET /requests: a JSON array (null or an
// empty body is an empty list). A body that is not an array is an error
// (err); entries that fail alone are left out and reported in skipped.
func decodeRequests(body []byte) (reqs []Request, skipped *DecodeError, err error) {
	body = bytes.TrimSpace(body)
	if isNull(body) {
		return nil, nil, nil
	}
	if body[0] != '[' {
		return nil, nil, fmt.Errorf("decode requests: want a JSON array, got %s", describe(body))
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(body, &elems); err != nil {
		return nil, nil, fmt.Errorf("decode requests: %w", err)
	}
	reqs = make([]Request, 0, len(elems))
	for i, e := range elems {
		var r Request
		if err := r.UnmarshalJSON(e); err != nil {
			if skipped == nil {
				skipped = &DecodeError{Total: len(elems)}
			}
			skipped.Skipped = append(skipped.Skipped, skippedRequest(i, e, err))
			continue
		}
		reqs = append(reqs, r)
	}
	return reqs, skipped, nil
}

// skippedRequest describes entry i that failed with err, naming its id
// when that part is readable and the field at fault.
func skippedRequest(i int, raw json.RawMessage, err error) SkippedRequest {
	s := SkippedRequest{Index: i}
	var fe *FieldError
	if errors.As(err, &fe) {
		s.Field = fe.Field
	}
	if m, mErr := decodeObject(raw); mErr == nil {
		s.ID, _ = decodeID(m["id"])
	}
	if s.ID == "" {
		err = fmt.Errorf("entry %s: %w", strconv.Itoa(i), err)
	}
	s.Err = err
	return s
}
