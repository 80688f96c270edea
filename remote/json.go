package remote

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// Each field is decoded on its own from the object's raw members, so that
// a bad field gives an error that names it, and tolerance (string or
// number ids, quoted numbers) lives in one place.

// FieldError is a decoding error naming the JSON field at fault
// ("expiry", "items[2].price").
type FieldError struct {
	Field string
	Err   error
}

// Error returns "field: cause".
func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *FieldError) Unwrap() error { return e.Err }

// fieldErr wraps err as a FieldError for field ("" leaves err as it is),
// prefixing an inner one's name ("items" + "[2].price").
func fieldErr(field string, err error) error {
	var fe *FieldError
	if err == nil || field == "" {
		return err
	} else if errors.As(err, &fe) {
		if !strings.HasPrefix(fe.Field, "[") {
			field += "."
		}
		return &FieldError{Field: field + fe.Field, Err: fe.Err}
	}
	return &FieldError{Field: field, Err: err}
}

// field decodes member key of m with dec into dst; an error names key.
func field[T any](m map[string]json.RawMessage, key string, dst *T, dec func(json.RawMessage) (T, error)) error {
	v, err := dec(m[key])
	if err != nil {
		return fieldErr(key, err)
	}
	*dst = v
	return nil
}

// into decodes data with dec into *dst; an error says what was decoded.
func into[T any](dst *T, what string, data []byte, dec func(json.RawMessage) (T, error)) error {
	v, err := dec(data)
	if err != nil {
		return fmt.Errorf("decode %s: %w", what, err)
	}
	*dst = v
	return nil
}

// optional is dec for a member whose absence is kept: null gives nil.
func optional[T any](dec func(json.RawMessage) (T, error)) func(json.RawMessage) (*T, error) {
	return func(raw json.RawMessage) (*T, error) {
		if isNull(raw) {
			return nil, nil
		}
		v, err := dec(raw)
		return &v, err
	}
}

// maxNumberLen bounds the text of one JSON number or id, refused before
// any parsing whose cost grows with it.
const maxNumberLen = 64

// decodeObject splits a JSON object into its members; null is an error.
func decodeObject(data []byte) (map[string]json.RawMessage, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, fmt.Errorf("want a JSON object, got %s", describe(data))
	}
	// encoding/json would replace bad text silently, in keys and in the
	// members kept raw alike: name the member instead.
	if f, cause := badTextMember(data); cause != nil {
		return nil, fieldErr(f, cause)
	}
	var m map[string]json.RawMessage
	err := json.Unmarshal(data, &m)
	return m, err
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// describe names the JSON kind of raw for error messages, never echoing it.
func describe(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	return cmp.Or(kinds[raw[0]], "a number")
}

var kinds = map[byte]string{'{': "an object", '[': "an array", '"': "a string", 't': "a boolean", 'f': "a boolean", 'n': "null"}

// decodeString decodes a JSON string; null gives "". Text encoding/json
// would silently change (textError) is an error: quotesync never changes
// the remote's data.
func decodeString(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", cmp.Or(textError(raw, ""), fmt.Errorf("want a string, got %s", describe(raw)))
	}
	return s, textError(raw, s)
}

// textError says what is wrong with a JSON string (raw as sent, s
// decoded) that encoding/json would silently change; nil when nothing.
func textError(raw []byte, s string) error {
	switch {
	case !utf8.Valid(raw):
		return errInvalidUTF8
	case strings.ContainsRune(s, utf8.RuneError) && loneSurrogate(raw):
		return errBadEscape
	}
	return nil
}

// Errors of strings quotesync refuses rather than change.
var (
	errInvalidUTF8 = errors.New("not valid UTF-8 (quotesync never changes the remote's data to make it so)")
	errBadEscape   = errors.New("a \\u escape that is no character (a lone UTF-16 surrogate)")
)

// loneSurrogate reports whether the JSON string raw holds a \u escape of
// an unpaired UTF-16 surrogate (encoding/json replaces it with U+FFFD,
// as it keeps a U+FFFD or \ufffd the remote sent: only the escape tells).
func loneSurrogate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if r := hex4(raw, i); utf16.IsSurrogate(r) {
			if utf16.DecodeRune(r, hex4(raw, i+6)) == utf8.RuneError {
				return true
			}
			i += 6 // past the high half: the low one is skipped as an escape
		}
		i++ // the escaped character
	}
	return false
}

// hex4 is the code of the \u escape at raw[i:], or -1 when there is none.
func hex4(raw []byte, i int) rune {
	if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
		return -1
	}
	n, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 16)
	if err != nil {
		return -1
	}
	return rune(n)
}

// textOf shows an id or another outside value in a message: whole when it
// is short printable text, else its first bytes and its length.
func textOf(s string) string {
	if len(s) <= 64 && printable(s) {
		return s
	}
	return boundValue([]byte(s), false)
}

// decodeID decodes an id sent as a JSON string or number (its exact text);
// null gives "".
func decodeID(raw json.RawMessage) (string, error) {
	if isNull(raw) || bytes.TrimSpace(raw)[0] == '"' {
		return decodeString(raw)
	}
	n, err := decodeNumber(raw)
	if err != nil {
		return "", fmt.Errorf("want a string or number, got %s", describe(raw))
	}
	return n.String(), nil
}

// decodeLabel decodes an id sent as a string or number that is shown to
// people (a claim number), refusing control characters (checkControl).
func decodeLabel(raw json.RawMessage) (string, error) {
	s, err := decodeID(raw)
	if err == nil {
		err = checkControl(s)
	}
	return s, err
}

// decodeNumber decodes a JSON number literal into its exact text.
func decodeNumber(raw json.RawMessage) (json.Number, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > maxNumberLen {
		return "", fmt.Errorf("number longer than %d characters", maxNumberLen)
	}
	var n json.Number // its Unmarshal takes a quoted number too
	if len(raw) == 0 || raw[0] == '"' || json.Unmarshal(raw, &n) != nil {
		return "", fmt.Errorf("want a number, got %s", describe(raw))
	}
	return n, nil
}

// decodeInt decodes an integer sent as a number ("3", "3.0") or a quoted
// number; null gives 0.
func decodeInt(raw json.RawMessage) (int, error) {
	d, err := decodeDecimal(raw)
	if err == nil && (!d.IsInteger() || d.Abs().GreaterThan(decimal.NewFromInt(math.MaxInt32))) {
		err = fmt.Errorf("want an integer, got %s", d.String())
	}
	return int(d.IntPart()), err
}

// decodeBool decodes a JSON boolean or a quoted "true"/"false".
func decodeBool(raw json.RawMessage) (bool, error) {
	if raw = bytes.TrimSpace(raw); len(raw) > 0 && raw[0] == '"' {
		s, err := decodeString(raw)
		if err != nil {
			return false, err
		}
		b, err := strconv.ParseBool(s)
		if err != nil {
			return false, fmt.Errorf("want a boolean, got %q", clip(s))
		}
		return b, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, fmt.Errorf("want a boolean, got %s", describe(raw))
	}
	return b, nil
}

func clip(s string) string {
	const n = 40
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// decodeExpiry decodes an ISO-8601 date-time or date string; null or blank
// gives the zero time. Without a zone it is UTC, and a bare date means its
// first instant, the earliest it can mean, so that an expired request is
// never taken for a live one.
func decodeExpiry(raw json.RawMessage) (time.Time, error) {
	s, err := decodeString(raw) // null gives ""
	if err != nil {
		return time.Time{}, fmt.Errorf("want an ISO-8601 date-time string, got %s", describe(raw))
	}
	if s = strings.TrimSpace(s); s == "" {
		return time.Time{}, nil
	}
	layouts := [...]string{
		time.RFC3339Nano,                      // 2024-05-01T10:00:00.5+02:00, ...Z
		"2006-01-02T15:04:05.999999999Z0700",  // +0200 without colon
		"2006-01-02T15:04:05.999999999",       // no zone
		"2006-01-02T15:04Z07:00",              // no seconds
		"2006-01-02T15:04",                    // no seconds, no zone
		"2006-01-02 15:04:05.999999999Z07:00", // space separator
		"2006-01-02 15:04:05.999999999",       // space separator, no zone
		time.DateOnly,                         // 2024-05-01
	}
	for _, layout := range layouts {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("want an ISO-8601 date-time or date, got %q", clip(s))
}

func rawOrNil(raw json.RawMessage) json.RawMessage {
	if isNull(raw) {
		return nil
	}
	return raw
}

// UnmarshalJSON decodes a request tolerantly: id as a string or a number
// (exact digits kept), claim_number or claimNumber (the first non-empty),
// expiry as an ISO-8601 date-time or date (see decodeExpiry). A request
// without an id is an error: it could never be accepted. Errors name the
// request (when its id is known) and the field.
func (r *Request) UnmarshalJSON(data []byte) error {
	var out Request
	m, err := decodeObject(data)
	if err == nil {
		err = field(m, "id", &out.ID, decodeID)
	}
	if err == nil && out.ID == "" {
		err = fieldErr("id", errors.New("missing"))
	}
	if err != nil {
		return fmt.Errorf("decode request: %w", err)
	}
	var claims [2]string
	err = cmp.Or(fieldErr("id", checkControl(out.ID)),
		field(m, "claim_number", &claims[0], decodeLabel), field(m, "claimNumber", &claims[1], decodeLabel),
		field(m, "expiry", &out.Expiry, decodeExpiry))
	if err != nil {
		return fmt.Errorf("decode request %s: %w", textOf(out.ID), err)
	}
	out.ClaimNumber = cmp.Or(claims[0], claims[1])
	out.Instructions = rawOrNil(m["instructions"])
	out.Accident = rawOrNil(m["accident"])
	out.Vehicle = rawOrNil(m["vehicle"])
	out.Raw = append(json.RawMessage(nil), bytes.TrimSpace(data)...)
	*r = out
	return nil
}

// MarshalJSON returns Raw when the request was decoded, so nothing is lost;
// otherwise it builds the seed's form (claim_number, RFC 3339 expiry).
func (r Request) MarshalJSON() ([]byte, error) {
	if len(r.Raw) > 0 {
		return compact(r.Raw)
	}
	return json.Marshal(struct {
		ID           string          `json:"id"`
		ClaimNumber  string          `json:"claim_number,omitempty"`
		Expiry       time.Time       `json:"expiry,omitzero"` // RFC 3339
		Instructions json.RawMessage `json:"instructions,omitempty"`
		Accident     json.RawMessage `json:"accident,omitempty"`
		Vehicle      json.RawMessage `json:"vehicle,omitempty"`
	}{r.ID, r.ClaimNumber, r.Expiry, r.Instructions, r.Accident, r.Vehicle})
}

// UnmarshalJSON decodes a job: its id as a string or number; Raw keeps the
// whole object. A missing id is left empty (Accept falls back to the
// referenceId it sent).
func (j *Job) UnmarshalJSON(data []byte) error {
	var id string
	m, err := decodeObject(data)
	if err == nil {
		err = field(m, "id", &id, decodeID)
	}
	if err != nil {
		return fmt.Errorf("decode job: %w", err)
	}
	*j = Job{ID: id, Location: j.Location, Raw: append(json.RawMessage(nil), bytes.TrimSpace(data)...)}
	return nil
}

// MarshalJSON returns Raw when the job was decoded, else {"id": ID}.
func (j Job) MarshalJSON() ([]byte, error) {
	if len(j.Raw) > 0 {
		return compact(j.Raw)
	}
	return json.Marshal(struct {
		ID string `json:"id"`
	}{j.ID})
}

func compact(raw []byte) ([]byte, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
