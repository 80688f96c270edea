package discover

import (
	"context"
	"fmt"
	"strings"
)

// The flat estimate table: some shop systems have no table of jobs at
// all. One table holds the estimate's lines, and every line repeats the
// job number, the claim, the registration and the status. A job is then
// the distinct job number of the lines; it exists once the shop writes
// its first line, so quotesync finds jobs (find_job, by the claim) and
// never makes one (no create_job: a request waits until the shop writes
// the job's first line).

// flatTable is a table that is its own job table: its lines repeat the
// job number.
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
		qty, price := numericCols(t, quantityNames), numericCols(t, priceNames)
		if len(qty) == 0 || len(price) == 0 || (len(qty) == 1 && len(price) == 1 && qty[0].col == price[0].col) {
			continue
		}
		lt := lineTable{candidate: candidate{table: t}, quantity: qty, price: price}
		lt.score = 0.5*qty[0].score + 0.5*price[0].score
		lt.why = []string{"quantity " + qty[0].col.Name, "price " + price[0].col.Name}
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

// newestLine orders a flat table's rows newest first: by the line id,
// else by the job number.
func (p *Proposal) newestLine() string {
	if p.LineID != nil {
		return col(aLine, p.LineID)
	}
	return col(aLine, p.JobNumber)
}

// flatQueries writes the statements of a flat table: every one reads the
// one table (alias l); a job is the distinct job number of its lines.
func (p *Proposal) flatQueries() Queries {
	q := Queries{Notes: map[string][]Note{}}
	t, jobNo := Ident(p.Lines.Name)+" "+aLine, col(aLine, p.JobNumber)
	claim := col(aLine, p.Claim)
	q.FindJob = fmt.Sprintf("SELECT %s AS job\nFROM %s\nWHERE %s = :claim_number\nORDER BY %s DESC\nLIMIT 1", jobNo, t, claim, p.newestLine())
	q.note("find_job", false, "the job of the newest line of %s whose %s is the request's claim number", p.Lines.Name, p.Claim.Name)
	q.note("find_job", true, "leave out jobs that must not take a request (cancelled, closed): add a condition on their status")
	q.note("create_job", true, "no create_job: %s has no table of jobs, and a job exists once the shop writes its first line. "+
		"A request whose claim has no line yet waits (quotesync status: waiting, reason no_job) and is accepted at the first pass after the shop writes one",
		p.Lines.Name)
	if p.Registration != nil {
		q.Params = append(q.Params, "registration")
	}
	if p.BookingDate != nil {
		q.BookingDate = fmt.Sprintf("SELECT MAX(%s) AS booking_date FROM %s WHERE %s = :job", col(aLine, p.BookingDate), t, jobNo)
	}
	q.LineItems = p.lineItems(&q)
	q.EstimateState = p.flatEstimateState(&q)
	q.ShopChanged = p.shopChanged(&q)
	cols := []string{jobNo + " AS job", "MAX(" + claim + ") AS claim_number"}
	if p.Registration != nil {
		cols = append(cols, "MAX("+col(aLine, p.Registration)+") AS registration")
	}
	q.SampleJobs = fmt.Sprintf("SELECT %s\nFROM %s\nWHERE %s\nGROUP BY %s\nORDER BY MAX(%s) DESC\nLIMIT 20",
		strings.Join(cols, ", "), t, p.hasClaim(claim), jobNo, p.newestLine())
	return q
}

// flatEstimateState groups the lines by job: final when every live line
// carries a final status (a line added after, still open, makes the
// estimate a Draft again; a job without live lines is not final).
func (p *Proposal) flatEstimateState(q *Queries) string {
	jobNo := col(aLine, p.JobNumber)
	cols := []string{jobNo + " AS job"}
	switch {
	case p.Status != nil && len(p.Final) > 0:
		isFinal := fmt.Sprintf("CASE WHEN %s IN (%s) THEN 1 ELSE 0 END", p.statusExpr(), p.finalValues())
		if live := p.live(); live != "" {
			isFinal = fmt.Sprintf("CASE WHEN %s THEN %s END", live, isFinal)
		}
		cols = append(cols, "MIN("+isFinal+") AS final")
		q.note("estimate_state", false, "final: every live line of the job has %s %s (a line added later with another status makes the estimate a Draft again)",
			p.Status.Name, strings.Join(p.Final, " or "))
	case p.Status != nil:
		q.note("estimate_state", true, "which value of %s.%s means final was not confirmed, so this returns no final column and quotesync submits nothing: "+
			"add MIN(CASE WHEN %s IN ('VALUE') THEN 1 ELSE 0 END) AS final (values seen: %s)",
			p.Lines.Name, p.Status.Name, p.statusExpr(), ValueList(p.StatusValues))
	default:
		q.note("estimate_state", true, "no status column was found, so this returns no final column and quotesync submits nothing: add a final column (1 when the estimate is final)")
	}
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
