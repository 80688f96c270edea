package remote

import (
	"encoding/json"
	"errors"
	"strings"
)

// Holder reads, from the answer err carries (a 409 to an accept, in
// practice), which acceptance the service says the request collided with:
// the referenceId that holds it and the request that referenceId belongs
// to, each "" when the answer does not say. The service documents no error
// body, so this only looks for a JSON object with a referenceId member, at
// its top level or one object down (as in {"error":{"referenceId":…}}),
// and reads requestId beside it; anything else gives "", "".
func Holder(err error) (referenceID, requestID string) {
	var (
		e   *Error
		top map[string]json.RawMessage
	)
	if !errors.As(err, &e) || !strings.HasPrefix(strings.TrimSpace(e.Body), "{") ||
		json.Unmarshal([]byte(e.Body), &top) != nil {
		return "", ""
	}
	objects := []map[string]json.RawMessage{top}
	for _, raw := range top {
		var inner map[string]json.RawMessage
		if json.Unmarshal(raw, &inner) == nil {
			objects = append(objects, inner)
		}
	}
	for _, m := range objects {
		if ref, req, ok := holderIn(m); ok {
			return ref, req
		}
	}
	return "", ""
}

// holderIn reads referenceId (and requestId) from one object's members,
// whatever their case and underscores.
func holderIn(m map[string]json.RawMessage) (ref, req string, ok bool) {
	for k, raw := range m {
		switch strings.ToLower(strings.ReplaceAll(k, "_", "")) {
		case "referenceid":
			if s, err := decodeID(raw); err == nil && s != "" {
				ref = s
			}
		case "requestid":
			req, _ = decodeID(raw)
		}
	}
	return ref, req, ref != ""
}
