package emulator

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// object is one decoded JSON object: its members as raw JSON, keyed by name.
type object map[string]json.RawMessage

// decodeObject parses data as exactly one JSON object. field names the
// object in errors ("" for the whole body).
func decodeObject(data []byte, field string) (object, *apiError) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		if field == "" {
			return nil, newError(http.StatusBadRequest, CodeInvalidBody, "body must be a JSON object")
		}
		return nil, fieldError(CodeInvalidField, field, "%s must be an object", field)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var obj object
	if err := dec.Decode(&obj); err != nil {
		return nil, newError(http.StatusBadRequest, CodeInvalidBody, "body is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, newError(http.StatusBadRequest, CodeInvalidBody, "body has data after the JSON object")
	}
	return obj, nil
}

// members decodes the object raw at path (see decodeObject) and calls f
// with each member, in key order, its field's name and its value, up to
// the first error.
func members(raw json.RawMessage, path string, f func(name, field string, v json.RawMessage) *apiError) (object, *apiError) {
	obj, aerr := decodeObject(raw, path)
	if aerr != nil {
		return nil, aerr
	}
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		if aerr := f(name, joinField(path, name), obj[name]); aerr != nil {
			return nil, aerr
		}
	}
	return obj, nil
}

func joinField(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// kind is the JSON kind of raw: "string", "number", "object", "array",
// "boolean" or "null".
func kind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "null"
	}
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

// wrongType is the 400 answer for a member of the wrong JSON kind.
func wrongType(field, want string, raw json.RawMessage) *apiError {
	return fieldError(CodeInvalidField, field, "%s must be %s, got %s", field, want, kind(raw))
}

// asString decodes a JSON string member.
func asString(raw json.RawMessage, field string) (string, *apiError) {
	if kind(raw) != "string" {
		return "", wrongType(field, "a string", raw)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fieldError(CodeInvalidField, field, "%s: %v", field, err)
	}
	return s, nil
}

func asNumber(raw json.RawMessage, field string) (json.Number, *apiError) {
	if kind(raw) != "number" {
		return "", wrongType(field, "a number", raw)
	}
	return json.Number(bytes.TrimSpace(raw)), nil
}

// asInteger returns a JSON number member without fraction or exponent.
func asInteger(raw json.RawMessage, field string) (json.Number, *apiError) {
	n, err := asNumber(raw, field)
	if err != nil {
		return "", err
	}
	if strings.ContainsAny(string(n), ".eE") {
		return "", fieldError(CodeInvalidField, field, "%s must be an integer, got %s", field, n)
	}
	return n, nil
}

func asBool(raw json.RawMessage, field string) (bool, *apiError) {
	if kind(raw) != "boolean" {
		return false, wrongType(field, "a boolean", raw)
	}
	return bytes.Equal(bytes.TrimSpace(raw), []byte("true")), nil
}

// asStringMap decodes an object whose members are all strings.
func asStringMap(raw json.RawMessage, field string) (map[string]string, *apiError) {
	m := map[string]string{}
	if _, aerr := members(raw, field, func(name, f string, v json.RawMessage) (aerr *apiError) {
		m[name], aerr = asString(v, f)
		return aerr
	}); aerr != nil {
		return nil, aerr
	}
	return m, nil
}

// asArray splits a JSON array member into its elements.
func asArray(raw json.RawMessage, field string) ([]json.RawMessage, *apiError) {
	if kind(raw) != "array" {
		return nil, wrongType(field, "an array", raw)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fieldError(CodeInvalidField, field, "%s: %v", field, err)
	}
	return elems, nil
}

func compactRaw(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}

// marshal is json.Marshal without HTML escaping: "R&R" stays "R&R".
func marshal(v any) ([]byte, error) { return marshalIndent(v, "") }

func marshalIndent(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
