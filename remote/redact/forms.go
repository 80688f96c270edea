package redact

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// echoes are the forms in which an answer, a page or a log line may
// quote v: as it is; escaped in a JSON string the ways encoders do it
// (Go's, with and without its HTML escapes; `\/` as PHP writes a slash,
// `\u002f`; non-ASCII as \u escapes, as Python and PHP write it; every
// character but letters and digits \u-escaped); escaped in a URL's
// query, path or component; in base64 and base64url with and without
// padding, and the part of either that a longer text holding v at any
// offset encodes (a Basic header, a bearer header encoded whole);
// escaped in HTML as html/template and text/template write it. Every
// form comes with its %XX and \u escapes in upper- and lower-case hex,
// and every form holding a slash also with the slash JSON-escaped, as a
// JSON string quoting it would have it.
func echoes(v string) []string {
	q := url.QueryEscape(v)
	component := strings.ReplaceAll(q, "+", "%20") // a strict URI component
	// Every % in these is an escape the encoder wrote (v's own % is %25),
	// so only they are lowered; v's own % or \u in other forms is text.
	forms := []string{q, component, jsComponent.Replace(component), url.PathEscape(v)}
	for _, f := range slices.Clone(forms) {
		forms = append(forms, percentHex.ReplaceAllStringFunc(f, strings.ToLower))
	}
	forms = append(forms, v, htmlTemplate.Replace(v), htmlText.Replace(v))
	for _, st := range []jsonStyle{{}, {html: true}, {nonASCII: true}, {html: true, nonASCII: true}, {all: true}} {
		forms = append(forms, jsonEscape(v, st, "%04x"), jsonEscape(v, st, "%04X"))
	}
	forms = append(forms, base64Forms(v)...)
	for _, f := range slices.Clone(forms) {
		if strings.Contains(f, "/") {
			for _, esc := range []string{`\/`, `\u002f`, `\u002F`} {
				forms = append(forms, strings.ReplaceAll(f, "/", esc))
			}
		}
	}
	forms = slices.DeleteFunc(forms, func(f string) bool { return len(f) < MinLen })
	slices.Sort(forms)
	return slices.Compact(forms)
}

// jsComponent turns a strict URI component into what JavaScript's
// encodeURIComponent writes: it also keeps !'()*.
var jsComponent = strings.NewReplacer("%21", "!", "%27", "'", "%28", "(", "%29", ")", "%2A", "*")

// percentHex is a %XX escape.
var percentHex = regexp.MustCompile(`%[0-9A-F]{2}`)

// jsonStyle says how a JSON encoder escapes a string.
type jsonStyle struct {
	html     bool // <, > and & as \u003c, \u003e, \u0026 (Go's default)
	nonASCII bool // every rune past ASCII as \u escapes (UTF-16)
	all      bool // every rune but ASCII letters and digits as \u escapes
}

// jsonEscape escapes v as a JSON string's content in style st, writing
// the hex of \u escapes with verb hex (%04x or %04X).
func jsonEscape(v string, st jsonStyle, hex string) string {
	var b strings.Builder
	for _, r := range v {
		alnum := r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		switch {
		case st.all && !alnum, r < 0x20 && jsonShort[r] == "",
			r == 0x2028, r == 0x2029, r == utf8.RuneError,
			st.html && strings.ContainsRune("<>&", r), st.nonASCII && r > 0x7f:
			if r > 0xffff { // a UTF-16 surrogate pair
				r -= 0x10000
				fmt.Fprintf(&b, `\u`+hex+`\u`+hex, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(&b, `\u`+hex, r)
			}
		case jsonShort[r] != "":
			b.WriteString(jsonShort[r])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// jsonShort are the two-character escapes of JSON every encoder writes.
var jsonShort = map[rune]string{'"': `\"`, '\\': `\\`, '\n': `\n`, '\r': `\r`, '\t': `\t`}

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

// htmlTemplate is v escaped as text or an attribute by html/template
// (which also writes + as &#43;), htmlText by text/template's
// HTMLEscapeString and the html package.
var (
	htmlTemplate = strings.NewReplacer("\x00", "\uFFFD", `"`, "&#34;", "&", "&amp;", "'", "&#39;", "+", "&#43;", "<", "&lt;", ">", "&gt;")
	htmlText     = strings.NewReplacer("\x00", "\uFFFD", `"`, "&#34;", "&", "&amp;", "'", "&#39;", "<", "&lt;", ">", "&gt;")
)
