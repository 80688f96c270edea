package store_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The store's methods are the only SQL that writes quotesync's tables:
// these tests read the statements of every non-test Go file of the module
// (string literals, the "+" concatenations and the fmt formats that build
// SQL) and fail on one that writes a quotesync_ table outside this
// package, or that writes anything outside a method of Store in it.
// Packages for tests only (their name ends in "test", as shopdbtest)
// build tables of other versions on purpose and are left out.

// writeVerb is a statement that writes a table, up to the table's name.
const writeVerb = `(?:insert\s+(?:ignore\s+)?into|replace(?:\s+into)?|update(?:\s+(?:ignore|low_priority))*|` +
	"delete\\s+(?:[\\w.`]+\\s+)*from|truncate(?:\\s+table)?|(?:alter|drop|create)\\s+table(?:\\s+if\\s+(?:not\\s+)?exists)?)"

var (
	// writesOurs: a statement written out that writes one of quotesync's
	// tables (by their default prefix, or the migrations' {{prefix}}); or
	// a multi-table UPDATE that names one before its SET.
	writesOurs = regexp.MustCompile("(?is)\\b" + writeVerb + "\\s+[`\"]?\\s*(?:quotesync_|\\{\\{prefix\\}\\})" +
		"|\\bupdate\\s[^;]*?\\bquotesync_\\w+[^;]*?\\bset\\b")
	// writeStart: a statement that writes, whatever its table, as the
	// store's statements begin (upper case: "update change markers" is an
	// error's words).
	writeStart = regexp.MustCompile(`^\s*(?:INSERT|UPDATE|DELETE|REPLACE|TRUNCATE|ALTER|CREATE|DROP)\b`)
	// tableNext: a text that starts with a table's name after its prefix.
	tableNext = regexp.MustCompile("^(?:requests|events|outbox|settings|schema)\\b")
	// writesNext: a text that ends where the table a statement writes is
	// named, by what comes next (a concatenation's next operand, a
	// format's argument).
	writesNext = regexp.MustCompile("(?is)\\b" + writeVerb + "\\s*[`\"]?\\s*$")
	// storeTables are the names of the store's table fields.
	storeTables = map[string]bool{"requests": true, "events": true, "outbox": true, "settings": true, "schema": true}
)

// writeFinding is a statement that writes quotesync's tables, and where.
type writeFinding struct {
	pos  token.Position
	what string
	fn   string // the function it is in: "Recv.Name", "Name", or "" at package level
}

// findWrites returns the statements of file that write a table: of
// quotesync's, by name or by an expression naming one (ours reports
// whether an expression does); every write when ours is nil.
func findWrites(fset *token.FileSet, file *ast.File, ours func(ast.Expr) bool) []writeFinding {
	consts := map[string]string{} // the file's string constants and variables
	ast.Inspect(file, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			for i, name := range vs.Names {
				if i < len(vs.Values) {
					if s, ok := stringLit(vs.Values[i]); ok {
						consts[name.Name] = s
					}
				}
			}
		}
		return true
	})
	named := func(e ast.Expr) bool {
		if ours == nil {
			return true
		}
		found := ours(e)
		ast.Inspect(e, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && strings.Contains(consts[id.Name], "quotesync_") {
				found = true
			}
			return !found
		})
		return found
	}
	var out []writeFinding
	var fn string
	seen := map[token.Pos]bool{}
	report := func(n ast.Node, what string) {
		if !seen[n.Pos()] {
			seen[n.Pos()] = true
			out = append(out, writeFinding{pos: fset.Position(n.Pos()), what: what, fn: fn})
		}
	}
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			fn = n.Name.Name
			if n.Recv != nil && len(n.Recv.List) > 0 {
				fn = recvName(n.Recv.List[0].Type) + "." + fn
			}
			if n.Body != nil {
				ast.Inspect(n.Body, visit)
			}
			fn = ""
			return false
		case *ast.BasicLit:
			if s, ok := stringLit(n); ok && (writesOurs.MatchString(s) || ours == nil && writeStart.MatchString(s)) {
				report(n, s)
			}
		case *ast.BinaryExpr:
			if n.Op != token.ADD {
				break
			}
			parts := flattenAdd(n)
			for i := 0; i+1 < len(parts); i++ {
				s, ok := stringLit(parts[i])
				if !ok || !writesNext.MatchString(s) {
					continue
				}
				var after string
				if i+2 < len(parts) {
					after, _ = stringLit(parts[i+2])
				}
				if named(parts[i+1]) || tableNext.MatchString(after) {
					report(parts[i], s+"…")
				}
			}
			for _, p := range parts { // each chain once, from its top
				ast.Inspect(p, visit)
			}
			return false
		case *ast.CallExpr:
			format, args := formatCall(n)
			for i, verb := range formatVerbs(format) {
				if !writesNext.MatchString(format[:verb]) {
					continue
				}
				if (i < len(args) && named(args[i])) || tableNext.MatchString(format[min(verb+2, len(format)):]) {
					report(n, format)
				}
			}
		}
		return true
	}
	ast.Inspect(file, visit)
	return out
}

// recvName is the name of a receiver's type.
func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return recvName(t.X)
	}
	return "?"
}

// stringLit is e's value when it is a string literal.
func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// flattenAdd is the operands of a chain of "+", in order.
func flattenAdd(e ast.Expr) []ast.Expr {
	if b, ok := e.(*ast.BinaryExpr); ok && b.Op == token.ADD {
		return append(flattenAdd(b.X), flattenAdd(b.Y)...)
	}
	if p, ok := e.(*ast.ParenExpr); ok {
		return flattenAdd(p.X)
	}
	return []ast.Expr{e}
}

// formatCall is the format and the arguments of a call to a fmt function
// that formats ("", nil for any other call).
func formatCall(c *ast.CallExpr) (string, []ast.Expr) {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", nil
	}
	first := 0
	switch sel.Sel.Name {
	case "Sprintf", "Errorf", "Printf":
	case "Fprintf", "Appendf":
		first = 1
	default:
		return "", nil
	}
	if len(c.Args) <= first {
		return "", nil
	}
	format, ok := stringLit(c.Args[first])
	if !ok {
		return "", nil
	}
	return format, c.Args[first+1:]
}

// formatVerbs returns where each verb of format starts, in order.
func formatVerbs(format string) []int {
	var out []int
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		if i+1 < len(format) && format[i+1] == '%' {
			i++
			continue
		}
		out = append(out, i)
	}
	return out
}

// namesOurTable reports whether e names one of quotesync's tables: by
// the default prefix in a literal, by the table prefix, or by a field
// named as the store names its tables.
func namesOurTable(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			if storeTables[n.Name] || strings.Contains(strings.ToLower(n.Name), "prefix") {
				found = true
			}
		case *ast.BasicLit:
			if s, ok := stringLit(n); ok && strings.Contains(s, "quotesync_") {
				found = true
			}
		}
		return !found
	})
	return found
}

// moduleRoot is the directory of the module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// sourceFiles parses every non-test Go file of the module, but those of
// the packages for tests only, and calls f with each and its directory
// relative to the module's root.
func sourceFiles(t *testing.T, f func(rel string, fset *token.FileSet, file *ast.File)) int {
	t.Helper()
	root := moduleRoot(t)
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		if strings.HasSuffix(file.Name.Name, "test") {
			return nil // a package for tests only
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		n++
		f(filepath.ToSlash(rel), fset, file)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestOnlyTheStoreWritesItsTables: no non-test Go file outside this
// package writes one of quotesync's tables, and in it every statement
// that writes is in a method of Store.
func TestOnlyTheStoreWritesItsTables(t *testing.T) {
	const here = "shopdb/store"
	var inStore int
	files := sourceFiles(t, func(rel string, fset *token.FileSet, file *ast.File) {
		if rel != here {
			for _, w := range findWrites(fset, file, namesOurTable) {
				t.Errorf("%s: %q writes quotesync's tables outside package store: call a method of store.Store (a request's state through the executor, sync/exec.go)", w.pos, w.what)
			}
			return
		}
		for _, w := range findWrites(fset, file, nil) {
			inStore++
			if !strings.HasPrefix(w.fn, "Store.") {
				t.Errorf("%s: %q writes outside a method of Store (in %q): the store's writes are Store's methods", w.pos, w.what, w.fn)
			}
		}
	})
	// What the test reads is what it should: the module, and in the store
	// the statements that write (insert, update, the outbox, the
	// settings, the markers, the migrations' records at least).
	if files < 100 || inStore < 15 {
		t.Fatalf("read %d files and %d writes in the store: the walk missed the module", files, inStore)
	}
}

// stateWriters are the store's writes of a request's state: the
// executor's alone.
var stateWriters = map[string]bool{"Insert": true, "Update": true, "Move": true, "UpdateMarkers": true, "RecordOnce": true}

// TestOnlyTheExecutorWritesState: the store's writes of a request's state
// are called in sync/exec.go only, the executor, which checks each change
// against the state machine and reports it to the observers: no other
// non-test file of the module calls a method of their names (no other
// method of the module has one).
func TestOnlyTheExecutorWritesState(t *testing.T) {
	const here, executor = "shopdb/store", "sync/exec.go"
	calls := 0
	sourceFiles(t, func(rel string, fset *token.FileSet, file *ast.File) {
		if rel == here {
			return
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !stateWriters[sel.Sel.Name] {
				return true
			}
			pos := fset.Position(call.Pos())
			if rel+"/"+filepath.Base(pos.Filename) != executor {
				t.Errorf("%s: calls %s, a write of a request's state, outside the executor (%s): make the change a decision the executor commits", pos, sel.Sel.Name, executor)
				return true
			}
			calls++
			return true
		})
	})
	if calls < len(stateWriters) {
		t.Fatalf("found %d calls of the state's writes in %s, want one of each at least: the walk missed it", calls, executor)
	}
}

// TestFindWrites: the reader of statements finds a write of quotesync's
// tables in each form code writes SQL in, and none in a read, in a write
// of the shop's tables, or in words.
func TestFindWrites(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want int
	}{
		{`const q = "UPDATE quotesync_requests SET phase = 'gone'"`, 1},
		{"const q = `insert into quotesync_events (kind) values ('x')`", 1},
		{`var q = "DELETE FROM ` + "`quotesync_outbox`" + ` WHERE id = 1"`, 1},
		{`var q = "REPLACE INTO quotesync_settings VALUES ('a', 'b', NOW())"`, 1},
		{`var q = "UPDATE jobs j JOIN quotesync_requests r ON r.job_number = j.job_no SET r.phase = 'gone'"`, 1},
		{`var q = "CREATE TABLE {{prefix}}extra (id INT)"`, 1},
		{`func f(t tables) string { return "UPDATE " + t.requests + " SET phase = ?" }`, 1},
		{`func f(prefix string) string { return "INSERT INTO " + prefix + "events (kind) VALUES (?)" }`, 1},
		{`const tbl = "quotesync_outbox"; func f() string { return "DELETE FROM " + tbl }`, 1},
		{`func f(p string) string { return fmt.Sprintf("UPDATE %srequests SET phase = ?", p + "") }`, 1},
		{`func f(p string) string { return "UPDATE " + p + "events SET kind = ?" }`, 1},
		{`func f(tablePrefix string) string { return fmt.Sprintf("UPDATE %srequests SET phase = ?", tablePrefix) }`, 1},
		{`const q = "SELECT phase FROM quotesync_requests WHERE request_id = ?"`, 0},
		{`const q = "UPDATE jobs SET insurer_status = :status WHERE job_no = :job"`, 0},
		{`func f(t string) string { return fmt.Sprintf("UPDATE %s SET next_val = next_val + 1", t) }`, 0},
		{`const msg = "update the mapping, then delete the copy in quotesync's table"`, 0},
	} {
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, "x.go", "package x\n"+tc.src, 0)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if got := findWrites(fset, file, namesOurTable); len(got) != tc.want {
			t.Errorf("%s: found %d writes, want %d: %v", tc.src, len(got), tc.want, fmt.Sprint(got))
		}
	}
}
