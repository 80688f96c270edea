package main

// Tests that keep README.md and docs/ honest where it is cheap: every
// relative link leads somewhere, the migration count the pages state is
// the number of migrations, and the per-command help lives in the man
// page rather than in a page that would drift from it.

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// repoRoot is the repository's top, seen from this package's directory.
const repoRoot = "../.."

// docPages lists the pages these tests read: README.md, ARCHITECTURE.md
// and every page under docs/, as paths relative to the repository.
func docPages(tb testing.TB) []string {
	tb.Helper()
	pages := []string{"README.md", "ARCHITECTURE.md"}
	more, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(more) < 8 {
		tb.Fatalf("docs/ holds %d pages; want the reference pages README.md links", len(more))
	}
	for _, p := range more {
		rel, err := filepath.Rel(repoRoot, p)
		if err != nil {
			tb.Fatal(err)
		}
		pages = append(pages, rel)
	}
	return pages
}

// MustReadPage reads a page given relative to the repository.
func MustReadPage(tb testing.TB, rel string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, rel))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

var (
	fence      = regexp.MustCompile("(?ms)^```.*?^```[ \t]*$")
	inlineCode = regexp.MustCompile("`[^`\n]*`")
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading    = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$`)
)

// prose is a page without its fenced code blocks, whose text is no link
// or heading of the page.
func prose(page string) string { return fence.ReplaceAllString(page, "") }

// anchors lists the anchors GitHub makes for a page's headings: lower
// case, every character but letters, digits, '-' and '_' dropped, spaces
// made '-'; a repeated heading gets -1, -2, ….
func anchors(page string) map[string]bool {
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(prose(page), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.Pc):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		for n := 0; ; n++ {
			s := slug
			if n > 0 {
				s += "-" + strconv.Itoa(n)
			}
			if !out[s] {
				out[s] = true
				break
			}
		}
	}
	return out
}

// TestDocsLinks: every relative link of README.md, ARCHITECTURE.md and
// docs/*.md points to a file of the repository and, when it names an
// anchor in a Markdown page, to a heading of that page.
func TestDocsLinks(t *testing.T) {
	n := 0
	for _, page := range docPages(t) {
		text := inlineCode.ReplaceAllString(prose(MustReadPage(t, page)), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			n++
			file, anchor, _ := strings.Cut(target, "#")
			rel := page
			if file != "" {
				rel = filepath.Join(filepath.Dir(page), file)
			}
			st, err := os.Stat(filepath.Join(repoRoot, rel))
			if err != nil {
				t.Errorf("%s links to %s: %s does not exist", page, target, rel)
				continue
			}
			if anchor == "" || st.IsDir() || !strings.HasSuffix(rel, ".md") {
				continue
			}
			if !anchors(MustReadPage(t, rel))[anchor] {
				t.Errorf("%s links to %s: %s has no heading whose anchor is #%s", page, target, rel, anchor)
			}
		}
	}
	if n < 50 {
		t.Errorf("found %d relative links in the pages; the link pattern is broken", n)
	}
}

// TestReadmeLinksEveryPage: README.md's "where to read more" leads to
// every page of docs/ and to ARCHITECTURE.md.
func TestReadmeLinksEveryPage(t *testing.T) {
	readme := MustReadPage(t, "README.md")
	for _, page := range docPages(t) {
		if page == "README.md" {
			continue
		}
		if !strings.Contains(readme, "]("+filepath.ToSlash(page)+")") {
			t.Errorf("README.md does not link %s", page)
		}
	}
}

// TestQuickStart: the README's quick start is two commands, and each
// names what exists: a `go -C DIR run .` a directory holding a main
// package of its own module (the demo's, which replaces this module with
// the tree it sits in), a `go run ./DIR` a package of this module (not of
// a nested one, where it fails), a `make TARGET` a target of the Makefile.
func TestQuickStart(t *testing.T) {
	readme := MustReadPage(t, "README.md")
	_, section, _ := strings.Cut(readme, "\n## Quick start\n")
	section, _, _ = strings.Cut(section, "\n## ")
	block := fence.FindString(section)
	var cmds []string
	for _, line := range strings.Split(block, "\n") {
		if cmd, _, _ := strings.Cut(line, "#"); !strings.HasPrefix(line, "```") && strings.TrimSpace(cmd) != "" {
			cmds = append(cmds, strings.Join(strings.Fields(cmd), " "))
		}
	}
	if len(cmds) != 2 {
		t.Fatalf("the quick start holds %d commands %q, want two", len(cmds), cmds)
	}
	makefile := MustReadPage(t, "Makefile")
	for _, cmd := range cmds {
		f := strings.Fields(cmd)
		switch {
		case len(f) == 5 && f[0] == "go" && f[1] == "-C" && f[3] == "run" && f[4] == ".":
			mod := MustReadPage(t, filepath.Join(f[2], "go.mod"))
			if !strings.Contains(mod, "replace github.com/quotesync/quotesync => ../..") {
				t.Errorf("%q: %s/go.mod does not build against this tree (replace … => ../..)", cmd, f[2])
			}
			if !strings.Contains(MustReadPage(t, filepath.Join(f[2], "main.go")), "package main") {
				t.Errorf("%q: %s holds no main package", cmd, f[2])
			}
		case len(f) == 3 && f[0] == "go" && f[1] == "run":
			if _, err := os.Stat(filepath.Join(repoRoot, f[2], "go.mod")); err == nil {
				t.Errorf("%q: %s is a module of its own; go run from the root cannot build it (go -C %s run .)", cmd, f[2], f[2])
			}
		case len(f) == 2 && f[0] == "make":
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(f[1]) + `:`).MatchString(makefile) {
				t.Errorf("%q: the Makefile has no target %s", cmd, f[1])
			}
		default:
			t.Errorf("%q: not a command this test knows; teach it", cmd)
		}
	}
}

// TestAnchors: the anchors the link test computes are GitHub's.
func TestAnchors(t *testing.T) {
	got := anchors("# Troubleshooting\n## Status change refused (404/405)\n## `history` on the command line\n## The shop's database server\n## Notes\n## Notes\n```\n# not a heading\n```\n")
	want := []string{"troubleshooting", "status-change-refused-404405", "history-on-the-command-line", "the-shops-database-server", "notes", "notes-1"}
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("anchors = %q, want %q", keys, want)
	}
}

// migrationFile names one of quotesync's schema migrations.
var migrationFile = regexp.MustCompile(`^\d{4}_[a-z0-9_]+\.sql$`)

// countMigrations finds the directory named migrations that holds
// quotesync's schema migrations, wherever the store lives, and counts them.
func countMigrations(tb testing.TB) (dir string, n int) {
	tb.Helper()
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || filepath.Base(filepath.Dir(path)) != "migrations" || !migrationFile.MatchString(d.Name()) {
			return nil
		}
		if dir != "" && dir != filepath.Dir(path) {
			tb.Fatalf("migrations in two directories, %s and %s", dir, filepath.Dir(path))
		}
		dir = filepath.Dir(path)
		n++
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if n == 0 {
		tb.Fatal("found no migrations (NNNN_name.sql in a directory named migrations)")
	}
	return dir, n
}

// statedMigrations matches what the pages say of the migration count:
// "17 migrations" and check's "creates them (version 17)".
var statedMigrations = regexp.MustCompile(`(\d+) migrations|creates them \(version (\d+)\)`)

// TestDocsMigrationCount: every migration count the pages state is the
// number of migration files.
func TestDocsMigrationCount(t *testing.T) {
	dir, n := countMigrations(t)
	stated := 0
	for _, page := range docPages(t) {
		for _, m := range statedMigrations.FindAllStringSubmatch(MustReadPage(t, page), -1) {
			stated++
			if got := m[1] + m[2]; got != strconv.Itoa(n) {
				t.Errorf("%s says %q; %s holds %d migrations", page, m[0], dir, n)
			}
		}
	}
	if stated < 2 {
		t.Errorf("the pages state the migration count %d times; want it in docs/operations.md and docs/mapping.md at least", stated)
	}
}

// TestManPageHoldsEveryHelp: the man page holds every command's whole
// help text, so the pages can send a reader to it (or to COMMAND --help)
// instead of repeating them; and no page repeats a help's usage lines.
func TestManPageHoldsEveryHelp(t *testing.T) {
	page := manPage(context.Background())
	var pages []string
	for _, p := range docPages(t) {
		pages = append(pages, MustReadPage(t, p))
	}
	for name, v := range verbs {
		var help bytes.Buffer
		if code := v.run(context.Background(), []string{"--help"}, &help, io.Discard); code != exitOK {
			t.Errorf("quotesync %s --help: exit %d", name, code)
		}
		if help.Len() < 100 {
			t.Errorf("quotesync %s --help printed %d bytes; want its help", name, help.Len())
			continue
		}
		if !strings.Contains(page, roffLiteral(help.String())) {
			t.Errorf("the man page lacks the whole help of quotesync %s", name)
		}
		usage, _, _ := strings.Cut(help.String(), "\n")
		for i, p := range pages {
			if strings.Contains(p, usage) {
				t.Errorf("%s repeats the help of quotesync %s (%q): link to 'quotesync %s --help' or the man page instead", docPages(t)[i], name, usage, name)
			}
		}
	}
}
