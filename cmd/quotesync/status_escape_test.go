package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/statuspage"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// TestStatusEscapesUnknownWords: a row's phase and reason are quotesync's
// own words, but a row written by another version of quotesync may hold
// words this one does not know, and status prints those as they are
// stored: in the table, in "needs a person" and in "tried again on its
// own". They must reach the terminal escaped, like every other column.
func TestStatusEscapesUnknownWords(t *testing.T) {
	now := time.Now()
	rows := []store.Request{
		// An open phase with an error: "tried again on its own".
		{RequestID: "R1", Phase: qsync.PhaseDrafted, Reason: "later\x1b[2Jreason", LastError: "x", CreatedAt: now},
		// A reason this version does not know: "needs a person".
		{RequestID: "R2", Phase: "from\x1b]0;pwned\x07newer", Reason: "odd\u202ereason", CreatedAt: now},
	}
	rep := newStatusReport(rows, nil, "", true, 0)
	var out bytes.Buffer
	printStatus(&out, rep, now)
	assertTerminalSafe(t, "status", out.String())
	assertShows(t, "status", out.String(), `later\x1b[2Jreason`, `from\x1b]0;pwned\anewer`, `odd\u202ereason`)
}

// TestHistoryEscapesUnknownWords: the same for history's head and
// timeline (phase, its words, the reason's words, an event's kind and
// phases).
func TestHistoryEscapesUnknownWords(t *testing.T) {
	st := statuspage.Story{
		Request: statuspage.Request{ID: "R1", Phase: "new\x1b[2Jphase", PhaseWords: "w\u202eords", ReasonWords: "re\x07ason"},
		Steps:   []statuspage.Step{{At: time.Now(), Kind: "k\x1b]0;x\x07ind", From: "a\x1b", To: "b\u2066", What: "moved"}},
	}
	var out bytes.Buffer
	printHistory(&out, st, time.UTC)
	assertTerminalSafe(t, "history", out.String())
	assertShows(t, "history", out.String(), `new\x1b[2Jphase`, `k\x1b]0;x\aind`, `a\x1b -> b\u2066`)
}
