package remote

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"
)

// A shallow reader of one JSON object's members, for naming what is wrong
// with a list entry that is not decoded: its id, the member that is too
// large, too deep or not valid UTF-8. It works on a prefix of the entry
// too (the last member is then cut), needs no valid JSON beyond the
// brackets and strings, and never recurses.

type member struct {
	key   []byte // the key's raw text, quotes excluded
	val   []byte // the value's raw text, possibly cut
	cut   bool   // the data ended inside the value
	depth int    // the deepest nesting within the value (0 for a scalar)
}

// members splits the object data into its members, or, with arrays, the
// array data into its elements (keys "[0]", "[1]", …); nil when data is
// neither.
func members(data []byte, arrays bool) []member {
	data = bytes.TrimLeft(data, " \t\r\n")
	if len(data) == 0 || data[0] != '{' && (!arrays || data[0] != '[') {
		return nil
	}
	obj, closer := data[0] == '{', byte('}')
	if !obj {
		closer = ']'
	}
	var out []member
	for i := 1; i < len(data); i++ {
		var m member
		if obj {
			for i < len(data) && data[i] != '"' && data[i] != '}' {
				i++
			}
			if i >= len(data) || data[i] == '}' {
				return out
			}
			end := stringEnd(data, i)
			if end < 0 {
				return out
			}
			m.key, i = data[i+1:end-1], end
			for i < len(data) && data[i] != ':' {
				i++
			}
			if i >= len(data) {
				return out
			}
			i++
		} else {
			m.key = fmt.Appendf(nil, "[%d]", len(out))
		}
		for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
			i++
		}
		if !obj && (i >= len(data) || data[i] == ']') {
			return out
		}
		start := i
		i, m.depth = valueEnd(data, i)
		m.val = bytes.TrimRight(data[start:i], " \t\r\n")
		m.cut = i >= len(data)
		out = append(out, m)
		if i < len(data) && data[i] == closer {
			return out
		}
	}
	return out
}

// valueEnd returns the index of the ',' or closing bracket that ends the
// value starting at data[i] (len(data) when data ends first), and the
// deepest nesting within the value.
func valueEnd(data []byte, i int) (end, depth int) {
	level, inStr, esc := 0, false, false
	for ; i < len(data); i++ {
		c := data[i]
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case inStr && c == '"':
			inStr = false
		case inStr:
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			level++
			depth = max(depth, level)
		case (c == '}' || c == ']') && level > 0:
			level--
		case level == 0 && (c == ',' || c == '}' || c == ']'):
			return i, depth
		}
	}
	return i, depth
}

// stringEnd returns the index just past the JSON string starting at
// data[i] ('"'), or -1 when data ends inside it.
func stringEnd(data []byte, i int) int {
	esc := false
	for j := i + 1; j < len(data); j++ {
		switch {
		case esc:
			esc = false
		case data[j] == '\\':
			esc = true
		case data[j] == '"':
			return j + 1
		}
	}
	return -1
}

// entryID reads the id of a list entry that is not decoded: id is the id
// when it is whole, valid and at most MaxSkippedIDLen bytes; text names it
// for people when anything of it could be read (a prefix and its length
// for a long one); unlike is set for an id of a type no request id has.
func entryID(data []byte) (id, text string, unlike bool) {
	for _, m := range members(data, false) {
		if string(m.key) != "id" {
			continue
		}
		v := m.val
		if len(v) == 0 {
			return "", "", false
		}
		switch v[0] {
		case '{', '[', 't', 'f':
			return "", "", true
		case 'n':
			return "", "", false
		case '"':
			if !m.cut && len(v) <= MaxSkippedIDLen+2 {
				if s, err := decodeString(v); err == nil && s != "" {
					return s, s, false
				}
			}
			inner := v[1:]
			if !m.cut && len(inner) > 0 {
				inner = inner[:len(inner)-1]
			}
			return "", boundValue(inner, m.cut), false
		}
		if !m.cut && len(v) <= maxNumberLen {
			if n, err := decodeNumber(v); err == nil {
				return n.String(), n.String(), false
			}
		}
		return "", boundValue(v, m.cut), false
	}
	return "", "", false
}

// boundValue shows the first bytes of a raw value that is too long, or not
// valid UTF-8, to be shown whole: quoted when it holds anything but
// printable text, and its length ("more than" when cut).
func boundValue(raw []byte, cut bool) string {
	const keep = 40
	n := fmt.Sprintf("%d bytes", len(raw))
	if cut {
		n = fmt.Sprintf("more than %d bytes", len(raw))
	}
	p := raw
	if len(p) > keep {
		p = p[:keep]
		for len(p) > 0 && !utf8.RuneStart(raw[len(p)]) {
			p = p[:len(p)-1]
		}
	}
	s := string(p)
	if !utf8.ValidString(s) || !printable(s) {
		s = fmt.Sprintf("%q", s)
	}
	if len(p) == len(raw) && !cut {
		return s
	}
	return fmt.Sprintf("%s… (%s)", s, n)
}

// printable reports whether s is valid UTF-8 without control characters.
func printable(s string) bool {
	for _, r := range s {
		if controlRune(r) || r == utf8.RuneError {
			return false
		}
	}
	return true
}

// controlRune reports whether r is a control character: C0, DEL, C1, the
// bidirectional embeddings, overrides, isolates and marks, and the line
// and paragraph separators: text that acts on a terminal, reorders what it
// shows, or stops a program that passes it on (a NUL ends a C string). It
// is the rule of cmd/internal/termtext (its tests keep the two the same).
func controlRune(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) ||
		(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) ||
		r == 0x200e || r == 0x200f || r == 0x061c || r == 0x2028 || r == 0x2029
}

// checkControl refuses a request's id or claim number that holds a
// control character, naming the first: ListRequests skips such an entry,
// so that no id quotesync tracks can stop a notification command, break a
// log line or reorder what a terminal shows.
func checkControl(s string) error {
	for i, r := range s {
		if controlRune(r) {
			return fmt.Errorf("holds the control character %U at byte %d: no id or claim number may (ask the insurer to fix it)", r, i)
		}
	}
	return nil
}

// largestMember names the largest member of an oversize entry (a cut one
// is the largest: the entry ended there).
func largestMember(data []byte) string {
	best, size := "", -1
	for _, m := range members(data, false) {
		if m.cut {
			return keyName(m.key)
		}
		if len(m.val) > size {
			best, size = keyName(m.key), len(m.val)
		}
	}
	return best
}

// deepestMember names the member whose value is nested deepest.
func deepestMember(data []byte) string {
	best, depth := "", 0
	for _, m := range members(data, false) {
		if m.depth > depth {
			best, depth = keyName(m.key), m.depth
		}
	}
	return best
}

// badText reports whether raw JSON text holds a string that is not valid
// UTF-8 or a lone surrogate escape: text a decoder would silently change.
func badText(raw []byte) bool { return !utf8.Valid(raw) || hasLoneSurrogate(raw) }

// hasLoneSurrogate reports whether raw JSON text holds a \u escape of an
// unpaired UTF-16 surrogate (encoding/json replaces it with U+FFFD).
func hasLoneSurrogate(raw []byte) bool {
	inStr := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case !inStr:
			inStr = c == '"'
		case c == '"':
			inStr = false
		case c == '\\' && i+1 < len(raw) && raw[i+1] == 'u':
			r, ok := hex4(raw, i+2)
			switch {
			case !ok:
			case r >= 0xD800 && r <= 0xDBFF:
				if i+7 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
					if lo, ok := hex4(raw, i+8); ok && lo >= 0xDC00 && lo <= 0xDFFF {
						i += 11
						continue
					}
				}
				return true
			case r >= 0xDC00 && r <= 0xDFFF:
				return true
			}
			i += 5
		case c == '\\':
			i++ // the escaped character
		}
	}
	return false
}

// hex4 reads the four hex digits at raw[i:].
func hex4(raw []byte, i int) (rune, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	var b [2]byte
	if _, err := hex.Decode(b[:], raw[i:i+4]); err != nil {
		return 0, false
	}
	return rune(b[0])<<8 | rune(b[1]), true
}

// badTextMember names the member (a path into nested objects:
// "vehicle.make") whose key or value holds bad text (see badText).
func badTextMember(data []byte) string {
	path := ""
	for range MaxEntryDepth {
		found := false
		for _, m := range members(data, true) {
			if badText(append(append([]byte{'"'}, m.key...), '"')) {
				return join(path, keyName(m.key))
			}
			if badText(m.val) {
				path, data, found = join(path, keyName(m.key)), m.val, true
				break
			}
		}
		if !found {
			return path
		}
	}
	return path
}

func join(path, key string) string {
	if path == "" || strings.HasPrefix(key, "[") {
		return path + key
	}
	return path + "." + key
}

// keyName is a member's key for a message: as is when short and printable,
// else bounded and quoted.
func keyName(key []byte) string {
	if s, err := decodeString(append(append([]byte{'"'}, key...), '"')); err == nil && len(s) <= 64 && printable(s) {
		return s
	}
	return boundValue(key, false)
}
