// Package termtext makes text from outside (the insurer's answers, the
// shop's rows) safe to print on a terminal: every character that could act
// on the terminal (retitle it, clear it, move the cursor) or reorder what
// it shows is written as a visible escape, so the operator sees what was
// sent and the terminal does nothing with it.
//
// One rule decides which characters: C0 controls (U+0000–U+001F), DEL
// (U+007F), C1 controls (U+0080–U+009F, which some terminals honour as
// ESC sequences), the bidirectional embeddings, overrides, isolates and
// marks (U+202A–U+202E, U+2066–U+2069, LRM U+200E, RLM U+200F, ALM
// U+061C: the "Trojan Source" characters), the line and paragraph
// separators (U+2028, U+2029, which some terminals and viewers break a
// line at), and the bytes of invalid UTF-8. Safe applies it to text shown
// as text, JSON to encoded JSON.
package termtext

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Safe returns s with every character of the rule shown as an escape,
// newline and tab included: a newline inside data is not a line quotesync
// writes. Everything else ("Müller", "株式会社", a backslash) is left as
// it is, and s itself is returned when nothing needs escaping.
//
// The escapes are Go's, as strconv.QuoteRune writes them: \x1b, \a, \n, \t,
// \x7f, \u009b, \u202e, \u200f, \u2028; a byte of invalid UTF-8 is \xff.
// strconv.Quote itself is not used: it also escapes quotes and backslashes
// and every rune unicode.IsPrint refuses (the no-break space, the
// zero-width joiner inside emoji), harmless on a terminal, so names would
// be shown changed. Strip-ANSI libraries (acarl005/stripansi) lost too:
// they delete the sequences they recognise, hiding what was sent, and leave
// lone C1 and bidi controls in. A backslash is not doubled, so data holding
// the four characters \x1b reads like an escaped ESC; --json outputs give
// the exact value.
func Safe(s string) string {
	i := firstUnsafe(s, false)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case unsafe(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Lines is Safe for text quotesync composes of several lines, such as an
// error whose advice follows on a line of its own or a check's detail:
// each line is made safe and the newlines between them are kept. A
// newline inside data there cannot be told from quotesync's own; it only
// starts a line, which does nothing to the terminal.
func Lines(s string) string {
	if firstUnsafe(s, false) < 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Safe(l)
	}
	return strings.Join(lines, "\n")
}

// JSON returns encoded JSON (or log lines of JSON) in which no character of
// the rule is left raw inside a string: DEL, C1, the bidi controls and the
// separators become \u escapes (encoding/json and zap escape C0 but leave
// most of these as they are), a byte of invalid UTF-8 becomes \ufffd (what
// encoding/json makes of it). A JSON parser reads the same values; C0 is
// not touched, so the tabs and newlines between a log line's parts stay. It
// returns b itself when nothing needs escaping.
func JSON(b []byte) []byte {
	s := string(b)
	i := firstUnsafe(s, true)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, `\ufffd`...)
		case r >= 0x20 && unsafe(r):
			out = append(out, `\u`...)
			out = append(out, hex2(byte(r>>8))...)
			out = append(out, hex2(byte(r))...)
		default:
			out = append(out, s[i:i+size]...)
		}
		i += size
	}
	return out
}

// NewJSONWriter returns a writer that passes each write through JSON on
// its way to w: for a log whose every write is whole lines (zap's).
func NewJSONWriter(w io.Writer) io.Writer { return jsonWriter{w} }

type jsonWriter struct{ w io.Writer }

func (j jsonWriter) Write(p []byte) (int, error) {
	if _, err := j.w.Write(JSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// unsafe reports whether r is a character of the rule.
func unsafe(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) ||
		(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) ||
		r == 0x200e || r == 0x200f || r == 0x061c || r == 0x2028 || r == 0x2029
}

// firstUnsafe is the index of the first character of the rule in s (C0
// left out when keepC0), or -1.
func firstUnsafe(s string, keepC0 bool) int {
	for i, r := range s {
		switch {
		case r >= 0x20 && r < 0x7f, r < 0x20 && keepC0: // printable ASCII first: the common case
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"), unsafe(r):
			return i // a byte of invalid UTF-8, or a character of the rule
		}
	}
	return -1
}

// hex2 is b in two lower-case hex digits.
func hex2(b byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[b>>4], digits[b&0x0f]})
}
