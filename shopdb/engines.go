package shopdb

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/jmoiron/sqlx"
)

// Tables that ignore transactions. MyISAM (common in older shop systems),
// Aria and MEMORY keep what a statement wrote even when the transaction
// around it rolls back. create_job and release_job run in the transaction
// that records quotesync's own step, and a write-back in the one that
// marks it made: on such a table, a crash (or a lost connection) between
// the statement and that commit keeps the statement's effect while
// quotesync's record of it is gone. check says so for each statement that
// writes one, with what it means.

// nonTransactional returns, of the tables named (as a statement writes
// them: "jobs", "shop.jobs"), those of the current database whose engine
// ignores transactions, with their engine: information_schema.TABLES and
// ENGINES, their columns aliased (MySQL 8 names them in capitals).
func (db *DB) nonTransactional(ctx context.Context, tables []string) (map[string]string, error) {
	var names []string
	for _, t := range tables {
		schema, name, ok := strings.Cut(t, ".")
		if !ok {
			name = schema
		} else if schema != db.cfg.Database {
			continue // another database's: not looked at
		}
		names = append(names, name)
	}
	out := map[string]string{}
	if len(names) == 0 {
		return out, nil
	}
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	q, args, err := sqlx.In(`SELECT t.TABLE_NAME AS name, t.ENGINE AS engine
FROM information_schema.TABLES t JOIN information_schema.ENGINES e ON e.ENGINE = t.ENGINE
WHERE t.TABLE_SCHEMA = DATABASE() AND t.TABLE_NAME IN (?) AND e.TRANSACTIONS <> 'YES'`, names)
	if err != nil {
		return nil, err
	}
	var rows []struct{ Name, Engine string }
	if err := db.x.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, fmt.Errorf("read the engines of %s: %w", strings.Join(names, ", "), err)
	}
	for _, r := range rows {
		out[r.Name] = r.Engine
	}
	return out, nil
}

// What keeping a statement's effect after a rollback means, by the
// statement's place in the mapping.
const (
	nonTxCreateJob = "a crash (or a lost connection) after this statement and before the reservation commits keeps what it wrote, " +
		"while quotesync's record of the request rolls back: a counter's bump stays (a job number is skipped, never given twice), " +
		"and a job row stays with no request holding it. The next pass looks for the request's job again: find_job finds that row " +
		"when create_job wrote the request's claim into it, and the request takes it (no second job, reported as found by find_job); " +
		"a job find_job does not find stays unused, for the shop to cancel"
	nonTxReleaseJob = "a crash after this statement and before quotesync records the release keeps its effect: " +
		"the next pass runs release_job again, so it must do no harm twice (an UPDATE that sets a status, not an INSERT)"
	nonTxWriteBack = "a crash after this statement and before quotesync marks it made keeps its effect: " +
		"it runs again, so it must do no harm twice (an UPDATE that sets a value, not an INSERT of a log row)"
)

// warnNonTransactional adds to each check of a statement that writes a
// table ignoring transactions a warning naming the tables and what it
// means (what, one of the nonTx texts).
func (db *DB) warnNonTransactional(ctx context.Context, c *QueryCheck, text, what string) {
	tables := writtenTables(text)
	if c.Err != nil || len(tables) == 0 {
		return
	}
	engines, err := db.nonTransactional(ctx, tables)
	if err != nil || len(engines) == 0 {
		return
	}
	var named []string
	for t, e := range engines {
		named = append(named, t+" ("+e+")")
	}
	slices.Sort(named)
	w := fmt.Sprintf("writes %s, which %s transactions: %s", strings.Join(named, ", "),
		map[bool]string{true: "ignores", false: "ignore"}[len(named) == 1], what)
	c.Warn = strings.TrimPrefix(c.Warn+"; "+w, "; ")
}

// writtenTables names the tables a statement writes, as written in it
// (backquotes removed): the table of INSERT and REPLACE, the tables of an
// UPDATE whose columns its SET assigns, the tables a DELETE deletes from.
// Other statements (SELECT, SET, DO, CALL) write none it can name.
func writtenTables(text string) []string {
	toks := sqlTokens(text)
	if len(toks) == 0 {
		return nil
	}
	skip := func(i int, words ...string) int {
		for i < len(toks) && toks[i].keyword(words...) {
			i++
		}
		return i
	}
	switch verb := strings.ToUpper(toks[0].text); verb {
	case "INSERT", "REPLACE":
		i := skip(1, "LOW_PRIORITY", "DELAYED", "HIGH_PRIORITY", "IGNORE", "INTO")
		if i < len(toks) && toks[i].ident {
			return []string{toks[i].name()}
		}
	case "UPDATE":
		refs, i := tableRefs(toks, skip(1, "LOW_PRIORITY", "IGNORE"), "SET")
		return assigned(toks, i+1, refs)
	case "DELETE":
		i := skip(1, "LOW_PRIORITY", "QUICK", "IGNORE")
		if i < len(toks) && toks[i].keyword("FROM") {
			// DELETE FROM t … (or DELETE FROM t1, t2 USING …)
			refs, _ := tableRefs(toks, i+1, "WHERE", "USING", "ORDER", "LIMIT", "RETURNING")
			return refs.tables()
		}
		// DELETE t1, t2 FROM t1 JOIN t2 …: the names before FROM,
		// aliases resolved through the references after it.
		var targets []string
		for ; i < len(toks) && !toks[i].keyword("FROM"); i++ {
			if toks[i].ident {
				targets = append(targets, strings.TrimSuffix(toks[i].name(), ".*"))
			}
		}
		refs, _ := tableRefs(toks, i+1, "WHERE", "ORDER", "LIMIT")
		var out []string
		for _, t := range targets {
			out = append(out, refs.resolve(t))
		}
		return dedupe(out)
	}
	return nil
}

// refs are the table references of a statement: alias (or name) → table.
type refs []struct{ alias, table string }

func (r refs) resolve(name string) string {
	for _, x := range r {
		if strings.EqualFold(x.alias, name) {
			return x.table
		}
	}
	return name
}

func (r refs) tables() []string {
	var out []string
	for _, x := range r {
		out = append(out, x.table)
	}
	return dedupe(out)
}

// tableRefs reads the table references from toks[i] up to one of the
// keywords end (outside parentheses): a name after the start, a comma or
// JOIN, with its alias. It returns them and the index of the end keyword.
func tableRefs(toks []sqlToken, i int, end ...string) (refs, int) {
	var out refs
	expect := true
	i = eachTop(toks, i, func(i int) (int, bool) {
		t := toks[i]
		switch {
		case t.keyword(end...):
			return i, false
		case t.text == "," || t.keyword("JOIN"):
			expect = true
		case expect && t.ident:
			table := t.name()
			alias := table
			if j := i + 1; j < len(toks) && toks[j].keyword("AS") {
				if j++; j < len(toks) && toks[j].ident {
					alias, i = toks[j].name(), j
				}
			} else if j < len(toks) && toks[j].ident && !toks[j].reserved() {
				alias, i = toks[j].name(), j
			}
			out = append(out, struct{ alias, table string }{alias, table})
			expect = false
		}
		return i, true
	})
	return out, i
}

// assigned names the tables whose columns an UPDATE's SET assigns, from
// toks[i]: "a.col =" is a's, a bare "col =" the first table's.
func assigned(toks []sqlToken, i int, r refs) []string {
	var out []string
	lhs := true
	eachTop(toks, i, func(i int) (int, bool) {
		t := toks[i]
		switch {
		case t.keyword("WHERE", "ORDER", "LIMIT"):
			return i, false
		case t.text == ",":
			lhs = true
		case lhs && t.ident:
			if alias, col, ok := strings.Cut(t.name(), "."); ok && !strings.Contains(col, ".") {
				out = append(out, r.resolve(alias))
			} else if len(r) > 0 {
				out = append(out, r[0].table)
			}
			lhs = false
		}
		return i, true
	})
	return dedupe(out)
}

// eachTop calls f with the index of each token from toks[i] on that is
// outside parentheses, until f says to stop; f returns the index it read
// up to. eachTop returns the index it stopped at.
func eachTop(toks []sqlToken, i int, f func(i int) (int, bool)) int {
	depth := 0
	for ; i < len(toks); i++ {
		switch toks[i].text {
		case "(":
			depth++
			continue
		case ")":
			depth--
			continue
		}
		if depth > 0 {
			continue
		}
		var more bool
		if i, more = f(i); !more {
			return i
		}
	}
	return i
}

func dedupe(s []string) []string {
	var out []string
	for _, x := range s {
		if x != "" && !slices.ContainsFunc(out, func(y string) bool { return strings.EqualFold(x, y) }) {
			out = append(out, x)
		}
	}
	return out
}

// sqlToken is one token of a statement: a word or name (ident, maybe
// qualified: "shop.jobs", backquotes kept in text), or one character of
// punctuation. Strings, numbers and comments are left out.
type sqlToken struct {
	text  string
	ident bool
}

// name is the token's name without backquotes.
func (t sqlToken) name() string {
	parts := strings.Split(t.text, ".")
	for i, p := range parts {
		if strings.HasPrefix(p, "`") && strings.HasSuffix(p, "`") && len(p) >= 2 {
			parts[i] = strings.ReplaceAll(p[1:len(p)-1], "``", "`")
		}
	}
	return strings.Join(parts, ".")
}

func (t sqlToken) keyword(words ...string) bool {
	if !t.ident || strings.HasPrefix(t.text, "`") {
		return false
	}
	return slices.ContainsFunc(words, func(w string) bool { return strings.EqualFold(t.text, w) })
}

// reserved: a word that ends a table reference rather than aliasing it.
func (t sqlToken) reserved() bool {
	return t.keyword("SET", "WHERE", "JOIN", "INNER", "LEFT", "RIGHT", "CROSS", "STRAIGHT_JOIN", "NATURAL", "ON", "USING",
		"ORDER", "LIMIT", "FROM", "VALUES", "VALUE", "SELECT", "PARTITION", "USE", "FORCE", "IGNORE", "OUTER", "RETURNING")
}

// sqlTokens splits a statement into tokens. A parser was weighed:
// vitess's sqlparser (which the demo's embedded server carries) refuses
// MariaDB's own syntax, such as "DELETE … RETURNING", with a bare
// INVALID_ARGUMENT, and would put a grammar into the daemon for what
// needs only the tables a statement writes, and must name them even in a
// statement no grammar here knows.
func sqlTokens(s string) []sqlToken {
	var out []sqlToken
	rs := []rune(s)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			i++
		case r == '#' || (r == '-' && i+2 < len(rs) && rs[i+1] == '-' && unicode.IsSpace(rs[i+2])):
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
		case r == '/' && i+1 < len(rs) && rs[i+1] == '*':
			i += 2
			for i+1 < len(rs) && !(rs[i] == '*' && rs[i+1] == '/') {
				i++
			}
			i += 2
		case r == '\'' || r == '"':
			i++
			for i < len(rs) && rs[i] != r {
				if rs[i] == '\\' {
					i++
				}
				i++
			}
			i++
		case r == '`' || wordRune(r) && !unicode.IsDigit(r):
			j := scanPart(rs, i)
			for j+1 < len(rs) && rs[j] == '.' && (rs[j+1] == '`' || rs[j+1] == '*' || wordRune(rs[j+1])) {
				if rs[j+1] == '*' {
					j += 2
					break
				}
				j = scanPart(rs, j+1)
			}
			out = append(out, sqlToken{text: string(rs[i:j]), ident: true})
			i = j
		case unicode.IsDigit(r):
			for i < len(rs) && (unicode.IsDigit(rs[i]) || rs[i] == '.' || unicode.IsLetter(rs[i])) {
				i++
			}
		default:
			out = append(out, sqlToken{text: string(r)})
			i++
		}
	}
	return out
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '$' }

// scanPart returns the end of the name that starts at rs[i]: a
// backquoted one (a doubled backquote inside stands for one) or a word.
func scanPart(rs []rune, i int) int {
	if rs[i] != '`' {
		for i < len(rs) && wordRune(rs[i]) {
			i++
		}
		return i
	}
	for i++; i < len(rs); i++ {
		if rs[i] == '`' {
			if i+1 < len(rs) && rs[i+1] == '`' {
				i++
				continue
			}
			return i + 1
		}
	}
	return i
}
