package discover

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Queries is the mapping written from a Proposal: shopdb's Queries by the
// same names, and what to tell a person about each.
type Queries struct {
	FindJob       string
	CreateJob     []string
	BookingDate   string
	LineItems     string
	EstimateState string
	ShopChanged   string
	// SampleJobs lists the newest jobs with their claim numbers (and the
	// other values find_job reads), for check to prove the mapping on.
	SampleJobs string
	// Params are the request parameters the statements use beyond the
	// built-in ones (":registration").
	Params []string
	// Notes says, per query key ("find_job"), what was written and why;
	// a note with Check set is a guess a person should confirm.
	Notes map[string][]Note
}

// Note is one comment on a query.
type Note struct {
	Text  string
	Check bool
}

func (q *Queries) note(key string, check bool, format string, args ...any) {
	q.Notes[key] = append(q.Notes[key], Note{Text: fmt.Sprintf(format, args...), Check: check})
}

// Table aliases of the written statements.
const (
	aJob  = "j"
	aMid  = "e"
	aLine = "l"
	aCtr  = "c"
)

func col(alias string, c *Column) string { return alias + "." + Ident(c.Name) }

// Queries writes the mapping's statements. A flat table's statements read
// the one table (alias l), a job being the distinct job number of its lines.
func (p *Proposal) Queries() Queries {
	q := Queries{Notes: map[string][]Note{}}
	a, agg := aJob, func(e string) string { return e }
	if p.Flat {
		a, agg = aLine, func(e string) string { return "MAX(" + e + ")" }
	}
	from, jobNo := Ident(p.Job.Name)+" "+a, col(a, p.JobNumber)
	order := jobNo // newest first
	switch {
	case p.Flat && p.LineID != nil:
		order = col(aLine, p.LineID)
	case p.JobKey != nil:
		order = col(aJob, p.JobKey)
	}
	switch {
	case p.Claim == nil:
		q.note("find_job", true, "no claim-number column was found in %s: without find_job every request gets a new job from create_job", p.Job.Name)
	case p.Flat:
		q.note("find_job", false, "the job of the newest line of %s whose %s is the request's claim number", p.Lines.Name, p.Claim.Name)
	default:
		q.note("find_job", false, "the job whose %s is the request's claim number (the newest, when several share it)", p.Claim.Name)
	}
	if p.Claim != nil {
		q.FindJob = fmt.Sprintf("SELECT %s AS job\nFROM %s\nWHERE %s = :claim_number\nORDER BY %s DESC\nLIMIT 1",
			jobNo, from, col(a, p.Claim), order)
		q.note("find_job", true, "leave out jobs that must not take a request (cancelled, closed): add a condition on their status")
	}
	if p.Registration != nil {
		q.Params = append(q.Params, "registration")
	}
	if p.Flat {
		q.note("create_job", true, "no create_job: %s has no table of jobs, and a job exists once the shop writes its first line. "+
			"A request whose claim has no line yet waits (quotesync status: waiting, reason no_job) and is accepted at the first pass after the shop writes one",
			p.Lines.Name)
	} else {
		q.CreateJob = p.createJob(&q)
	}
	if p.BookingDate != nil {
		q.BookingDate = fmt.Sprintf("SELECT %s AS booking_date FROM %s WHERE %s = :job", agg(col(a, p.BookingDate)), from, jobNo)
	}
	q.LineItems = p.lineItems(&q)
	q.EstimateState = p.estimateState(&q)
	q.ShopChanged = p.shopChanged(&q)
	if p.Claim != nil {
		cols := []string{jobNo + " AS job", agg(col(a, p.Claim)) + " AS claim_number"}
		if p.Registration != nil {
			cols = append(cols, agg(col(a, p.Registration))+" AS registration")
		}
		group := ""
		if p.Flat {
			group = "\nGROUP BY " + jobNo
		}
		q.SampleJobs = fmt.Sprintf("SELECT %s\nFROM %s\nWHERE %s%s\nORDER BY %s DESC\nLIMIT 20",
			strings.Join(cols, ", "), from, p.hasClaim(col(a, p.Claim)), group, agg(order))
	}
	return q
}

// live is the condition that keeps soft-deleted lines out, "" when the
// lines have no such flag.
func (p *Proposal) live() string {
	c := p.SoftDelete
	if c == nil {
		return ""
	}
	name := col(aLine, c)
	ws := tokens(c.Name)
	inverse := slices.Contains(ws, "active") || slices.Contains(ws, "live")
	switch {
	case isTime(c):
		return name + " IS NULL"
	case inverse && isText(c):
		return "COALESCE(" + name + ", 'Y') IN ('Y', 'y', '1', 'T', 't')"
	case inverse:
		return "COALESCE(" + name + ", 1) <> 0"
	case isText(c):
		return "COALESCE(" + name + ", 'N') NOT IN ('Y', 'y', '1', 'T', 't')"
	default:
		return "COALESCE(" + name + ", 0) = 0"
	}
}

// from writes the FROM clause from the job table along the path: through
// the table between, when there is one, to the lines (lineJoin "JOIN" or
// "LEFT JOIN"), or, with lineJoin "", no further.
func (p *Proposal) from(lineJoin string) string {
	out, lines := Ident(p.Job.Name)+" "+aJob, p.Path[0]
	to := aJob
	if len(p.Path) == 2 {
		toJob := p.Path[1]
		out += fmt.Sprintf("\nJOIN %s %s ON %s = %s", Ident(p.Mid.Name), aMid, col(aMid, toJob.FromCol), col(aJob, toJob.ToCol))
		to = aMid
	}
	if lineJoin == "" {
		return out
	}
	return out + fmt.Sprintf("\n%s %s %s ON %s = %s", lineJoin, Ident(p.Lines.Name), aLine,
		col(aLine, lines.FromCol), col(to, lines.ToCol))
}

func (p *Proposal) denormalised() bool {
	return len(p.Path) == 1 && p.Path[0].ToCol == p.JobNumber
}

func (p *Proposal) lineItems(q *Queries) string {
	var cols []string
	add := func(expr, alias string) { cols = append(cols, expr+" AS "+alias) }
	// Lines that carry the job number itself need no job table.
	from, jobExpr := Ident(p.Lines.Name)+" "+aLine, col(aLine, p.JobNumber)
	switch {
	case p.denormalised():
		jobExpr = col(aLine, p.Path[0].FromCol)
	case !p.Flat:
		from, jobExpr = p.from("JOIN"), col(aJob, p.JobNumber)
	}
	add(jobExpr, "job")
	add(p.lineIDExpr(), "line_id")
	if p.LineNo != nil {
		add(col(aLine, p.LineNo), "line_no")
	} else {
		add(p.LineNoExpr, "line_no")
	}
	add(col(aLine, p.Code), "code")
	add(col(aLine, p.Description), "description")
	if p.PartNumber != nil {
		add(col(aLine, p.PartNumber), "part_number")
	}
	add(col(aLine, p.Quantity), "quantity")
	add(col(aLine, p.Price), "price")
	if p.Total != nil {
		add(col(aLine, p.Total), "total")
	} else {
		q.note("line_items", false, "no line total column: quotesync computes quantity × price, rounded half up to cents")
	}
	where := jobExpr + " IN (:jobs)"
	if live := p.live(); live != "" {
		where += " AND " + live
		if isText(p.SoftDelete) {
			q.note("line_items", true, "soft-deleted lines (%s of Y, 1 or T) are left out; values seen: %s", p.SoftDelete.Name, ValueList(p.SoftDeleteValues))
		} else {
			q.note("line_items", false, "soft-deleted lines (%s) are left out", p.SoftDelete.Name)
		}
	} else {
		q.note("line_items", true, "no soft-delete flag was found: every row of %s is a live line; add a condition if the shop marks removed lines", p.Lines.Name)
	}
	lineChoice, _ := p.Choice(RoleLineTable)
	for _, j := range p.Path {
		if j.ByName {
			q.note("line_items", lineChoice.Guess, "no foreign key declares %s: the join was matched by names", j)
		}
	}
	return fmt.Sprintf("SELECT %s\nFROM %s\nWHERE %s", strings.Join(cols, ",\n       "), from, where)
}

// statusExpr is the status column in the statements' aliases.
func (p *Proposal) statusExpr() string {
	alias := aJob
	switch {
	case p.Flat:
		alias = aLine
	case p.StatusTable == p.Mid && p.Mid != nil:
		alias = aMid
	}
	return col(alias, p.Status)
}

// markerOK: the lines' change time is kept by the server (ON UPDATE),
// so a marker from it moves with every edit and soft delete.
func (p *Proposal) markerOK() bool { return p.LineUpdated != nil && p.LineUpdated.OnUpdate }

// marker is estimate_state's marker column: the number of lines and the
// newest change time.
func (p *Proposal) marker() string {
	return fmt.Sprintf("CONCAT_WS('|', COUNT(%s), MAX(%s)) AS marker", p.lineIDExpr(), col(aLine, p.LineUpdated))
}

// lineIDExpr is the line id: its column, or the composite key's columns.
func (p *Proposal) lineIDExpr() string {
	if p.LineID != nil {
		return col(aLine, p.LineID)
	}
	return p.LineIDExpr
}

// hasClaim is the condition that the claim (claim, in the statement's
// aliases) is set.
func (p *Proposal) hasClaim(claim string) string {
	if isText(p.Claim) {
		return claim + " IS NOT NULL AND " + claim + " <> ''"
	}
	return claim + " IS NOT NULL"
}

// estimateState writes estimate_state. A flat table's groups the lines by
// job: final when every live line carries a final status (a line added
// after, still open, makes the estimate a Draft again; a job without live
// lines is not final).
func (p *Proposal) estimateState(q *Queries) string {
	a, agg, statusTable := aJob, "MAX", p.StatusTable
	if p.Flat {
		a, agg, statusTable = aLine, "MIN", p.Lines
	}
	jobNo := col(a, p.JobNumber)
	cols := []string{jobNo + " AS job"}
	switch {
	case p.Status != nil && len(p.Final) > 0:
		isFinal := fmt.Sprintf("CASE WHEN %s IN (%s) THEN 1 ELSE 0 END", p.statusExpr(), strings.Join(mapped(p.Final, Literal), ", "))
		if live := p.live(); p.Flat && live != "" {
			isFinal = fmt.Sprintf("CASE WHEN %s THEN %s END", live, isFinal)
		}
		cols = append(cols, agg+"("+isFinal+") AS final")
		if p.Flat {
			q.note("estimate_state", false, "final: every live line of the job has %s %s (a line added later with another status makes the estimate a Draft again)",
				p.Status.Name, strings.Join(p.Final, " or "))
		} else {
			q.note("estimate_state", false, "final: %s.%s is %s", p.StatusTable.Name, p.Status.Name, strings.Join(p.Final, " or "))
		}
	case p.Status != nil:
		q.note("estimate_state", true, "which value of %s.%s means final was not confirmed, so this returns no final column and quotesync submits nothing: "+
			"add %s(CASE WHEN %s IN ('VALUE') THEN 1 ELSE 0 END) AS final (values seen: %s)",
			statusTable.Name, p.Status.Name, agg, p.statusExpr(), ValueList(p.StatusValues))
	default:
		q.note("estimate_state", true, "no status column was found, so this returns no final column and quotesync submits nothing: add a final column (1 when the estimate is final)")
	}
	if p.Flat {
		return p.flatEstimateState(q, cols)
	}
	lineJoin := ""
	if p.markerOK() {
		cols = append(cols, p.marker())
		q.note("estimate_state", false, "marker: the number of lines and the newest %s.%s (kept current by the server), so an idle pass reads no lines", p.Lines.Name, p.LineUpdated.Name)
		lineJoin = "LEFT JOIN"
	} else {
		reason := "no change time column on the lines"
		if p.LineUpdated != nil {
			reason = p.LineUpdated.Name + " is not kept current by the server (no ON UPDATE CURRENT_TIMESTAMP), so an edit may not move it"
		}
		q.note("estimate_state", false, "no marker (%s): quotesync derives one from line_items' rows, computed by the database", reason)
	}
	from := Ident(p.Job.Name) + " " + aJob
	if lineJoin != "" || (p.Mid != nil && p.StatusTable == p.Mid) {
		from = p.from(lineJoin)
	}
	return fmt.Sprintf("SELECT %s\nFROM %s\nWHERE %s IN (:jobs)\nGROUP BY %s", strings.Join(cols, ",\n       "), from, jobNo, jobNo)
}

// shopChanged writes the one-row fingerprint of everything line_items
// and estimate_state read, when the server keeps change times on the
// line table (and on the status's table): the newest change time of each,
// and the count of what can be deleted outright.
func (p *Proposal) shopChanged(q *Queries) string {
	if !p.markerOK() {
		q.note("shop_changed", false, "shop_changed: not written: it needs a change time the server keeps current (ON UPDATE CURRENT_TIMESTAMP) on %s; without it every pass reads each tracked job's estimate state", p.Lines.Name)
		return ""
	}
	parts := []string{fmt.Sprintf("(SELECT MAX(%s) FROM %s) AS lines_changed", Ident(p.LineUpdated.Name), Ident(p.Lines.Name))}
	if p.SoftDelete == nil {
		parts = append(parts, fmt.Sprintf("(SELECT COUNT(*) FROM %s) AS line_count", Ident(p.Lines.Name)))
	}
	if p.Mid != nil {
		parts = append(parts, fmt.Sprintf("(SELECT COUNT(*) FROM %s) AS %s_count", Ident(p.Mid.Name), "mid"))
	}
	if p.Status != nil && p.StatusTable != p.Lines {
		upd := rankCols(p.StatusTable, updatedNames, func(c *Column) bool { return isTime(c) && c.OnUpdate }, nil)
		if len(upd) == 0 {
			q.note("shop_changed", false, "shop_changed: not written: %s, which holds the status, has no change time the server keeps current, so a change of status would go unseen", p.StatusTable.Name)
			return ""
		}
		parts = append(parts, fmt.Sprintf("(SELECT MAX(%s) FROM %s) AS status_changed", Ident(upd[0].col.Name), Ident(p.StatusTable.Name)))
	} else if len(p.Final) == 0 {
		q.note("shop_changed", true, "when you add a final column to estimate_state, add the newest change time of the status's table here too")
	}
	q.note("shop_changed", false, "shop_changed: an idle pass reads this one row and nothing else while it stays the same")
	return "SELECT " + strings.Join(parts, ",\n       ")
}

// ValueList writes values with their counts: "DRAFT ×12, FINAL ×3".
func ValueList(vs []ValueCount) string {
	if len(vs) == 0 {
		return "none"
	}
	var out []string
	for _, v := range vs {
		s := v.Value
		switch {
		case v.Null:
			s = "NULL"
		case strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) || s == "" || s == "NULL":
			s = strconv.Quote(s)
		}
		out = append(out, fmt.Sprintf("%s ×%d", s, v.Count))
	}
	return strings.Join(out, ", ")
}

// numberExpr writes the job number made from the counter's value v (an
// SQL expression): its prefix and zero padding, when it has them.
func (p *Proposal) numberExpr(v string) string {
	n := p.Numbering
	if isInteger(p.JobNumber) {
		return v
	}
	if n.Width > 0 {
		// LPAD cuts a longer value to the width: a number past the
		// padding would become an existing one.
		v = fmt.Sprintf("IF(CHAR_LENGTH(%[1]s) < %[2]d, LPAD(%[1]s, %[2]d, '0'), %[1]s)", v, n.Width)
	}
	if n.Prefix != "" {
		return fmt.Sprintf("CONCAT(%s, %s)", Literal(n.Prefix), v)
	}
	return v
}

// insertValues are the columns of a new row of t and their values, set's
// and the guessed defaults (noted).
func (p *Proposal) insertValues(q *Queries, t *Table, set [][2]string) ([]string, []string) {
	var cols, vals, guessed []string
	for _, cv := range set {
		cols, vals = append(cols, Ident(cv[0])), append(vals, cv[1])
	}
	for _, c := range t.Columns {
		if v, ok := p.Defaults[t][c.Name]; ok {
			cols, vals = append(cols, Ident(c.Name)), append(vals, v)
			guessed = append(guessed, fmt.Sprintf("%s.%s = %s", t.Name, c.Name, v))
		}
	}
	p.noteDefaults(q, guessed)
	return cols, vals
}

// insertSelect writes the INSERT … SELECT of a new row of t (see
// insertValues) from the rest of a SELECT, from (its FROM …).
func (p *Proposal) insertSelect(q *Queries, t *Table, set [][2]string, from string) string {
	cols, vals := p.insertValues(q, t, set)
	return fmt.Sprintf("INSERT INTO %s (%s)\nSELECT %s\n%s", Ident(t.Name), strings.Join(cols, ", "), strings.Join(vals, ", "), from)
}

// createJob writes the statements that make a job for a request, run in
// the transaction that records the reservation: the number, the job row
// (and the estimate row between, when lines hang off one), and last the
// new number.
func (p *Proposal) createJob(q *Queries) []string {
	n := p.Numbering
	jobNo := col(aJob, p.JobNumber)
	var set [][2]string
	if p.Claim != nil {
		set = append(set, [2]string{p.Claim.Name, ":claim_number"})
	}
	if p.Registration != nil {
		set = append(set, [2]string{p.Registration.Name, ":registration"})
	}
	var stmts []string
	// newJob is the FROM … WHERE that finds the job just made, in later
	// statements (alias j); where picks the counter's row.
	var newJob, number, where string
	if n.Method == "counter" && n.NameCol != nil {
		where = fmt.Sprintf(" WHERE %s.%s = %s", aCtr, Ident(n.NameCol.Name), Literal(n.NameValue))
	}
	switch n.Method {
	case "counter":
		ctr, val := Ident(n.Table.Name), Ident(n.ValueCol.Name)
		v := aCtr + "." + val
		if n.HoldsNext {
			v += " - 1"
		}
		number = p.numberExpr(v)
		stmts = append(stmts, fmt.Sprintf("UPDATE %s %s SET %s.%s = %s.%s + 1%s", ctr, aCtr, aCtr, val, aCtr, val, where))
		stmts = append(stmts, p.insertSelect(q, p.Job, append([][2]string{{p.JobNumber.Name, number}}, set...),
			fmt.Sprintf("FROM %s %s%s", ctr, aCtr, where)))
		newJob = fmt.Sprintf("FROM %s %s JOIN %s %s ON %s = %s%s", Ident(p.Job.Name), aJob, ctr, aCtr, jobNo, number, where)
		q.note("create_job", false, "the number: %s's row is bumped first (its row lock keeps two creations apart), then %s", n.Table.Name,
			map[bool]string{true: "its value before the bump is the new number", false: "its value is the new number"}[n.HoldsNext])
	case "auto_increment":
		cols, vals := p.insertValues(q, p.Job, set)
		if len(cols) == 0 {
			stmts = append(stmts, fmt.Sprintf("INSERT INTO %s () VALUES ()", Ident(p.Job.Name)))
		} else {
			stmts = append(stmts, fmt.Sprintf("INSERT INTO %s (%s)\nVALUES (%s)", Ident(p.Job.Name), strings.Join(cols, ", "), strings.Join(vals, ", ")))
		}
		newJob = fmt.Sprintf("FROM %s %s WHERE %s = LAST_INSERT_ID()", Ident(p.Job.Name), aJob, jobNo)
		q.note("create_job", false, "the number: %s.%s is AUTO_INCREMENT, so the server gives it", p.Job.Name, p.JobNumber.Name)
	default:
		var next string
		if isInteger(p.JobNumber) || n.Prefix == "" && n.Width == 0 {
			next = fmt.Sprintf("COALESCE(MAX(CAST(x.%s AS UNSIGNED)), 0) + 1", Ident(p.JobNumber.Name))
		} else {
			next = fmt.Sprintf("COALESCE(MAX(CAST(SUBSTRING(x.%s, %d) AS UNSIGNED)), 0) + 1", Ident(p.JobNumber.Name), utf8.RuneCountInString(n.Prefix)+1)
		}
		number = p.numberExpr(next)
		filter := ""
		if n.Prefix != "" && !isInteger(p.JobNumber) {
			filter = fmt.Sprintf(" WHERE LEFT(x.%s, %d) = %s", Ident(p.JobNumber.Name), utf8.RuneCountInString(n.Prefix), Literal(n.Prefix))
		}
		stmts = append(stmts, p.insertSelect(q, p.Job, append([][2]string{{p.JobNumber.Name, number}}, set...),
			fmt.Sprintf("FROM %s x%s", Ident(p.Job.Name), filter)))
		q.note("create_job", true, "the number is the largest plus one: the unique index on %s.%s turns a race with the shop's own application into a failed insert that quotesync tries again at the next pass; a counter table of the shop's is better if it has one", p.Job.Name, p.JobNumber.Name)
	}
	if newJob == "" {
		switch {
		case p.Claim != nil:
			order := jobNo
			if p.JobKey != nil {
				order = col(aJob, p.JobKey)
			}
			newJob = fmt.Sprintf("FROM %s %s WHERE %s = :claim_number ORDER BY %s DESC LIMIT 1", Ident(p.Job.Name), aJob, col(aJob, p.Claim), order)
		case p.JobKey != nil && p.JobKey.AutoIncrement:
			newJob = fmt.Sprintf("FROM %s %s WHERE %s = LAST_INSERT_ID()", Ident(p.Job.Name), aJob, col(aJob, p.JobKey))
		default:
			newJob = fmt.Sprintf("FROM %s %s ORDER BY %s DESC LIMIT 1", Ident(p.Job.Name), aJob, jobNo)
			q.note("create_job", true, "nothing identifies the new job but its number being the largest")
		}
	}
	if p.Mid != nil {
		toJob := p.Path[1]
		stmts = append(stmts, p.insertSelect(q, p.Mid, [][2]string{{toJob.FromCol.Name, col(aJob, toJob.ToCol)}}, newJob))
		q.note("create_job", true, "a new job gets its %s row, as the shop's application would make it: check the values", p.Mid.Name)
		if strings.Contains(newJob, "LAST_INSERT_ID()") && p.Mid.SinglePK() != nil && p.Mid.SinglePK().AutoIncrement {
			// LAST_INSERT_ID() now names the estimate: find the job by it.
			mk := p.Mid.SinglePK()
			newJob = fmt.Sprintf("FROM %s %s JOIN %s %s ON %s = %s WHERE %s = LAST_INSERT_ID()", Ident(p.Job.Name), aJob,
				Ident(p.Mid.Name), aMid, col(aMid, toJob.FromCol), col(aJob, toJob.ToCol), col(aMid, mk))
		}
	}
	p.noteNonTransactional(q)
	if number != "" && n.Method == "counter" {
		stmts = append(stmts, fmt.Sprintf("SELECT %s AS job FROM %s %s%s", number, Ident(n.Table.Name), aCtr, where))
	} else {
		stmts = append(stmts, fmt.Sprintf("SELECT %s AS job %s", jobNo, newJob))
	}
	return stmts
}

func (p *Proposal) noteDefaults(q *Queries, guessed []string) {
	if len(guessed) > 0 {
		q.note("create_job", true, "columns that need a value, guessed from the newest rows: %s", strings.Join(guessed, "; "))
	}
	if p.Status != nil && p.Defaults[p.StatusTable][p.Status.Name] != "" && len(p.Final) == 0 {
		q.note("create_job", true, "a new job's %s.%s is %s: make sure that is not a final status (init was told none)",
			p.StatusTable.Name, p.Status.Name, p.Defaults[p.StatusTable][p.Status.Name])
	}
}
