package redact

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// echoes are the forms in which an answer, a page or a log line may
// quote v: as it is; escaped in a JSON string the ways encoders do it
// (Go's, with and without its HTML escapes; `\/` as PHP writes a slash,
// `\u002f` in either hex case; non-ASCII as \u escapes, as Python and PHP
// write it; every character but letters and digits \u-escaped); escaped
// in a URL's query, path or component, in upper- and lower-case hex; in
// base64 and base64url with and without padding, and the part of either
// that a longer text holding v at any offset encodes (a Basic header, a
// bearer header encoded whole); escaped in HTML as html/template and
// text/template write it. Every form holding a slash also comes with the
// slash JSON-escaped, as a JSON string quoting it would have it.
func echoes(v string) []string {
	forms := []string{v}
	forms = append(forms, jsonForms(v)...)
	forms = append(forms, urlForms(v)...)
	forms = append(forms, base64Forms(v)...)
	forms = append(forms, htmlForms(v)...)
	for _, f := range slices.Clone(forms) {
		if strings.Contains(f, "/") {
			for _, esc := range []string{`\/`, `\u002f`, `\u002F`} {
				forms = append(forms, strings.ReplaceAll(f, "/", esc))
			}
		}
	}
	out := forms[:0]
	for _, f := range forms {
		if len(f) >= MinLen && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// jsonStyle says how a JSON encoder escapes a string.
type jsonStyle struct {
	html     bool // <, > and & as \u003c, \u003e, \u0026 (Go's default)
	nonASCII bool // every rune past ASCII as \u escapes (UTF-16)
	all      bool // every rune but ASCII letters and digits as \u escapes
	upper    bool // \u escapes in upper-case hex
}

// jsonForms are v escaped inside a JSON string in each style (the quotes
// left out).
func jsonForms(v string) []string {
	var out []string
	for _, st := range []jsonStyle{
		{}, {html: true}, {nonASCII: true}, {html: true, nonASCII: true},
		{html: true, nonASCII: true, upper: true}, {all: true}, {all: true, upper: true},
	} {
		out = append(out, jsonEscape(v, st))
	}
	return out
}

// jsonEscape escapes v as a JSON string's content in style st.
func jsonEscape(v string, st jsonStyle) string {
	var b strings.Builder
	hex := lowerHex
	if st.upper {
		hex = upperHex
	}
	u := func(r rune) {
		if r > 0xffff { // a UTF-16 surrogate pair
			r1, r2 := utf16.EncodeRune(r)
			r = r1<<16 | r2
			b.WriteString(`\u`)
			for shift := 28; shift >= 16; shift -= 4 {
				b.WriteByte(hex[(r>>shift)&0xf])
			}
		}
		b.WriteString(`\u`)
		for shift := 12; shift >= 0; shift -= 4 {
			b.WriteByte(hex[(r>>shift)&0xf])
		}
	}
	for _, r := range v {
		switch {
		case st.all && !isAlnum(r):
			u(r)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20, r == 0x2028, r == 0x2029, r == utf8.RuneError:
			u(r)
		case st.html && (r == '<' || r == '>' || r == '&'):
			u(r)
		case st.nonASCII && r > 0x7f:
			u(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

const (
	lowerHex = "0123456789abcdef"
	upperHex = "0123456789ABCDEF"
)

func isAlnum(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

// urlForms are v percent-encoded as a query value (space as +), a path
// segment, a strict URI component (only letters, digits and -_.~ kept,
// space as %20) and as JavaScript's encodeURIComponent leaves it (also
// !'()* kept), each in upper- and lower-case hex.
func urlForms(v string) []string {
	var out []string
	for _, lower := range []bool{false, true} {
		out = append(out,
			queryEscape(v, true, lower),
			queryEscape(v, false, lower),
			jsComponent(v, lower),
			lowerPercent(url.PathEscape(v), lower))
	}
	return out
}

// queryEscape is url.QueryEscape (plus=true) or the same with space as
// %20, in lower-case hex when lower.
func queryEscape(v string, plus, lower bool) string {
	s := url.QueryEscape(v)
	if !plus {
		s = strings.ReplaceAll(s, "+", "%20")
	}
	return lowerPercent(s, lower)
}

// jsComponent is encodeURIComponent(v).
func jsComponent(v string, lower bool) string {
	hex := upperHex
	if lower {
		hex = lowerHex
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if isAlnum(rune(c)) || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xf])
	}
	return b.String()
}

// lowerPercent lowers the hex digits of every %XX in s when lower.
func lowerPercent(s string, lower bool) string {
	if !lower || !strings.Contains(s, "%") {
		return s
	}
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			for j := i + 1; j <= i+2; j++ {
				if b[j] >= 'A' && b[j] <= 'F' {
					b[j] += 'a' - 'A'
				}
			}
			i += 2
		}
	}
	return string(b)
}

// minCore is the shortest part of a longer text's base64 that is matched:
// shorter would match ordinary base64 by chance.
const minCore = 8

// base64Forms are v in base64 and base64url, padded and not, and the
// characters that encode v alone when it sits at any offset of a longer
// text that is encoded whole (each 3-byte group of base64 mixes v's
// first and last bytes with its neighbours'; the characters between are
// v's own).
func base64Forms(v string) []string {
	var out []string
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		out = append(out, enc.EncodeToString([]byte(v)))
		raw := enc.WithPadding(base64.NoPadding)
		out = append(out, raw.EncodeToString([]byte(v)))
		for k := range 3 {
			b := append(make([]byte, k), v...)
			s := raw.EncodeToString(b)
			skip := []int{0, 2, 3}[k] // characters holding bits of the k bytes before v
			end := len(s)
			if len(b)%3 != 0 {
				end-- // holds bits of the byte after v
			}
			if end-skip >= minCore {
				out = append(out, s[skip:end])
			}
		}
	}
	return out
}

// htmlForms are v escaped as text or an attribute by html/template
// (which also writes + as &#43;) and by text/template's HTMLEscapeString
// and the html package.
func htmlForms(v string) []string {
	return []string{htmlTemplate.Replace(v), htmlText.Replace(v)}
}

var (
	htmlTemplate = strings.NewReplacer("\x00", "\uFFFD", `"`, "&#34;", "&", "&amp;", "'", "&#39;", "+", "&#43;", "<", "&lt;", ">", "&gt;")
	htmlText     = strings.NewReplacer("\x00", "\uFFFD", `"`, "&#34;", "&", "&amp;", "'", "&#39;", "<", "&lt;", ">", "&gt;")
)
