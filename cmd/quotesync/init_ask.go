package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/quotesync/quotesync/cmd/internal/termtext"
	"github.com/quotesync/quotesync/shopdb/discover"
	qsync "github.com/quotesync/quotesync/sync"
)

// maxTries bounds how often one question is asked again after an
// answer that does not fit; then the default stands.
const maxTries = 5

// asker asks a person at a terminal, the best guess as the default (an
// empty answer takes it), as npm init does.
type asker struct {
	in  *bufio.Reader
	out io.Writer
	eof bool // the input ended: every later question takes its default
	// confirmed are the roles a person answered for: no longer guesses.
	confirmed map[string]bool
}

func newAsker(in io.Reader, out io.Writer) *asker {
	return &asker{in: bufio.NewReader(in), out: out, confirmed: map[string]bool{}}
}

// question asks and returns the answer, trimmed; "" for the default.
func (a *asker) question(prompt string) string {
	if a.eof {
		return ""
	}
	fmt.Fprint(a.out, prompt)
	line, err := a.in.ReadString('\n')
	if err != nil {
		a.eof = true
		fmt.Fprintln(a.out)
	}
	return strings.TrimSpace(line)
}

// choices asks about every uncertain choice and sets overrides from the
// answers (an answer that keeps the guess fixes it too: a person
// confirmed it); it reports whether an answer differs from the guess.
func (a *asker) choices(p *discover.Proposal, overrides map[string]string) bool {
	changed := false
	for _, c := range p.Choices {
		if !c.Guess || overrides[c.Role] != "" || c.Role == discover.RoleStatus && len(c.Options) < 2 {
			continue
		}
		a.confirmed[c.Role] = true
		fmt.Fprintf(a.out, "\n%s\n", termtext.Safe(describeChoice(c)))
		opts := c.Options
		if len(opts) > 8 {
			opts = opts[:8]
		}
		hint := "Enter keeps it; candidates: " + termtext.Safe(strings.Join(opts, ", "))
		if c.Optional {
			hint += "; - for none"
		}
		def := cmp.Or(c.Chosen, "-")
		for try := 0; ; try++ {
			ans := a.question(fmt.Sprintf("%s? [%s] (%s) ", c.Label, termtext.Safe(def), hint))
			switch {
			case ans == "" || ans == def:
			case ans == discover.None && c.Optional, slices.Contains(c.Options, ans):
				overrides[c.Role] = ans
				changed = true
			case try < maxTries:
				fmt.Fprintf(a.out, "  %s is not one of the candidates; press Enter for %s\n", termtext.Safe(ans), termtext.Safe(def))
				continue
			}
			break
		}
	}
	return changed
}

// final shows the status values with their counts and asks which mean
// final; none is a valid answer (nothing is submitted until the file says).
func (a *asker) final(p *discover.Proposal) []string {
	if p.Status == nil {
		fmt.Fprintf(a.out, "\nNo status column was found: the configuration pushes Drafts and submits nothing until estimate_state returns a final column.\n")
		return nil
	}
	fmt.Fprintf(a.out, "\nWhich values of %s.%s mean the estimate is final (ready to submit)?\nValues in the newest rows: %s\n",
		termtext.Safe(p.StatusTable.Name), termtext.Safe(p.Status.Name), termtext.Safe(discover.ValueList(p.StatusValues)))
	ans := a.question("Final values, comma-separated (Enter: none yet; quotesync then submits nothing): ")
	var out []string
	for _, v := range strings.Split(ans, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// workTypes asks the work type of each code in use, the proposal (or
// none) as the default.
func (a *asker) workTypes(p *discover.Proposal, wts map[string]workTypeChoice) {
	codes := slices.Sorted(maps.Keys(wts))
	if len(codes) == 0 {
		return
	}
	fmt.Fprintf(a.out, "\nWork types of the operation codes in %s.%s (%s; - for none: its lines hold their job)\n",
		termtext.Safe(p.Lines.Name), termtext.Safe(p.Code.Name), strings.Join(qsync.DocumentedWorkTypes, ", "))
	for _, code := range codes {
		wc := wts[code]
		def := cmp.Or(wc.Type, "-")
		for try := 0; ; try++ {
			ans := a.question(fmt.Sprintf("%s (%s)? [%s] ", termtext.Safe(code), qsync.Plural(int(wc.Count), "line"), def))
			switch {
			case ans == "":
			case ans == discover.None:
				wc.Type = ""
			case slices.Contains(qsync.DocumentedWorkTypes, ans) || strings.HasPrefix(ans, "!"):
				wc.Type = strings.TrimPrefix(ans, "!")
			case try < maxTries:
				fmt.Fprintf(a.out, "  %s is not a documented work type; write one of them, or !%s to use it anyway\n", termtext.Safe(ans), termtext.Safe(ans))
				continue
			}
			break
		}
		wc.Proposed = false // a person answered (or accepted the default)
		wts[code] = wc
	}
}

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
