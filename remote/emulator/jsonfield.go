package emulator

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
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

// A field is a member an object of the API may hold, as decode checks it
// (check last, after the decode into dst).
type field struct {
	name     string
	kind     string // a k… kind; "" leaves the kind to check
	required bool
	orNull   bool // null is taken as absent
	dst      any
	check    func(v json.RawMessage, f string) *apiError
}

// The kinds a field may require, as errors name them, with the JSON kinds
// each accepts.
const (
	kString  = "a string"
	kNumber  = "a number"
	kInteger = "an integer"
	kBool    = "a boolean"
	kObject  = "an object"
	kArray   = "an array"
	kID      = "a string or an integer"
)

var accepts = map[string][]string{kString: {"string"}, kNumber: {"number"}, kInteger: {"number"},
	kBool: {"boolean"}, kObject: {"object"}, kArray: {"array"}, kID: {"string", "number"}}

// decode checks and decodes v, the member fd at field f.
func (fd field) decode(v json.RawMessage, f string) *apiError {
	k := kind(v)
	switch {
	case fd.orNull && k == "null":
		return nil
	case fd.kind == kInteger && k != "number":
		return fieldError(CodeInvalidField, f, "%s must be %s, got %s", f, kNumber, k)
	case fd.kind != "" && !slices.Contains(accepts[fd.kind], k):
		return fieldError(CodeInvalidField, f, "%s must be %s, got %s", f, fd.kind, k)
	case (fd.kind == kInteger || fd.kind == kID) && k == "number" && bytes.ContainsAny(v, ".eE"):
		return fieldError(CodeInvalidField, f, "%s must be an integer, got %s", f, bytes.TrimSpace(v))
	}
	if fd.dst != nil {
		if err := json.Unmarshal(v, fd.dst); err != nil {
			return fieldError(CodeInvalidField, f, "%s: %v", f, err)
		}
	}
	if fd.check != nil {
		return fd.check(v, f)
	}
	return nil
}

// decodeFields decodes the object raw at path (see decodeObject) into
// fields, member by member in key order up to the first error, then
// refuses the first required field absent. A member fields does not name
// goes to other; a nil other ignores it.
func decodeFields(raw json.RawMessage, path string, fields []field, other func(name, f string, v json.RawMessage) *apiError) (object, *apiError) {
	obj, aerr := decodeObject(raw, path)
	if aerr != nil {
		return nil, aerr
	}
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		v, f := obj[name], joinField(path, name)
		if i := slices.IndexFunc(fields, func(fd field) bool { return fd.name == name }); i >= 0 {
			aerr = fields[i].decode(v, f)
		} else if other != nil {
			aerr = other(name, f, v)
		}
		if aerr != nil {
			return nil, aerr
		}
	}
	for _, fd := range fields {
		if f := joinField(path, fd.name); fd.required && obj[fd.name] == nil {
			return nil, fieldError(CodeMissingField, f, "%s is required", f)
		}
	}
	return obj, nil
}

// unknown refuses a member no field names, with the message format (which
// takes the field) of its object.
func unknown(format string) func(name, f string, v json.RawMessage) *apiError {
	return func(_, f string, _ json.RawMessage) *apiError { return fieldError(CodeUnknownField, f, format, f) }
}

// notEmpty refuses an empty *s.
func notEmpty(s *string) func(json.RawMessage, string) *apiError {
	return func(_ json.RawMessage, f string) *apiError {
		if *s == "" {
			return fieldError(CodeInvalidField, f, "%s must not be empty", f)
		}
		return nil
	}
}

// elements decodes the array raw at path (of kind kArray) element by
// element with each, up to the first error.
func elements(raw json.RawMessage, path string, each func(e json.RawMessage, path string) *apiError) *apiError {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return fieldError(CodeInvalidField, path, "%s: %v", path, err)
	}
	for i, e := range elems {
		if aerr := each(e, path+"["+strconv.Itoa(i)+"]"); aerr != nil {
			return aerr
		}
	}
	return nil
}

func joinField(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// kind is the JSON kind of raw: "string", "number", "object", "array",
// "boolean" or "null", told by its first character.
func kind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "null"
	}
	return cmp.Or(kinds[raw[0]], "number")
}

var kinds = map[byte]string{'"': "string", '{': "object", '[': "array", 't': "boolean", 'f': "boolean", 'n': "null"}

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
