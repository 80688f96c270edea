package sync

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// Names of the checks on real rows.
const (
	checkRowsFind  = "real rows: find_job"
	checkRowsLines = "real rows: line_items"
	checkRowsState = "real rows: estimate_state"
	checkRowsAll   = "real rows"
)

// maxShownJobs bounds how many jobs one check line names.
const maxShownJobs = 5

// realRows proves the mapping on the shop's own rows: for each of the
// newest jobs sample_jobs lists (at most shopdb.MaxSampleJobs), find_job
// must find that job again by its own claim number (and the other values
// a request would carry); its lines are read as a pass reads them (lines
// per job, codes not under the work types with their counts, amounts
// that break the decimal rules); and estimate_state is read twice, its
// markers unchanged. find_job and line_items are proven for each insurer
// as its passes run them: :insurer bound to its name, the lines read with
// its work types; their lines name the insurer when there are several.
// sample_jobs is read once, line_items once per distinct work types.
// Everything runs read-only.
func (c *checks) realRows(ctx context.Context, db *shopdb.DB, st *store.Store, s Settings) {
	if !db.HasSampleJobs() {
		c.add(CheckSkip, checkRowsAll, "not checked: shop.queries.sample_jobs is not set; add it (quotesync init writes one) to prove the mapping on the shop's newest jobs")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 2*checkTimeout)
	defer cancel()
	samples, err := db.SampleJobs(ctx)
	if err != nil {
		c.add(CheckFail, checkRowsAll, "%v", err)
		return
	}
	if len(samples) == 0 {
		c.add(CheckOK, checkRowsAll, "shop.queries.sample_jobs returns no job yet: nothing to prove the mapping on")
		return
	}
	jobs := stringsOf(samples, func(sj shopdb.SampleJob) string { return sj.Job })
	var shared map[string]shopdb.JobLines // the lines read with the shop's work types
	var sharedErr error
	for _, ins := range s.Insurers {
		view, _, key := insurerView(db, s, ins)
		c.rowsFind(ctx, view, st, c.name(checkRowsFind, ins, false), samples)
		report, err := shared, sharedErr
		switch {
		case ins.WorkTypes != nil:
			report, err = view.Lines(ctx, jobs)
		case shared == nil && sharedErr == nil:
			shared, sharedErr = view.Lines(ctx, jobs)
			report, err = shared, sharedErr
		}
		c.rowsLines(c.name(checkRowsLines, ins, false), key, jobs, report, err)
	}
	c.rowsState(ctx, db, jobs)
}

// rowsFind runs find_job, as db's insurer, for each sample (findJob).
func (c *checks) rowsFind(ctx context.Context, db *shopdb.DB, st *store.Store, name string, samples []shopdb.SampleJob) {
	var missed, wrong []string
	for _, s := range samples {
		found, err := findJob(ctx, db, st, db.SampleRequest(s))
		switch {
		case err != nil:
			c.add(CheckFail, name, "job %s (claim %s): %v", s.Job, s.Claim, err)
			return
		case found == "":
			missed = append(missed, fmt.Sprintf("%s (claim %s)", s.Job, s.Claim))
		case found != s.Job && !strings.EqualFold(found, s.Job):
			wrong = append(wrong, fmt.Sprintf("claim %s of job %s finds job %s", s.Claim, s.Job, found))
		}
	}
	found := len(samples) - len(missed) - len(wrong)
	switch {
	case len(wrong) > 0:
		c.add(CheckFail, name, "%d of %s found by their own claim; %s: a request for one job would be accepted onto another: make find_job return the job whose claim it is",
			found, Plural(len(samples), "sampled job"), shownList(wrong))
	case len(missed) > 0:
		c.add(CheckWarn, name, "%d of %s found by their own claim; not found: %s (right if find_job leaves such jobs out on purpose, e.g. closed ones; else a request for them gets a new job)",
			found, Plural(len(samples), "sampled job"), shownList(missed))
	default:
		c.add(CheckOK, name, "each of the %s is found by its own claim number", Plural(len(samples), "newest job"))
	}
}

// rowsLines reports the sampled jobs' lines as a pass reads them
// (shopdb.DB.Lines) with the work types configured under key.
func (c *checks) rowsLines(name, key string, jobs []string, report map[string]shopdb.JobLines, err error) {
	if err != nil {
		c.add(CheckFail, name, "%v", err)
		return
	}
	var counts []int
	unmapped := map[string]int{}
	unmappedJobs := map[string]bool{}
	var amounts, other []string
	empty := 0
	for _, j := range jobs {
		jl, ok := report[j]
		if !ok {
			empty++
			counts = append(counts, 0)
			continue
		}
		counts = append(counts, len(jl.Lines)+len(jl.Bad))
		for _, e := range jl.Bad {
			switch {
			case e.UnmappedCode != "":
				unmapped[e.UnmappedCode]++
				unmappedJobs[j] = true
			case e.Kind == shopdb.RowBounds || e.Kind == shopdb.RowCredit || amountColumns[e.Column] && !strings.HasPrefix(e.Reason, "is NULL"):
				amounts = append(amounts, e.Error())
			default:
				other = append(other, e.Error())
			}
		}
	}
	slices.Sort(counts)
	c.add(CheckOK, name, "%s: %d to %d lines per job (median %d); %d with no lines yet",
		Plural(len(jobs), "job"), counts[0], counts[len(counts)-1], counts[len(counts)/2], empty)
	if len(unmapped) > 0 {
		c.add(CheckWarn, name, "codes not under %s, on %s: %s; their jobs are held until the codes are mapped",
			key, Plural(len(unmappedJobs), "job"), codeCounts(unmapped))
	}
	if len(amounts) > 0 {
		c.add(CheckWarn, name, "%s breaking the decimal rules (held until fixed): %s", Plural(len(amounts), "amount"), shownList(amounts))
	}
	if len(other) > 0 {
		c.add(CheckWarn, name, "%s the daemon would hold: %s", Plural(len(other), "line"), shownList(other))
	}
}

// amountColumns are the columns of a line that hold amounts.
var amountColumns = map[string]bool{"quantity": true, "price": true, "total": true, "markup": true}

// rowsState reads estimate_state twice: every marker must be the same
// (a marker that moves with nothing changed makes every pass read every
// job's lines).
func (c *checks) rowsState(ctx context.Context, db *shopdb.DB, jobs []string) {
	first, bad, err := db.JobStates(ctx, jobs)
	var second map[string]shopdb.JobState
	if err == nil {
		second, _, err = db.JobStates(ctx, jobs)
	}
	if err != nil {
		c.add(CheckFail, checkRowsState, "%v", err)
		return
	}
	var moved, none, invalid []string
	final := 0
	for _, j := range jobs {
		a, ok := first[j]
		switch {
		case bad[j] != nil:
			invalid = append(invalid, bad[j].Error())
			continue
		case !ok:
			none = append(none, j)
			continue
		}
		if a.Final {
			final++
		}
		if b, ok := second[j]; !ok || b.Marker != a.Marker {
			moved = append(moved, fmt.Sprintf("%s (%q, then %q)", j, a.Marker, b.Marker))
		}
	}
	if len(moved) > 0 {
		c.add(CheckFail, checkRowsState, "the marker changed between two reads with nothing changed on %s: %s; it must follow the data only (no NOW(), RAND() or UUID())",
			Plural(len(moved), "job"), shownList(moved))
	} else {
		c.add(CheckOK, checkRowsState, "%s read twice: markers unchanged; %d final", Plural(len(jobs)-len(none)-len(invalid), "job"), final)
	}
	if len(none) > 0 {
		c.add(CheckWarn, checkRowsState, "no row for %s: a pass treats such a job as having no estimate yet", shownList(none))
	}
	if len(invalid) > 0 {
		c.add(CheckWarn, checkRowsState, "%s", shownList(invalid))
	}
}

// shownList joins at most maxShownJobs items, saying how many more.
func shownList(items []string) string {
	if len(items) <= maxShownJobs {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:maxShownJobs], "; ") + fmt.Sprintf("; and %d more", len(items)-maxShownJobs)
}
