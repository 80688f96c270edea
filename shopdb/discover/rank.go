package discover

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// candidate is a table or column that could play a role, with its score
// and the evidence.
type candidate struct {
	table *Table
	col   *Column
	score float64
	why   []string
}

func (c candidate) qualified() string { return c.table.Name + "." + c.col.Name }

// mapped is f of each of xs, nil for none.
func mapped[T any](xs []T, f func(T) string) []string {
	var out []string
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

// rankCols scores every usable column of t that pass accepts by the
// role's names, adjusted by adjust (which may add evidence), best first;
// columns scoring 0 are left out.
func rankCols(t *Table, v vocab, accept func(*Column) bool, adjust func(*Column, *candidate)) []candidate {
	var out []candidate
	for _, c := range t.Columns {
		if !usableIdent(c.Name) || (accept != nil && !accept(c)) {
			continue
		}
		s, term := v.scoreWords(c.words())
		if s == 0 {
			continue
		}
		cand := candidate{table: t, col: c, score: s, why: []string{fmt.Sprintf("named like %q", term)}}
		if adjust != nil {
			adjust(c, &cand)
		}
		if cand.score > 0 {
			out = append(out, cand)
		}
	}
	sortCandidates(out)
	return out
}

// sortCandidates sorts column candidates best first, then by position.
func sortCandidates(cs []candidate) {
	slices.SortStableFunc(cs, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.col.Position, b.col.Position))
	})
}

// except leaves out the columns already given another role.
func except(cs []candidate, used ...*Column) []candidate {
	return slices.DeleteFunc(slices.Clone(cs), func(c candidate) bool { return c.col != nil && slices.Contains(used, c.col) })
}

// jobNumberCols ranks the columns of a table that could be its job
// number: named like one, text or whole number, unique.
func jobNumberCols(t *Table) []candidate {
	return rankCols(t, jobNumberNames, func(c *Column) bool { return isText(c) || isInteger(c) }, func(c *Column, cand *candidate) {
		if t.IsUnique(c.Name) {
			cand.score += 2
			cand.why = append(cand.why, "unique")
		} else {
			cand.score -= 2
			cand.why = append(cand.why, "not unique")
		}
		if isText(c) {
			cand.score += 0.5
			cand.why = append(cand.why, "text")
		}
		if c.AutoIncrement {
			cand.why = append(cand.why, "AUTO_INCREMENT")
		}
	})
}

func claimCols(t *Table) []candidate {
	return rankCols(t, claimNames, func(c *Column) bool { return isText(c) || isInteger(c) }, func(c *Column, cand *candidate) {
		if isText(c) {
			cand.score += 0.5
		}
		if t.Indexed[strings.ToLower(c.Name)] {
			cand.score += 0.5
			cand.why = append(cand.why, "indexed")
		}
	})
}

// jobTable is a ranked job table with its best columns.
type jobTable struct {
	candidate
	number, claim, registration []candidate
}

// rankJobTables scores every table as the job table: its name, a job
// number column, a claim column, a registration column, and the tables
// whose foreign keys point at it.
func rankJobTables(s *Schema) []jobTable {
	referenced := map[string]int{}
	for _, t := range s.Tables {
		for _, fk := range t.ForeignKeys {
			referenced[fk.RefTable]++
		}
	}
	var out []jobTable
	for _, t := range s.Tables {
		if !usableIdent(t.Name) {
			continue
		}
		jt := jobTable{candidate: candidate{table: t}, number: jobNumberCols(t), claim: claimCols(t), registration: rankCols(t, registrationNames, isText, nil)}
		if len(jt.number) == 0 {
			continue
		}
		name, term := jobTableNames.scoreWords(t.words())
		jt.score = name + 0.6*jt.number[0].score
		if name > 0 {
			jt.why = append(jt.why, fmt.Sprintf("named like %q", term))
		}
		jt.why = append(jt.why, "job number "+jt.number[0].col.Name)
		if len(jt.claim) > 0 {
			jt.score += 0.8 * jt.claim[0].score
			jt.why = append(jt.why, "claim column "+jt.claim[0].col.Name)
		}
		if len(jt.registration) > 0 {
			jt.score += 0.3 * jt.registration[0].score
			jt.why = append(jt.why, "registration column "+jt.registration[0].col.Name)
		}
		if n := referenced[t.Name]; n > 0 {
			jt.score += min(2, 0.5*float64(n))
			jt.why = append(jt.why, fmt.Sprintf("referenced by %d foreign key(s)", n))
		}
		if t.View {
			jt.score -= 2
			jt.why = append(jt.why, "a view")
		}
		// A job table needs more than a number: a name that says so,
		// or a claim column beside its number.
		if name == 0 && len(jt.claim) == 0 {
			continue
		}
		out = append(out, jt)
	}
	sortByScore(out, func(t jobTable) candidate { return t.candidate })
	return out
}

// Join is one step of the path from the line table to the job table:
// From.FromCol = To.ToCol.
type Join struct {
	From    *Table
	FromCol *Column
	To      *Table
	ToCol   *Column
	// ByName is true when no foreign key declares it: it was matched by
	// the columns' names and types.
	ByName bool
}

func (j Join) String() string {
	how := "foreign key"
	if j.ByName {
		how = "matching names"
	}
	return fmt.Sprintf("%s.%s = %s.%s (%s)", j.From.Name, j.FromCol.Name, j.To.Name, j.ToCol.Name, how)
}

// compatible reports whether two key columns can be joined.
func compatible(a, b *Column) bool {
	return (isInteger(a) && isInteger(b)) || (isText(a) && isText(b)) || a.DataType == b.DataType
}

// directJoins finds how from refers to to: declared foreign keys first,
// then columns named as a key of to (to's primary key or a unique
// column, by the same name or by to's name and the key's: ro_id →
// ro_header.id). Each comes with its score.
func directJoins(from, to *Table) []scoredJoin {
	var out []scoredJoin
	for _, fk := range from.ForeignKeys {
		if fk.RefTable != to.Name {
			continue
		}
		fc, tc := from.Column(fk.Column), to.Column(fk.RefColumn)
		if fc != nil && tc != nil {
			out = append(out, scoredJoin{Join{From: from, FromCol: fc, To: to, ToCol: tc}, 4})
		}
	}
	if len(out) > 0 {
		return out
	}
	var keys []*Column
	for _, u := range to.Unique {
		if len(u) == 1 {
			if c := to.Column(u[0]); c != nil {
				keys = append(keys, c)
			}
		}
	}
	toWords := to.words()
	for _, k := range keys {
		kw := k.words()
		for _, fc := range from.Columns {
			if !usableIdent(fc.Name) || !compatible(fc, k) || (from == to) {
				continue
			}
			fw := fc.words()
			if strings.EqualFold(fc.Name, k.Name) && !(len(kw) == 1 && kw[0] == "id") ||
				len(toWords) > 0 && (slices.Equal(fw, slices.Concat(toWords, kw)) || slices.Equal(fw, slices.Concat(toWords[:1], kw))) {
				out = append(out, scoredJoin{Join{From: from, FromCol: fc, To: to, ToCol: k, ByName: true}, 3})
			}
		}
	}
	return out
}

// scoredJoin is a Join with how sure directJoins is of it.
type scoredJoin struct {
	Join
	score float64
}

// path is a way from the line table to the job table, one or two joins.
type path struct {
	joins []Join
	score float64
}

func (p path) String() string {
	return strings.Join(mapped(p.joins, Join.String), ", then ")
}

// findPath finds the best path from lines to jobs: directly, or through
// one table between (an estimates table, say). Foreign keys count more
// than names, and one join more than two.
func findPath(s *Schema, lines, jobs *Table) (path, bool) {
	var best path
	found := false
	consider := func(p path) {
		if !found || p.score > best.score {
			best, found = p, true
		}
	}
	for _, j := range directJoins(lines, jobs) {
		consider(path{joins: []Join{j.Join}, score: j.score})
	}
	for _, mid := range s.Tables {
		if mid == lines || mid == jobs || !usableIdent(mid.Name) {
			continue
		}
		first := directJoins(lines, mid)
		if len(first) == 0 {
			continue
		}
		second := directJoins(mid, jobs)
		if len(second) == 0 {
			continue
		}
		midName, _ := midTableNames.scoreWords(mid.words())
		consider(path{joins: []Join{first[0].Join, second[0].Join},
			score: min(first[0].score, second[0].score) - 0.5 + 0.2*midName})
	}
	return best, found
}

// lineTable is a ranked line table, its path to the job table and its
// amount columns.
type lineTable struct {
	candidate
	path            path
	quantity, price []candidate
}

func numericCols(t *Table, v vocab) []candidate {
	return rankCols(t, v, isNumeric, func(c *Column, cand *candidate) {
		if c.DataType == "decimal" || c.DataType == "numeric" {
			cand.score += 0.5
			cand.why = append(cand.why, c.ColumnType)
		}
	})
}

// amounts is t as a line table of no job table yet: its quantity and
// price columns, which must be two columns, and their evidence.
func amounts(t *Table) (lineTable, bool) {
	if !t.numericSet {
		t.qty, t.price, t.numericSet = numericCols(t, quantityNames), numericCols(t, priceNames), true
	}
	qty, price := t.qty, t.price
	if len(qty) == 0 || len(price) == 0 || (len(qty) == 1 && len(price) == 1 && qty[0].col == price[0].col) {
		return lineTable{}, false
	}
	why := []string{"quantity " + qty[0].col.Name, "price " + price[0].col.Name}
	return lineTable{candidate: candidate{table: t, why: why}, quantity: qty, price: price}, true
}

// rankLineTables scores every table as the line table of jobs: it needs
// a quantity and a price column and a path to jobs.
func rankLineTables(s *Schema, jobs *Table) []lineTable {
	var out []lineTable
	for _, t := range s.Tables {
		if t == jobs || !usableIdent(t.Name) {
			continue
		}
		lt, ok := amounts(t)
		if !ok {
			continue
		}
		if lt.path, ok = findPath(s, t, jobs); !ok {
			continue
		}
		name, term := lineTableNames.scoreWords(t.words())
		lt.score = name + 0.5*lt.quantity[0].score + 0.5*lt.price[0].score + lt.path.score
		if name > 0 {
			lt.why = append([]string{fmt.Sprintf("named like %q", term)}, lt.why...)
		}
		lt.why = append(lt.why, "reaches "+jobs.Name+" by "+lt.path.String())
		if len(descriptionCols(t)) > 0 {
			lt.score++
		}
		if t.View {
			lt.score -= 2
		}
		out = append(out, lt)
	}
	sortByScore(out, func(t lineTable) candidate { return t.candidate })
	return out
}

// sortByScore sorts ranked tables best first, then by name.
func sortByScore[T any](ts []T, c func(T) candidate) {
	slices.SortStableFunc(ts, func(x, y T) int {
		a, b := c(x), c(y)
		return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(a.table.Name, b.table.Name))
	})
}

func descriptionCols(t *Table) []candidate {
	return rankCols(t, descriptionNames, isText, func(c *Column, cand *candidate) {
		if c.MaxLen >= 60 || c.DataType == "text" {
			cand.score += 0.5
		}
	})
}
