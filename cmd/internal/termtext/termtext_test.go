package termtext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/quotesync/quotesync/remote"
)

func TestSafe(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
	}{
		{"Empty", "", ""},
		{"ASCII", "CLM-1001 RO-50001", "CLM-1001 RO-50001"},
		{"Latin", "Müller & Söhne", "Müller & Söhne"},
		{"CJK", "株式会社", "株式会社"},
		{"Emoji", "👨\u200d👩\u200d👧", "👨\u200d👩\u200d👧"},                     // the zero-width joiners stay
		{"NoBreakSpace", "Hauptstr.\u00a01", "Hauptstr.\u00a01"},            // U+00A0 is past C1
		{"Backslash", `C:\shop "RO"`, `C:\shop "RO"`},                       // not doubled, not quoted
		{"RuneErrorItself", "bad \ufffd char", "bad \ufffd char"},           // valid UTF-8 for U+FFFD
		{"Title", "\x1b]0;pwned\x07\x1b[2J", `\x1b]0;pwned\a\x1b[2J`},       // OSC, BEL, CSI
		{"C0", "\x00\x01\x08\x0b\x0c\x0d\x1f", `\x00\x01\b\v\f\r\x1f`},      // every other C0 form
		{"NewlineInData", "CLM-1\nRO-2 submitted", `CLM-1\nRO-2 submitted`}, // no forged row
		{"TabInData", "a\tb", `a\tb`},                                       // no forged column
		{"DEL", "x\x7fy", `x\x7fy`},
		{"C1", "\u0080\u0085\u008d\u009b2J\u009f", `\u0080\u0085\u008d\u009b2J\u009f`}, // CSI as one rune
		{"BidiOverrides", "\u202a\u202b\u202c\u202d\u202eabc", `\u202a\u202b\u202c\u202d\u202eabc`},
		{"BidiIsolates", "\u2066\u2067\u2068\u2069", `\u2066\u2067\u2068\u2069`},
		{"BidiMarks", "LRM\u200e RLM\u200f ALM\u061c", `LRM\u200e RLM\u200f ALM\u061c`},
		{"LineSeparators", "CLM-1\u2028RO-2\u2029x", `CLM-1\u2028RO-2\u2029x`},
		{"BidiNeighbours", "\u061b\u061d\u200c\u2027\u202f\u2065\u206a", "\u061b\u061d\u200c\u2027\u202f\u2065\u206a"}, // just outside the rule
		{"InvalidUTF8", "CLM-\xff\xfe", `CLM-\xff\xfe`},
		{"TruncatedRune", "Mü\xc3", `Mü\xc3`},
		{"EncodedSurrogate", "\xed\xa0\x80", `\xed\xa0\x80`},
		{"Mixed", "Müller\x1b[31m株\u202e", `Müller\x1b[31m株\u202e`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Safe(tt.in)
			if got != tt.want {
				t.Errorf("Safe(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if bad := firstUnsafe(got, false); bad >= 0 {
				t.Errorf("Safe(%q) = %q keeps a character of the rule at %d", tt.in, got, bad)
			}
		})
	}
}

// TestSafeEveryRune: no rune of the rule survives Safe, and every other
// valid rune is left as it is.
func TestSafeEveryRune(t *testing.T) {
	for r := rune(0); r <= 0x2100; r++ {
		s := string(r)
		got := Safe(s)
		switch {
		case unsafe(r) && (got == s || firstUnsafe(got, false) >= 0):
			t.Errorf("U+%04X: Safe gives %q", r, got)
		case !unsafe(r) && got != s:
			t.Errorf("U+%04X is not of the rule, yet Safe gives %q", r, got)
		}
	}
}

func TestSafeReturnsSameString(t *testing.T) {
	in := strings.Repeat("RO-50001 Müller ", 10)
	if got := Safe(in); got != in {
		t.Fatalf("Safe changed %q", in)
	}
	if n := testing.AllocsPerRun(100, func() { _ = Safe(in) }); n != 0 {
		t.Errorf("Safe of clean text allocates %.0f times, want 0", n)
	}
}

func TestLines(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"one line", "one line"},
		{"GET /requests: rejected: status 422: \x1b[2J\nno such endpoint: check remote.base_url",
			"GET /requests: rejected: status 422: \\x1b[2J\nno such endpoint: check remote.base_url"},
		{"a\tb\r\nc\u202e", "a\\tb\\r\nc\\u202e"},
		{"\n", "\n"},
	} {
		if got := Lines(tt.in); got != tt.want {
			t.Errorf("Lines(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestJSON(t *testing.T) {
	hostile := "\x1b]0;pwned\x07\x1b[2J \x7f \u0085\u009b \u202e\u2066 Müller 株式会社 \u2028"
	enc, err := json.Marshal(map[string]string{"claim": hostile})
	if err != nil {
		t.Fatal(err)
	}
	got := JSON(enc)
	for _, r := range string(got) {
		if unsafe(r) {
			t.Errorf("JSON left U+%04X raw in %s", r, got)
		}
	}
	if !bytes.Contains(got, []byte(`\u007f \u0085\u009b \u202e\u2066 Müller 株式会社`)) {
		t.Errorf("JSON(%s) = %s: no \\u escapes, or ordinary text changed", enc, got)
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("JSON made %s, which does not parse: %v", got, err)
	}
	if back["claim"] != hostile {
		t.Errorf("decoded %q, want %q", back["claim"], hostile)
	}

	// C0 is not touched (a log line's tabs and newline), invalid UTF-8
	// becomes U+FFFD, clean input is returned as is.
	if got, want := string(JSON([]byte("ts\tINFO\t{\"k\":\"\xff\u202e\"}\n"))), "ts\tINFO\t{\"k\":\"\\ufffd\\u202e\"}\n"; got != want {
		t.Errorf("JSON of a log line = %q, want %q", got, want)
	}
	// zap leaves the bidi marks and the line separators raw in its JSON.
	if got, want := string(JSON([]byte("{\"k\":\"a\u200e\u200f\u061cb\u2028c\u2029\"}"))), `{"k":"a\u200e\u200f\u061cb\u2028c\u2029"}`; got != want {
		t.Errorf("JSON of marks and separators = %q, want %q", got, want)
	}
	clean := []byte(`{"claim":"CLM-1001"}`)
	if got := JSON(clean); &got[0] != &clean[0] {
		t.Errorf("JSON copied clean input")
	}
}

func TestJSONWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewJSONWriter(&buf)
	in := []byte("{\"msg\":\"x\",\"claim\":\"\u202e\u009b\"}\n")
	n, err := w.Write(in)
	if err != nil || n != len(in) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(in))
	}
	if got, want := buf.String(), "{\"msg\":\"x\",\"claim\":\"\\u202e\\u009b\"}\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

func FuzzSafe(f *testing.F) {
	for _, s := range []string{"", "CLM-1", "\x1b[2J", "Müller\u202e", "\xff", "a\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Safe(s)
		if !utf8.ValidString(got) {
			t.Errorf("Safe(%q) = %q is not valid UTF-8", s, got)
		}
		if i := firstUnsafe(got, false); i >= 0 {
			t.Errorf("Safe(%q) = %q keeps a character of the rule at %d", s, got, i)
		}
		if firstUnsafe(s, false) < 0 && got != s {
			t.Errorf("Safe changed clean %q to %q", s, got)
		}
		enc, _ := json.Marshal(s)
		if j := JSON(enc); firstUnsafe(string(j), false) >= 0 {
			t.Errorf("JSON(%s) = %s keeps a character of the rule", enc, j)
		}
	})
}

// TestRemoteIDsFollowTheRule: a request id or claim number from the
// insurer is refused by remote exactly when it holds a character of this
// package's rule, checked for every character of the Basic Multilingual
// Plane (where every character of the rule is): one rule for what is
// shown escaped and what no tracked id may hold.
func TestRemoteIDsFollowTheRule(t *testing.T) {
	for r := rune(0); r <= 0xffff; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue // surrogates are no characters
		}
		s := "A" + string(r) + "1"
		q, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		unsafe := Safe(s) != s
		for _, entry := range []string{`{"id": ` + string(q) + `}`, `{"id": "R-1", "claim_number": ` + string(q) + `}`} {
			var req remote.Request
			refused := json.Unmarshal([]byte(entry), &req) != nil
			if refused != unsafe {
				t.Errorf("%U in %s: remote refuses it %t, termtext escapes it %t", r, entry, refused, unsafe)
			}
		}
	}
}
