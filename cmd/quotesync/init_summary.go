package main

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/quotesync/quotesync/cmd/internal/termtext"
	qsync "github.com/quotesync/quotesync/sync"
)

// checkMarks finds the comment lines that mark a guess.
var checkMarks = regexp.MustCompile(`(?m)^\s*# CHECK:`)

// summary tells the person what init decided, what it could not, and
// what to do next.
func (s *initSession) summary(failed map[string]string, text string) {
	w := s.stdout
	p := s.p
	fmt.Fprintf(w, "quotesync init: wrote %s for database %s (%d tables read)\n\n", s.o.output, s.cfg.Database, len(s.schema.Tables))
	for _, c := range p.Choices {
		mark := "ok   "
		if c.Guess {
			mark = "CHECK"
		}
		line := fmt.Sprintf("%s  %-30s %s", mark, c.Label, chosenOf(c))
		fmt.Fprintln(w, termtext.Safe(line))
	}
	switch {
	case len(p.Final) > 0:
		fmt.Fprintf(w, "ok     %-30s %s\n", "final when", termtext.Safe(strings.Join(p.Final, ", ")))
	default:
		fmt.Fprintf(w, "CHECK  %-30s %s\n", "final when", "not confirmed: quotesync pushes Drafts and submits nothing until estimate_state returns final (see the file)")
	}
	var mapped, proposed, unmapped []string
	for code, wc := range s.workTypes {
		switch {
		case wc.Type == "":
			unmapped = append(unmapped, code)
		case wc.Proposed:
			proposed = append(proposed, code+" → "+wc.Type)
		default:
			mapped = append(mapped, code+" → "+wc.Type)
		}
	}
	for _, l := range []struct {
		mark, format string
		codes        []string
	}{{"ok   ", "%s", mapped}, {"CHECK", "%s (proposed from the codes' names)", proposed}, {"CHECK", "%s: not mapped; their lines hold their jobs", unmapped}} {
		if len(l.codes) > 0 {
			slices.Sort(l.codes)
			fmt.Fprintf(w, "%s  %-30s "+l.format+"\n", l.mark, "work types", termtext.Safe(strings.Join(l.codes, ", ")))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(failed)) {
		fmt.Fprintf(w, "FAIL   %-30s %s\n", k, termtext.Safe(failed[k]))
	}
	if len(failed) == 0 {
		fmt.Fprintf(w, "ok     %-30s every statement prepared on the server; those that read ran read-only\n", "queries")
	}
	fmt.Fprintf(w, "\n%s in the file marked CHECK: read them. Next:\n", qsync.Plural(len(checkMarks.FindAllString(text, -1)), "guess line"))
	job := cmp.Or(s.exampleJob, "JOB")
	conf := termtext.Safe(s.o.output)
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintf(tw, "  quotesync check --config %s\tproves the mapping on the shop's newest jobs\n", conf)
	fmt.Fprintf(tw, "  quotesync preview --config %s %s\tthe quote of one job, as a pass would send it\n", conf, termtext.Safe(job))
	fmt.Fprintf(tw, "  quotesync once --dry-run --config %s\twhat a pass would do, writing nothing\n", conf)
	_ = tw.Flush()
}
