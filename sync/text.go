package sync

import (
	"fmt"
	"unicode/utf8"

	"github.com/quotesync/quotesync/remote/redact"
)

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
