package discover

import (
	"context"
	"fmt"
	"strings"
)

// The flat estimate table: some shop systems have no table of jobs at all.
// One table holds the estimate's lines, and every line repeats the job
// number, the claim, the registration and the status. A job is then the
// distinct job number of the lines, and exists once the shop writes its
// first line: quotesync finds jobs (find_job, by the claim) and never makes
// one (no create_job: a request waits until then).

// flatTable is its own job table: its lines repeat the job number.
type flatTable struct {
	job   jobTable
	lines lineTable
	score float64
}

// flatChoice picks the flat table: only when no line table reaches any
// job table (a schema with a job table is mapped through it), or when
// --choose names one table as both. It needs a claim column (find_job is
// the only way from a request to a job), a job number column that is not
// unique (a unique one means a row per job), and amounts.
func flatChoice(jobs []jobTable, pairs []pair, overrides map[string]string) (flatTable, bool) {
	jo, lo := overrides[RoleJobTable], overrides[RoleLineTable]
	same := jo != "" && strings.EqualFold(jo, lo)
	if len(pairs) > 0 && !same {
		return flatTable{}, false
	}
	var best flatTable
	found := false
	for _, jt := range jobs {
		t := jt.table
		if (jo != "" && !strings.EqualFold(jo, t.Name)) || (lo != "" && !strings.EqualFold(lo, t.Name)) {
			continue
		}
		if len(jt.claim) == 0 || len(jt.number) == 0 || t.IsUnique(jt.number[0].col.Name) {
			continue
		}
		lt, ok := amounts(t)
		if !ok {
			continue
		}
		lt.score = 0.5*lt.quantity[0].score + 0.5*lt.price[0].score
		if len(descriptionCols(t)) > 0 {
			lt.score++
		}
		f := flatTable{job: jt, lines: lt, score: jt.score + lt.score}
		if !found || f.score > best.score {
			best, found = f, true
		}
	}
	return best, found
}

// chooseFlat decides the flat table's roles: job and line table both,
// the job's columns and the line's on the same rows.
func (p *Proposal) chooseFlat(f flatTable, overrides map[string]string) error {
	t := f.job.table
	p.Job, p.Lines, p.Flat = t, t, true
	chosen := overrides[RoleJobTable] != "" && overrides[RoleLineTable] != ""
	p.choose(Choice{Role: RoleJobTable, Label: "job table", Chosen: t.Name, Guess: !chosen, Options: []string{t.Name},
		Why: fmt.Sprintf("no table holds one row per job, and no line table reaches one; %s holds lines (%s) and repeats %s on every one: "+
			"a job is the distinct %s of its lines", t.Name, strings.Join(f.lines.why, ", "), strings.Join(f.job.why, ", "), f.job.number[0].col.Name)})
	p.choose(Choice{Role: RoleLineTable, Label: "line table", Chosen: t.Name, Options: []string{t.Name},
		Why: "the same table: one row per line"})
	if err := p.jobColumns(f.job, overrides); err != nil {
		return err
	}
	if p.Claim == nil {
		return fmt.Errorf("propose a mapping: %s has no job table, so find_job (by the claim number) is the only way to a job, and it needs a claim-number column; name it with --choose %s=COLUMN", t.Name, RoleClaim)
	}
	p.JobKey = nil // the primary key is a line's
	return p.lineColumns(f.lines, overrides)
}

// noNumbering records that a flat table's jobs are never made by
// quotesync, and reads the newest job numbers as evidence.
func (p *Proposal) noNumbering(ctx context.Context, sampler *Sampler) {
	p.choose(Choice{Role: RoleNumbering, Label: "how new job numbers are made", Chosen: "none",
		Why: fmt.Sprintf("no create_job: a job of %s exists once the shop writes its first line; a request waits until then", p.Lines.Name)})
	if sampler == nil {
		return
	}
	rows, _ := sampler.Rows(ctx, p.Lines, []*Column{p.JobNumber}, 200)
	seen := map[string]bool{}
	for _, r := range rows {
		if r[0].Valid && !seen[r[0].String] && len(p.JobNumbers) < 20 {
			seen[r[0].String] = true
			p.JobNumbers = append(p.JobNumbers, r[0].String)
		}
	}
	if p.Status != nil {
		p.MixedStatus, p.StatusJobs, _ = sampler.Mixed(ctx, p.Lines, p.JobNumber, p.Status)
	}
}

// flatEstimateState finishes a flat table's estimate_state from its
// columns so far (see estimateState).
func (p *Proposal) flatEstimateState(q *Queries, cols []string) string {
	jobNo := col(aLine, p.JobNumber)
	if p.Status != nil && p.StatusJobs > 0 {
		if p.MixedStatus > 0 {
			q.note("estimate_state", true, "in the newest lines, %d of %d jobs have lines of more than one %s: check that final when all live lines are final is what the shop means",
				p.MixedStatus, p.StatusJobs, p.Status.Name)
		} else {
			q.note("estimate_state", false, "in the newest lines, each of %d jobs has one %s on all its lines: the shop writes the job's status on every line", p.StatusJobs, p.Status.Name)
		}
	}
	if p.markerOK() {
		cols = append(cols, p.marker())
		q.note("estimate_state", false, "marker: the number of lines and the newest %s (kept current by the server, on a change of status too), so an idle pass reads no lines", p.LineUpdated.Name)
	} else {
		q.note("estimate_state", false, "no marker (no change time the server keeps current on %s): quotesync derives one from line_items' rows, computed by the database", p.Lines.Name)
	}
	return fmt.Sprintf("SELECT %s\nFROM %s %s\nWHERE %s IN (:jobs)\nGROUP BY %s", strings.Join(cols, ",\n       "), Ident(p.Lines.Name), aLine, jobNo, jobNo)
}
