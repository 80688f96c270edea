package sync

import (
	"fmt"
	"unicode/utf8"

	"github.com/quotesync/quotesync/shopdb/store"
)

// capText caps a text the engine stores or logs, as the state tables do.
func capText(s string) string { return store.CapText(s) }

// boundText keeps at most max bytes of s for a log line or a message (cut
// on a rune boundary), saying how long the whole was: a 3 MB request id
// must not become a 3 MB log line.
func boundText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}
