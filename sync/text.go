package sync

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/quotesync/quotesync/remote/redact"
)

// Plural writes a count and the word it counts, the word in the plural
// unless the count is 1: "1 job", "3 jobs", "2 passes", "2 deliveries".
// It knows the regular English plurals of the words quotesync's messages
// count, not every noun.
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	switch stem, y := strings.CutSuffix(word, "y"); {
	case strings.HasSuffix(word, "s"):
		word += "es"
	case y && stem != "" && !strings.ContainsAny(stem[len(stem)-1:], "aeiou"):
		word = stem + "ies"
	default:
		word += "s"
	}
	return fmt.Sprintf("%d %s", n, word)
}

// stringsOf is f of each of xs, in order.
func stringsOf[T any](xs []T, f func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// boundText keeps at most max bytes of s for a log line or a message (cut
// on a rune boundary), saying how long the whole was: a 3 MB request id
// must not become a 3 MB log line. The secrets of set are redacted from
// the whole text first.
func boundText(set *redact.Secrets, s string, max int) string {
	s = set.Redact(s)
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}
