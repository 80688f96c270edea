package discover

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Role keys: what each Choice decides; the keys of Propose's overrides.
const (
	RoleJobTable     = "job_table"
	RoleJobNumber    = "job_number"
	RoleClaim        = "claim"
	RoleRegistration = "registration"
	RoleBookingDate  = "booking_date"
	RoleLineTable    = "line_table"
	RoleLineID       = "line_id"
	RoleLineNo       = "line_no"
	RoleCode         = "code"
	RoleDescription  = "description"
	RoleQuantity     = "quantity"
	RolePrice        = "price"
	RoleTotal        = "total"
	RolePartNumber   = "part_number"
	RoleSoftDelete   = "soft_delete"
	RoleLineUpdated  = "line_updated"
	RoleStatus       = "status"
	RoleNumbering    = "numbering"
)

// None is the override that gives an optional role no column.
const None = "-"

// Choice is one decision of a Proposal: what was chosen, the runner-up,
// why, and whether it is a guess (a person should confirm it).
type Choice struct {
	Role     string // one of the Role constants
	Label    string // the role in words: "job table", "claim-number column"
	Chosen   string // the table or column ("table.column" for status); "" for none
	RunnerUp string // "" when there was none
	Why      string // the evidence
	Guess    bool
	// Options are the candidates, best first, for a person to choose
	// from; Optional says that "none" is an answer too.
	Options  []string
	Optional bool
}

// Numbering says how create_job makes a new job number.
type Numbering struct {
	// Method is "counter" (a counter table's row is bumped),
	// "auto_increment" (the job number is the table's AUTO_INCREMENT
	// key) or "max_plus_one" (the largest number plus one).
	Method string
	// The counter: its table, the column holding the number, and the
	// row (NameCol = NameValue), when Method is "counter".
	Table     *Table
	ValueCol  *Column
	NameCol   *Column
	NameValue string
	// HoldsNext: the counter holds the next number to give out (read,
	// then bump); else the last one given out (bump, then read).
	HoldsNext bool
	// Prefix and Width shape a text job number from the number:
	// "RO-" and 0 make RO-50001; "" and 6 make 050001.
	Prefix string
	Width  int
}

// Proposal is the mapping Propose arrives at.
type Proposal struct {
	Schema *Schema

	Job          *Table
	JobNumber    *Column
	JobKey       *Column // the job table's primary key (for ordering, and the path), nil when none
	Claim        *Column // nil when none was found
	Registration *Column
	BookingDate  *Column

	Lines *Table
	// Path leads from Lines to Job (one or two joins); Mid is the table
	// between when there are two (an estimates table).
	Path []Join
	Mid  *Table

	LineID      *Column // nil: LineIDExpr is used (a composite key)
	LineIDExpr  string
	LineNo      *Column // nil: LineNoExpr
	LineNoExpr  string
	Code        *Column
	Description *Column
	Quantity    *Column
	Price       *Column
	Total       *Column // nil: quotesync computes quantity × price
	PartNumber  *Column
	SoftDelete  *Column
	LineUpdated *Column

	// Status is the column that says how far the estimate is (on Mid or
	// Job); StatusValues its values in the newest rows, most frequent
	// first. Final lists the values confirmed to mean final: never
	// guessed, only given (Propose's final argument).
	Status       *Column
	StatusTable  *Table
	StatusValues []ValueCount
	Final        []string
	// StatusJobs and MixedStatus are, on a flat table, how many jobs the
	// newest lines hold, and of those how many have lines of more than
	// one status.
	StatusJobs, MixedStatus int

	// Codes are the line table's operation codes in use, most frequent
	// first (for the work-type map).
	Codes []ValueCount
	// SoftDeleteValues are a text soft-delete flag's values in use.
	SoftDeleteValues []ValueCount
	// JobNumbers are a few of the newest job numbers, as evidence.
	JobNumbers []string

	// Flat says that there is no job table: Lines, which is Job too,
	// repeats the job number, the claim and the status on every line
	// (flat.go); Path is empty, JobKey nil, and create_job is not written.
	Flat bool

	Numbering Numbering
	// Defaults are the values create_job writes into columns that need
	// one (NOT NULL, no default), by table then column: guesses.
	Defaults map[*Table]map[string]string

	Choices []Choice
}

// NoJobsError says that nothing job-like was found, and what was sought.
type NoJobsError struct {
	Tables int    // tables the user can see
	Detail string // what was missing
}

func (e *NoJobsError) Error() string {
	return fmt.Sprintf("nothing job-like in this database (%d tables visible to this user): %s", e.Tables, e.Detail)
}

// lookedFor is what Propose needs, in words, for NoJobsError.
const lookedFor = "quotesync looks for a job table (named like job, ro, repair_order, work_order, werkorder, or with a claim-number column) " +
	"with a unique job number column (job_no, ro_number, number …), and a line table (named like lines, items, details) " +
	"with a quantity column (qty, quantity, hours, units) and a unit price column (price, unit_price, rate, unit_amt) " +
	"that reaches the job table by a foreign key or by a column named like the job's key (job_id, ro_id, job_no); " +
	"or, with no job table, one table of lines that repeats the job number and the claim number on every line"

// Propose ranks the candidates of every role and decides. overrides
// fixes roles by key (a table or column name; None for no column); final
// lists the status values a person confirmed to mean final (none: the
// mapping submits nothing). sampler reads values (the status's, the
// codes', the newest job numbers, the counter's rows); nil reads none.
func Propose(ctx context.Context, s *Schema, sampler *Sampler, overrides map[string]string, final []string) (*Proposal, error) {
	p := &Proposal{Schema: s, Defaults: map[*Table]map[string]string{}, Final: final}
	jobs := rankJobTables(s)
	if len(jobs) == 0 {
		return nil, &NoJobsError{Tables: len(s.Tables), Detail: "no table has a job number column beside a job-like name or a claim-number column. " + lookedFor}
	}
	// The job table and the line table are chosen together: the best job
	// table that has a line table, among the best job tables only (a
	// schema of hundreds of tables has dozens that look a little like jobs).
	if len(jobs) > maxJobTables && overrides[RoleJobTable] == "" {
		jobs = jobs[:maxJobTables]
	}
	var pairs []pair
	for _, jt := range jobs {
		if o := overrides[RoleJobTable]; o != "" && !strings.EqualFold(o, jt.table.Name) {
			continue
		}
		lts := rankLineTables(s, jt.table)
		if o := overrides[RoleLineTable]; o != "" {
			lts = slices.DeleteFunc(lts, func(lt lineTable) bool { return !strings.EqualFold(o, lt.table.Name) })
		}
		if len(lts) == 0 {
			continue
		}
		pairs = append(pairs, pair{job: jt, lines: lts, score: jt.score + 0.5*lts[0].score})
	}
	var err error
	if flat, ok := flatChoice(jobs, pairs, overrides); ok {
		err = p.chooseFlat(flat, overrides)
	} else {
		err = p.choosePair(s, jobs, pairs, overrides)
	}
	if err != nil {
		return nil, err
	}
	p.status(ctx, sampler, overrides)
	if sampler != nil && p.Code != nil {
		p.Codes, _ = sampler.Distinct(ctx, p.Lines, p.Code, 100)
	}
	if sampler != nil && p.SoftDelete != nil && isText(p.SoftDelete) {
		p.SoftDeleteValues, _ = sampler.Distinct(ctx, p.Lines, p.SoftDelete, 10)
	}
	if p.Flat {
		p.noNumbering(ctx, sampler)
		return p, nil
	}
	p.numbering(ctx, sampler, overrides)
	p.defaults(ctx, sampler)
	return p, nil
}

// choosePair decides the job table and the line table among the pairs
// of a job table and the line tables that reach it, and their columns.
func (p *Proposal) choosePair(s *Schema, jobs []jobTable, pairs []pair, overrides map[string]string) error {
	if len(pairs) == 0 {
		if o := overrides[RoleJobTable] + overrides[RoleLineTable]; o != "" {
			return fmt.Errorf("propose a mapping: no line table reaches the job table as chosen (%s)", strings.Trim(overrides[RoleJobTable]+", "+overrides[RoleLineTable], ", "))
		}
		return &NoJobsError{Tables: len(s.Tables), Detail: fmt.Sprintf("job-like tables (%s), but no line table reaches one. %s", names(jobs), lookedFor)}
	}
	// Best first; the first of equals wins, as the runner-up does.
	ranked := slices.Clone(pairs)
	slices.SortStableFunc(ranked, func(a, b pair) int { return cmp.Compare(b.score, a.score) })
	chosen := ranked[0]
	jobOpts := moveFirst(mapped(pairs, func(pr pair) string { return pr.job.table.Name }), chosen.job.table.Name)
	runner, runnerScore := "", 0.0
	if len(ranked) > 1 {
		runner, runnerScore = ranked[1].job.table.Name, ranked[1].score
	}
	guess := runner != "" && runnerScore >= 0.8*chosen.score
	p.Job = chosen.job.table
	p.choose(Choice{Role: RoleJobTable, Label: "job table", Chosen: p.Job.Name, RunnerUp: runner,
		Why: strings.Join(chosen.job.why, ", "), Guess: guess && overrides[RoleJobTable] == "", Options: jobOpts})

	lt := chosen.lines[0]
	p.Lines, p.Path = lt.table, lt.path.joins
	if len(p.Path) == 2 {
		p.Mid = p.Path[0].To
	}
	lineOpts := mapped(chosen.lines, func(l lineTable) string { return l.table.Name })
	lineRunner, lineGuess := "", false
	if len(chosen.lines) > 1 {
		lineRunner = chosen.lines[1].table.Name
		lineGuess = chosen.lines[1].score >= 0.8*lt.score
	}
	anyByName := slices.ContainsFunc(p.Path, func(j Join) bool { return j.ByName })
	why := strings.Join(lt.why, ", ")
	if anyByName {
		why += " (no foreign key declares it: matched by names)"
	}
	p.choose(Choice{Role: RoleLineTable, Label: "line table", Chosen: p.Lines.Name, RunnerUp: lineRunner, Why: why,
		Guess: (lineGuess || anyByName) && overrides[RoleLineTable] == "", Options: lineOpts})

	if err := p.jobColumns(chosen.job, overrides); err != nil {
		return err
	}
	return p.lineColumns(lt, overrides)
}

// maxJobTables caps the best job tables Propose seeks line tables of.
const maxJobTables = 10

// pair is a job table and the line tables that reach it.
type pair struct {
	job   jobTable
	lines []lineTable
	score float64
}

func names(jobs []jobTable) string {
	out := mapped(jobs[:min(len(jobs), 5)], func(j jobTable) string { return j.table.Name })
	if len(jobs) > 5 {
		out = append(out, "…")
	}
	return strings.Join(out, ", ")
}

func moveFirst(list []string, first string) []string {
	return append([]string{first}, slices.DeleteFunc(slices.Clone(list), func(s string) bool { return s == first })...)
}

func (p *Proposal) choose(c Choice) { p.Choices = append(p.Choices, c) }

// Choice returns the decision of role, and whether there is one.
func (p *Proposal) Choice(role string) (Choice, bool) {
	if i := slices.IndexFunc(p.Choices, func(c Choice) bool { return c.Role == role }); i >= 0 {
		return p.Choices[i], true
	}
	return Choice{}, false
}

// pick decides one column role among cands: the override when given
// (None: no column; a name that is not a column of t is an error), else
// the best candidate. A guess: a runner-up within 80% of the winner, or
// a winner named only partly like the role.
func (p *Proposal) pick(role, label string, t *Table, cands []candidate, overrides map[string]string, optional bool) (*Column, error) {
	c := Choice{Role: role, Label: label, Optional: optional,
		Options: mapped(cands, func(c candidate) string { return c.col.Name })}
	if o, ok := overrides[role]; ok && o != "" {
		if o == None {
			if !optional {
				return nil, fmt.Errorf("propose a mapping: %s is required", label)
			}
			c.Why = "none, as chosen"
			p.choose(c)
			return nil, nil
		}
		col := t.Column(o)
		if col == nil {
			return nil, fmt.Errorf("propose a mapping: %s %q is not a column of %s", label, o, t.Name)
		}
		c.Chosen, c.Why = col.Name, "as chosen"
		c.Options = moveFirst(c.Options, col.Name)
		p.choose(c)
		return col, nil
	}
	if len(cands) == 0 {
		c.Why = "no column of " + t.Name + " is named like one"
		if !optional {
			return nil, fmt.Errorf("propose a mapping: no %s in %s (%s); name it with --choose %s=COLUMN", label, t.Name, c.Why, role)
		}
		p.choose(c)
		return nil, nil
	}
	win := cands[0]
	c.Chosen, c.Why = win.col.Name, strings.Join(win.why, ", ")
	if len(cands) > 1 {
		c.RunnerUp = cands[1].col.Name
		c.Guess = cands[1].score >= 0.8*win.score
	}
	if strings.Contains(c.Why, "named like") && win.score < 3 {
		c.Guess = true
	}
	p.choose(c)
	return win.col, nil
}

// jobColumns decides the job table's columns.
func (p *Proposal) jobColumns(jt jobTable, overrides map[string]string) error {
	var err error
	if p.JobNumber, err = p.pick(RoleJobNumber, "job number column", p.Job, jt.number, overrides, false); err != nil {
		return err
	}
	p.JobKey = p.Job.SinglePK()
	if p.Claim, err = p.pick(RoleClaim, "claim-number column", p.Job, except(jt.claim, p.JobNumber), overrides, true); err != nil {
		return err
	}
	if p.Registration, err = p.pick(RoleRegistration, "registration column", p.Job, except(jt.registration, p.JobNumber, p.Claim), overrides, true); err != nil {
		return err
	}
	p.BookingDate, err = p.pick(RoleBookingDate, "booking date column", p.Job, rankCols(p.Job, bookingNames, isTime, nil), overrides, true)
	return err
}

// pathCols are the line table's columns on the path (not amounts or
// codes); of a flat table, the job's columns.
func (p *Proposal) pathCols() []*Column {
	if p.Flat {
		return []*Column{p.JobNumber, p.Claim, p.Registration, p.BookingDate}
	}
	var out []*Column
	for _, j := range p.Path {
		if j.From == p.Lines {
			out = append(out, j.FromCol)
		}
	}
	return out
}

// lineColumns decides the line table's columns.
func (p *Proposal) lineColumns(lt lineTable, overrides map[string]string) error {
	l := p.Lines
	used := p.pathCols()
	var err error
	// line_id: the primary key, else a unique column, else the columns
	// of a composite key joined.
	switch pk := l.SinglePK(); {
	case overrides[RoleLineID] != "":
		if p.LineID, err = p.pick(RoleLineID, "line id column", l, nil, overrides, false); err != nil {
			return err
		}
	case pk != nil:
		p.LineID = pk
		p.choose(Choice{Role: RoleLineID, Label: "line id column", Chosen: pk.Name, Why: "the primary key"})
	default:
		if i := slices.IndexFunc(l.Unique, func(u []string) bool { return len(u) == 1 }); i >= 0 {
			p.LineID = l.Column(l.Unique[i][0])
			p.choose(Choice{Role: RoleLineID, Label: "line id column", Chosen: l.Unique[i][0],
				Why: "a unique column (no single-column primary key)", Guess: true})
		} else {
			key := l.PrimaryKey
			if len(key) == 0 && len(l.Unique) > 0 {
				key = l.Unique[0]
			}
			if len(key) == 0 {
				return fmt.Errorf("propose a mapping: %s has no primary key or unique index, and every line needs a stable id (it becomes the remote item id); name one with --choose %s=COLUMN", l.Name, RoleLineID)
			}
			parts := mapped(key, func(k string) string { return aLine + "." + Ident(k) })
			p.LineIDExpr = "CONCAT_WS('-', " + strings.Join(parts, ", ") + ")"
			p.choose(Choice{Role: RoleLineID, Label: "line id column", Chosen: strings.Join(key, "+"), Why: "the columns of the composite key, joined by '-'", Guess: true})
		}
	}
	used = append(used, p.LineID)
	parts := rankCols(l, partNumberNames, isText, nil)
	var firstPart *Column
	if len(parts) > 0 {
		firstPart = parts[0].col
	}
	// Each role in turn, among the columns no earlier role took; the best
	// part number column is no operation code.
	for _, r := range []struct {
		role, label string
		dst         **Column
		cands       []candidate
		optional    bool
		notUsed     *Column
	}{
		{RoleQuantity, "quantity column", &p.Quantity, lt.quantity, false, nil},
		{RolePrice, "unit price column", &p.Price, lt.price, false, nil},
		{RoleTotal, "line total column", &p.Total, numericCols(l, totalNames), true, nil},
		{RoleDescription, "description column", &p.Description, descriptionCols(l), false, nil},
		{RoleCode, "operation code column", &p.Code, rankCols(l, codeNames, shortText, nil), false, firstPart},
		{RolePartNumber, "part number column", &p.PartNumber, parts, true, nil},
		{RoleLineNo, "line number column", &p.LineNo, rankCols(l, lineNoNames, isNumeric, nil), true, nil},
	} {
		if *r.dst, err = p.pick(r.role, r.label, l, except(r.cands, append(used, r.notUsed)...), overrides, r.optional); err != nil {
			return err
		}
		used = append(used, *r.dst)
	}
	if p.LineNo == nil {
		c := &p.Choices[len(p.Choices)-1]
		c.Guess = true
		if p.LineID != nil && isInteger(p.LineID) {
			p.LineNoExpr = "l." + Ident(p.LineID.Name)
			c.Why = "no line number column: the line id orders the items"
		} else {
			p.LineNoExpr = "0"
			c.Why = "no line number column: items are ordered by their line id"
		}
	}
	soft := rankCols(l, softDeleteNames, func(c *Column) bool { return isBoolish(c) || isTime(c) }, nil)
	if p.SoftDelete, err = p.pick(RoleSoftDelete, "soft-delete flag", l, except(soft, used...), overrides, true); err != nil {
		return err
	}
	upd := rankCols(l, updatedNames, isTime, func(c *Column, cand *candidate) {
		if c.OnUpdate {
			cand.score += 3
			cand.why = append(cand.why, "ON UPDATE CURRENT_TIMESTAMP: the server keeps it current")
		}
	})
	p.LineUpdated, err = p.pick(RoleLineUpdated, "line change time column", l, upd, overrides, true)
	return err
}

// status finds the column that says how far the estimate is: on the
// table between lines and jobs (an estimates table) before the job
// table, with its values read from the data.
func (p *Proposal) status(ctx context.Context, sampler *Sampler, overrides map[string]string) {
	var cands []candidate
	for _, t := range []*Table{p.Mid, p.Job} {
		if t == nil {
			continue
		}
		for _, c := range rankCols(t, statusNames, func(c *Column) bool { return shortText(c) || isInteger(c) || isBoolish(c) }, nil) {
			if t == p.Mid {
				c.score++
			}
			cands = append(cands, c)
		}
	}
	sortCandidates(cands)
	c := Choice{Role: RoleStatus, Label: "status column (final)", Optional: true, Options: mapped(cands, candidate.qualified)}
	if o := overrides[RoleStatus]; o != "" {
		cands = pickQualified(cands, o, p)
		if o == None {
			cands = nil
		}
	}
	if len(cands) == 0 {
		c.Why = "none found: without one quotesync never submits"
		p.choose(c)
		return
	}
	win := cands[0]
	p.Status, p.StatusTable = win.col, win.table
	c.Chosen, c.Why = win.qualified(), strings.Join(win.why, ", ")
	if len(cands) > 1 {
		c.RunnerUp = cands[1].qualified()
	}
	c.Guess = true // which value means final is a person's call, always
	if sampler != nil {
		p.StatusValues, _ = sampler.Distinct(ctx, win.table, win.col, 30)
	}
	p.choose(c)
}

// pickQualified narrows the status candidates cands to the one named
// "table.col" or "col" (a bare col not among them is looked up on the job
// table); nil when none.
func pickQualified(cands []candidate, name string, p *Proposal) []candidate {
	for _, c := range cands {
		if strings.EqualFold(c.qualified(), name) || strings.EqualFold(c.col.Name, name) {
			return []candidate{c}
		}
	}
	table, col, ok := strings.Cut(name, ".")
	if !ok {
		table, col = p.Job.Name, name
	}
	if t := p.Schema.Table(table); t != nil {
		if c := t.Column(col); c != nil {
			return []candidate{{table: t, col: c, why: []string{"as chosen"}}}
		}
	}
	return nil
}

// jobNumberShape reads the prefix and width of text job numbers.
var jobNumberShape = regexp.MustCompile(`^(.*?)(\d+)$`)

// numbering decides how create_job makes a job number: the job number
// column's AUTO_INCREMENT, a counter table's row, or the largest number
// plus one. The newest job numbers say the prefix and width, and whether
// a counter holds the last or the next number.
func (p *Proposal) numbering(ctx context.Context, sampler *Sampler, overrides map[string]string) {
	n := &p.Numbering
	c := Choice{Role: RoleNumbering, Label: "how new job numbers are made"}
	maxNum, shaped := int64(-1), true
	if sampler != nil {
		rows, _ := sampler.Rows(ctx, p.Job, []*Column{p.JobNumber}, 20)
		prefixes := map[string]bool{}
		widths := map[int]bool{}
		padded := false
		for _, r := range rows {
			if !r[0].Valid {
				continue
			}
			v := r[0].String
			p.JobNumbers = append(p.JobNumbers, v)
			m := jobNumberShape.FindStringSubmatch(v)
			if m == nil {
				shaped = false
				continue
			}
			prefixes[m[1]] = true
			widths[len(m[2])] = true
			padded = padded || (len(m[2]) > 1 && m[2][0] == '0')
			if num, err := strconv.ParseInt(m[2], 10, 64); err == nil && num > maxNum {
				maxNum = num
			}
		}
		if shaped && len(prefixes) == 1 {
			n.Prefix = slices.Collect(maps.Keys(prefixes))[0]
		} else if len(prefixes) > 1 {
			shaped = false
		}
		if padded && len(widths) == 1 {
			n.Width = slices.Collect(maps.Keys(widths))[0]
		}
	}
	if isInteger(p.JobNumber) {
		n.Prefix, n.Width = "", 0
	}
	counter, counterWhy := p.findCounter(ctx, sampler, maxNum)
	override := overrides[RoleNumbering]
	switch {
	case override == "auto_increment" || (override == "" && p.JobNumber.AutoIncrement):
		n.Method = "auto_increment"
		c.Chosen, c.Why = "auto_increment", p.Job.Name+"."+p.JobNumber.Name+" is AUTO_INCREMENT: the server numbers new jobs"
		c.Guess = !p.JobNumber.AutoIncrement
	case override == "counter" || (override == "" && counter != nil):
		if counter == nil {
			c.Chosen, c.Why, c.Guess = "max_plus_one", "no counter table found", true
			n.Method = "max_plus_one"
			break
		}
		*n = Numbering{Method: "counter", Table: counter.Table, ValueCol: counter.ValueCol, NameCol: counter.NameCol,
			NameValue: counter.NameValue, HoldsNext: counter.HoldsNext, Prefix: n.Prefix, Width: n.Width}
		c.Chosen, c.Why = "counter "+counter.Table.Name+"."+counter.ValueCol.Name, counterWhy
		c.Guess = strings.Contains(counterWhy, "guess")
	default:
		n.Method = "max_plus_one"
		c.Chosen = "max_plus_one"
		c.Why = "no counter table and no AUTO_INCREMENT job number: the largest number plus one, under the unique index (a race with the shop's own application fails the insert, and quotesync tries again at the next pass)"
		c.Guess = true
	}
	if !shaped && isText(p.JobNumber) && n.Method != "auto_increment" {
		c.Guess = true
		c.Why += "; the newest job numbers do not share one prefix: check the number's shape"
	}
	c.Options = moveFirst([]string{"counter", "auto_increment", "max_plus_one"}, n.Method)
	p.choose(c)
}

// findCounter looks for a counter table: named like one, with a number
// column, and a row for jobs (named like job, ro, wo, order), or the row
// whose number is closest to the newest job number.
func (p *Proposal) findCounter(ctx context.Context, sampler *Sampler, maxNum int64) (*Numbering, string) {
	var best *Numbering
	bestScore, why := 0.0, ""
	for _, t := range p.Schema.Tables {
		name, _ := counterTableNames.scoreWords(t.words())
		if name == 0 || t == p.Job || t == p.Lines || !usableIdent(t.Name) {
			continue
		}
		vals := rankCols(t, counterValueNames, isInteger, nil)
		if len(vals) == 0 {
			continue
		}
		val := vals[0].col
		nameCols := except(rankCols(t, counterNameNames, isText, nil), val)
		cand := &Numbering{Table: t, ValueCol: val}
		score := name + vals[0].score
		w := fmt.Sprintf("table %s is named like a counter; %s holds the number", t.Name, val.Name)
		if len(nameCols) > 0 {
			cand.NameCol = nameCols[0].col
		}
		if sampler != nil {
			cols := []*Column{val}
			if cand.NameCol != nil {
				cols = append(cols, cand.NameCol)
			}
			rows, err := sampler.Rows(ctx, t, cols, 50)
			if err != nil || len(rows) == 0 {
				continue
			}
			row, rowWhy := counterRow(rows, cand.NameCol != nil, maxNum)
			if row == nil {
				continue
			}
			if cand.NameCol != nil {
				cand.NameValue = row[1].String
				w += fmt.Sprintf(", in its row %s = %s (%s)", cand.NameCol.Name, cand.NameValue, rowWhy)
			} else if len(rows) > 1 {
				continue
			}
			v, _ := strconv.ParseInt(row[0].String, 10, 64)
			switch {
			case maxNum >= 0 && v == maxNum+1:
				cand.HoldsNext = true
				w += fmt.Sprintf("; it holds %d, the newest job number is %d: it holds the next number", v, maxNum)
			case maxNum >= 0 && v == maxNum:
				w += fmt.Sprintf("; it holds %d, the newest job's number: it holds the last number given out", v)
			default:
				w += fmt.Sprintf("; it holds %d and the newest job number is %d: a guess that it holds the last number given out (bumped before use: at worst a number is skipped, never given twice)", v, maxNum)
			}
		}
		if score > bestScore {
			best, bestScore, why = cand, score, w
		}
	}
	return best, why
}

// counterRow picks the counter's row for jobs: one whose name is a job
// word, else the one whose number is closest to the newest job number;
// with no name column, the only row.
func counterRow(rows [][]sql.NullString, named bool, maxNum int64) ([]sql.NullString, string) {
	if !named {
		return rows[0], "its only row"
	}
	for _, r := range rows {
		if slices.ContainsFunc(tokens(r[1].String), func(w string) bool { return slices.Contains(jobCounterRowWords, w) }) {
			return r, "named for jobs"
		}
	}
	if maxNum < 0 {
		return nil, ""
	}
	var best []sql.NullString
	bestDist := int64(-1)
	for _, r := range rows {
		v, err := strconv.ParseInt(r[0].String, 10, 64)
		if err != nil {
			continue
		}
		d := max(v-maxNum, maxNum-v)
		if bestDist < 0 || d < bestDist {
			best, bestDist = r, d
		}
	}
	if best == nil || bestDist > 1 {
		return nil, ""
	}
	return best, "its number matches the newest job's"
}

// initialWords are status values that say a job or estimate has just
// begun: a new job takes one, never a final one.
var initialWords = []string{"open", "new", "draft", "quote", "quoting", "quotation", "estimate", "estimating",
	"pending", "offerte", "concept", "entwurf", "neu", "o", "n", "d"}

// initialStatus picks the status a new job starts with: a value in use
// that reads like a beginning (open, new, draft …), else the most
// frequent one; never a value confirmed as final.
func (p *Proposal) initialStatus(ctx context.Context, sampler *Sampler, t *Table, c *Column) (string, bool) {
	vs, err := sampler.Distinct(ctx, t, c, 30)
	if err != nil {
		return "", false
	}
	var kept []string
	for _, v := range vs {
		if !v.Null && !slices.ContainsFunc(p.Final, func(f string) bool { return strings.EqualFold(f, v.Value) }) {
			kept = append(kept, v.Value)
		}
	}
	begins := func(v string) bool { return slices.Contains(initialWords, strings.ToLower(strings.TrimSpace(v))) }
	if i := slices.IndexFunc(kept, begins); i >= 0 {
		return kept[i], true
	}
	if len(kept) == 0 {
		return "", false
	}
	return kept[0], true
}

// defaults finds the values create_job must write into columns that need
// one (NOT NULL without a default) and that the mapping does not set:
// the most frequent value in the newest rows, else one of the type.
func (p *Proposal) defaults(ctx context.Context, sampler *Sampler) {
	set := map[*Column]bool{p.JobNumber: true, p.Claim: true, p.Registration: true}
	tables := []*Table{p.Job}
	if p.Mid != nil {
		tables = append(tables, p.Mid)
		set[p.Path[1].FromCol] = true // the estimate's job
	}
	for _, t := range tables {
		for _, c := range t.Columns {
			if set[c] || c.Nullable || c.HasDefault || c.AutoIncrement || c.Generated || !usableIdent(c.Name) {
				continue
			}
			v := p.defaultValue(ctx, sampler, t, c)
			if p.Defaults[t] == nil {
				p.Defaults[t] = map[string]string{}
			}
			p.Defaults[t][c.Name] = v
		}
	}
}

func (p *Proposal) defaultValue(ctx context.Context, sampler *Sampler, t *Table, c *Column) string {
	switch {
	case c.DataType == "date":
		return "CURDATE()"
	case isTime(c):
		return "NOW()"
	case isNumeric(c):
		return "0"
	}
	if sampler != nil && c == p.Status {
		if v, ok := p.initialStatus(ctx, sampler, t, c); ok {
			return Literal(v)
		}
	} else if sampler != nil {
		if vs, err := sampler.Distinct(ctx, t, c, 1); err == nil && len(vs) == 1 && !vs[0].Null {
			return Literal(vs[0].Value)
		}
	}
	if c.DataType == "enum" {
		if _, rest, ok := strings.Cut(c.ColumnType, "'"); ok {
			if v, _, ok := strings.Cut(rest, "'"); ok {
				return Literal(v)
			}
		}
	}
	return "''"
}
