package main

import (
	"strings"

	"github.com/quotesync/quotesync/shopdb/discover"
	qsync "github.com/quotesync/quotesync/sync"
)

// workTypeChoice is the work type of one operation code: given by a
// person (--work-type or an answer), proposed from the code's name (a
// guess, marked CHECK in the file), or none (lines with the code hold
// their job until it is mapped).
type workTypeChoice struct {
	Type     string // "" when none
	Count    int64  // lines with the code among the newest rows
	Proposed bool   // from the code's name, not confirmed
}

// proposeWorkTypes decides a work type for every code in use: given ones
// first, then proposals for the codes qsync.GuessWorkType recognises.
// Given codes not seen in the data are kept too.
func proposeWorkTypes(codes []discover.ValueCount, given map[string]string) map[string]workTypeChoice {
	out := map[string]workTypeChoice{}
	for _, c := range codes {
		if c.Null || strings.TrimSpace(c.Value) == "" {
			continue
		}
		wc := workTypeChoice{Count: c.Count}
		if t, ok := qsync.GuessWorkType(c.Value); ok {
			wc.Type, wc.Proposed = t, true
		}
		out[c.Value] = wc
	}
	for code, t := range given {
		wc := out[code]
		wc.Type, wc.Proposed = t, false
		out[code] = wc
	}
	return out
}
