package store

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCapText(t *testing.T) {
	for _, in := range []string{"", "short", strings.Repeat("a", 4000), strings.Repeat("a", 4001), strings.Repeat("€", 2000),
		strings.Repeat("€", 1e6), "accept request 7: " + strings.Repeat("x", 9000) + ": status 400: bookingDate is in the past"} {
		got := CapText(in)
		if len(got) > MaxTextLen || !utf8.ValidString(got) {
			t.Errorf("capText(%d bytes) = %d bytes, valid UTF-8 %v", len(in), len(got), utf8.ValidString(got))
		}
		if len(in) <= MaxTextLen && got != in {
			t.Errorf("capText changed a short text")
		}
		if len(in) > MaxTextLen {
			// The beginning names the thing, the end is the cause: both kept.
			if !strings.HasPrefix(in, got[:900]) || !strings.HasSuffix(in, got[len(got)-2000:]) || !strings.Contains(got, " bytes cut] … ") {
				t.Errorf("capText(%d bytes) did not keep both ends: %.60q … %q", len(in), got, got[len(got)-60:])
			}
			if len(got) < MaxTextLen-8 {
				t.Errorf("capText(%d bytes) kept only %d bytes", len(in), len(got))
			}
		}
	}
}
