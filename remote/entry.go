package remote

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// What is wrong with a list entry that is not decoded (the member that is
// too large, too deep or not valid UTF-8; its id: idMember) is read by walking its
// tokens: json.Decoder.Token neither recurses nor limits the depth, and
// what it read before the end of a prefix of the entry, or before text it
// cannot read, is still named.

// frame is an object or array open at a point of a walk.
type frame struct {
	obj     bool
	key     []byte // an object's current key as sent, quotes included
	n       int    // an array's current index
	wantKey bool   // an object's next token is a key
}

// walk reads data token by token and calls visit with the frames open
// around each token, the token (as json.Decoder.Token gives it), its text
// as in data and whether it is a key, until visit returns false or data
// ends. It returns the frames open where it stopped and, when data ended
// or json could read no further, the rest of data from there.
func walk(data []byte, visit func(open []frame, tok any, raw []byte, key bool) bool) ([]frame, []byte) {
	var open []frame
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	for {
		start := d.InputOffset()
		tok, err := d.Token()
		if err != nil {
			return open, bytes.TrimLeft(data[start:], " \t\r\n,:")
		}
		raw := bytes.TrimLeft(data[start:d.InputOffset()], " \t\r\n,:")
		_, str := tok.(string)
		key := str && len(open) > 0 && open[len(open)-1].wantKey
		if tok == json.Delim('}') || tok == json.Delim(']') {
			open = open[:len(open)-1]
		}
		if key {
			open[len(open)-1].key, open[len(open)-1].wantKey = raw, false
		}
		if !visit(open, tok, raw, key) {
			return open, nil
		}
		switch {
		case tok == json.Delim('{') || tok == json.Delim('['):
			open = append(open, frame{obj: tok == json.Delim('{'), wantKey: tok == json.Delim('{')})
		case !key && len(open) > 0:
			top := &open[len(open)-1]
			top.wantKey = top.obj
			if !top.obj {
				top.n++
			}
		}
	}
}

// pathOf names the place of a walk: "vehicle.make", "notes[1]".
func pathOf(open []frame) string {
	var b strings.Builder
	for _, f := range open {
		switch {
		case !f.obj:
			fmt.Fprintf(&b, "[%d]", f.n)
		case b.Len() > 0:
			b.WriteString("." + keyName(f.key))
		default:
			b.WriteString(keyName(f.key))
		}
	}
	return b.String()
}

// entryID reads the id of a list entry that is not decoded: id is the id
// when it is whole, valid and at most MaxSkippedIDLen bytes; text names it
// for people when anything of it could be read (a prefix and its length
// for a long one); unlike is set for an id of a type no request id has.
func entryID(data []byte) (id, text string, unlike bool) {
	v, cut := idMember(data)
	switch {
	case len(v) == 0 || v[0] == 'n':
		return "", "", false
	case strings.IndexByte("{[tf", v[0]) >= 0:
		return "", "", true
	}
	if !cut && len(v) <= MaxSkippedIDLen+2 {
		if s, err := decodeID(v); err == nil && s != "" {
			return s, s, false // a number is bounded by maxNumberLen
		}
	}
	if v[0] == '"' { // its text, not the quotes
		v = v[1:]
		if !cut {
			v = bytes.TrimSuffix(v, []byte(`"`))
		}
	}
	return "", boundValue(v, cut), false
}

// idMember is the raw value of the entry's top-level "id" member (nil when
// there is none; cut when data ends inside it). It needs only valid
// brackets and strings, unlike walk: text a decoder stops at (a control
// character in a string, 01, tru) before the id still leaves it read.
func idMember(data []byte) (v []byte, cut bool) {
	level, key, isID, start := 0, true, false, -1
	for i := 0; i < len(data); i++ {
		c := data[i]
		if level == 1 && start >= 0 && (c == ',' || c == '}') {
			return bytes.TrimSpace(data[start:i]), false
		}
		switch c {
		case '"':
			end := i + 1
			for ; end < len(data) && data[end] != '"'; end++ {
				if data[end] == '\\' {
					end++ // the escaped character
				}
			}
			if level == 1 && key {
				isID, key = string(data[i:min(end+1, len(data))]) == `"id"`, false
			}
			i = end
		case '{', '[':
			level++
		case '}', ']':
			level--
		case ',':
			key = level == 1
		case ':':
			if level == 1 && isID && start < 0 {
				start = i + 1
			}
		}
	}
	if start < 0 {
		return nil, false
	}
	return bytes.TrimLeft(data[start:], " \t\r\n"), true
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
	if !printable(s) {
		s = fmt.Sprintf("%q", s)
	}
	if len(p) == len(raw) && !cut {
		return s
	}
	return fmt.Sprintf("%s… (%s)", s, n)
}

// printable reports whether s is valid UTF-8 without control characters.
func printable(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return controlRune(r) || r == utf8.RuneError })
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

// heaviest names the largest member of an entry (the one data ends
// inside, when it is cut: the entry ended there) and the deepest.
func heaviest(data []byte) (largest, deepest string) {
	var cur string
	size, depth, maxSize, maxDepth := 0, 0, -1, 0
	end := func() {
		if size > maxSize {
			largest, maxSize = cur, size
		}
		if depth > maxDepth {
			deepest, maxDepth = cur, depth
		}
	}
	open, _ := walk(data, func(open []frame, _ any, raw []byte, key bool) bool {
		switch {
		case key && len(open) == 1:
			end()
			cur, size, depth = keyName(open[0].key), 0, 0
		case len(open) > 0:
			size, depth = size+len(raw), max(depth, len(open))
		}
		return true
	})
	end() // the member the walk stopped in counts for depth too
	if len(open) > 1 || len(open) == 1 && !open[0].wantKey {
		return cur, deepest
	}
	return largest, deepest
}

// badTextMember names the member (a path into nested objects:
// "vehicle.make") whose key or value holds text encoding/json would
// silently change: not valid UTF-8 (cause errInvalidUTF8) or a lone
// UTF-16 surrogate escape (errBadEscape). cause is nil when there is none.
func badTextMember(data []byte) (path string, cause error) {
	if utf8.Valid(data) && !bytes.Contains(data, []byte(`\ud`)) && !bytes.Contains(data, []byte(`\uD`)) {
		return "", nil // the common case, told at the cost of a scan
	}
	open, rest := walk(data, func(open []frame, tok any, raw []byte, _ bool) bool {
		s, _ := tok.(string)
		if cause = textError(raw, s); cause != nil {
			path = pathOf(open)
		}
		return cause == nil
	})
	if cause == nil && !utf8.Valid(data) {
		cause = errInvalidUTF8 // outside any string json could read
		if r, _ := utf8.DecodeRune(rest); r == utf8.RuneError && len(rest) > 0 {
			path = pathOf(open) // json stopped at it: name where
		}
	}
	return path, cause
}

// keyName is a member's key (as sent, quotes included) for a message: as
// is when short and printable, else bounded and quoted.
func keyName(key []byte) string {
	if s, err := decodeString(key); err == nil {
		return textOf(s)
	}
	return boundValue(bytes.TrimPrefix(bytes.TrimSuffix(key, []byte(`"`)), []byte(`"`)), false)
}
