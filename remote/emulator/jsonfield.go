package emulator

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
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
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, newError(http.StatusBadRequest, CodeInvalidBody, "body has data after the JSON object")
	}
	return obj, nil
}

// joinField names a member of the object at path.
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

// asNumber returns a JSON number member exactly as sent (no float64).
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

// asBool decodes a JSON boolean member.
func asBool(raw json.RawMessage, field string) (bool, *apiError) {
	if kind(raw) != "boolean" {
		return false, wrongType(field, "a boolean", raw)
	}
	return bytes.Equal(bytes.TrimSpace(raw), []byte("true")), nil
}

// asStringMap decodes an object whose members are all strings.
func asStringMap(raw json.RawMessage, field string) (map[string]string, *apiError) {
	obj, err := decodeObject(raw, field)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(obj))
	for k, v := range obj {
		s, err := asString(v, joinField(field, k))
		if err != nil {
			return nil, err
		}
		m[k] = s
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

// compactRaw returns raw without insignificant whitespace; it leaves the
// text of numbers and strings untouched.
func compactRaw(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}

// jsonWriter builds a JSON object member by member in a fixed order.
type jsonWriter struct {
	buf   bytes.Buffer
	first bool
}

func (w *jsonWriter) open()  { w.buf.WriteByte('{'); w.first = true }
func (w *jsonWriter) close() { w.buf.WriteByte('}') }

// raw writes one member whose value is already JSON.
func (w *jsonWriter) raw(name string, value []byte) {
	if !w.first {
		w.buf.WriteByte(',')
	}
	w.first = false
	key, _ := marshal(name)
	w.buf.Write(key)
	w.buf.WriteByte(':')
	w.buf.Write(value)
}

// value writes one member, encoding value with encoding/json.
func (w *jsonWriter) value(name string, value any) {
	b, err := marshal(value)
	if err != nil {
		b = []byte("null")
	}
	w.raw(name, b)
}

// marshal is json.Marshal without HTML escaping, so that "R&R" stays
// "R&R" on the wire.
func marshal(v any) ([]byte, error) { return marshalIndent(v, "") }

// marshalIndent is marshal with indentation.
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
