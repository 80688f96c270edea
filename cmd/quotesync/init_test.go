package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/quotesync/quotesync/shopdb/discover/testshops"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// TestInitRefusals: what init refuses before it connects, and what it
// says when it cannot read a shop.
func TestInitRefusals(t *testing.T) {
	bin := quotesyncBinary(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "q.yaml")
	run := func(env []string, args ...string) cliResult {
		return cliRun(t, append(os.Environ(), env...), bin, args...)
	}

	t.Run("PasswordInDSN", func(t *testing.T) {
		r := run(nil, "init", "--dsn", "shop:hunter2secret@tcp(127.0.0.1:3306)/shop", "--output", out)
		if r.Code != exitUsage || !strings.Contains(r.Stderr, "--password-file") || strings.Contains(r.Stderr, "hunter2secret") {
			t.Errorf("%s", r)
		}
	})
	t.Run("OutputExists", func(t *testing.T) {
		if err := os.WriteFile(out, []byte("keep me\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(nil, "init", "--dsn", "shop@tcp(127.0.0.1:3306)/shop", "--output", out)
		if r.Code != exitUsage || !strings.Contains(r.Stderr, "--force") {
			t.Errorf("%s", r)
		}
		if b, _ := os.ReadFile(out); string(b) != "keep me\n" {
			t.Errorf("init changed the existing file: %q", b)
		}
		os.Remove(out)
	})
	t.Run("UnreachableHost", func(t *testing.T) {
		r := run(nil, "init", "--dsn", "shop@tcp(127.0.0.1:1)/shop", "--output", out)
		if r.Code != exitFailure || !strings.Contains(r.Stderr, "127.0.0.1:1") || !strings.Contains(r.Stderr, "check the host and port") {
			t.Errorf("%s", r)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("init wrote a file")
		}
	})
	t.Run("EmptyDatabase", func(t *testing.T) {
		d := shopdbtest.NewDatabase(t)
		c := d.Config()
		r := run([]string{"QUOTESYNC_DB_PASSWORD=" + c.Password}, "init", "--dsn", initTestDSN(c.User, c.Addr, c.Database), "--output", out, "--yes")
		if r.Code != exitFailure || !strings.Contains(r.Stderr, "has no table that user") || !strings.Contains(r.Stderr, "GRANT SELECT") {
			t.Errorf("%s", r)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("init wrote a file")
		}
	})
	t.Run("NothingJobLike", func(t *testing.T) {
		d := shopdbtest.NewDatabase(t)
		for _, stmt := range []string{"CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(80))", "CREATE TABLE notes (id INT PRIMARY KEY, body TEXT)"} {
			if _, err := d.SQL.Exec(stmt); err != nil {
				t.Fatal(err)
			}
		}
		c := d.Config()
		r := run([]string{"QUOTESYNC_DB_PASSWORD=" + c.Password}, "init", "--dsn", initTestDSN(c.User, c.Addr, c.Database), "--output", out, "--yes")
		if r.Code != exitFailure || !strings.Contains(r.Stderr, "nothing job-like") || !strings.Contains(r.Stderr, "quotesync looks for a job table") {
			t.Errorf("%s", r)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("init wrote a file")
		}
	})
	t.Run("UserSeesOneTable", func(t *testing.T) {
		d := shopdbtest.NewSampleShop(t)
		user, pass := initLimitedUser(t, d, "GRANT SELECT ON `"+d.Name+"`.jobs TO %s")
		c := d.Config()
		r := run([]string{"QUOTESYNC_DB_PASSWORD=" + pass}, "init", "--dsn", initTestDSN(user, c.Addr, c.Database), "--output", out, "--yes")
		if r.Code != exitFailure || !strings.Contains(r.Stderr, "sees 1 tables") || !strings.Contains(r.Stderr, "grant it SELECT") {
			t.Errorf("%s", r)
		}
	})
	t.Run("UserSeesNothing", func(t *testing.T) {
		d := shopdbtest.NewSampleShop(t)
		user, pass := initLimitedUser(t, d, "")
		c := d.Config()
		r := run([]string{"QUOTESYNC_DB_PASSWORD=" + pass}, "init", "--dsn", initTestDSN(user, c.Addr, c.Database), "--output", out, "--yes")
		if r.Code != exitFailure || !strings.Contains(r.Stderr, d.Name) || !strings.Contains(r.Stderr, "GRANT SELECT ON") {
			t.Errorf("%s", r)
		}
	})
}

func initTestDSN(user, addr, db string) string {
	m := mysql.NewConfig()
	m.User, m.Net, m.Addr, m.DBName = user, "tcp", addr, db
	return m.FormatDSN()
}

// initLimitedUser creates a user with grant (a GRANT statement with %s
// for the user; "" for none), dropped at the end of the test.
func initLimitedUser(t *testing.T, d *shopdbtest.Database, grant string) (string, string) {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	user := "qsinit_" + hex.EncodeToString(b)
	pass := "pw-" + hex.EncodeToString(b) + "-x"
	ctx := context.Background()
	for _, host := range []string{"%", "localhost"} {
		who := "'" + user + "'@'" + host + "'"
		if _, err := d.SQL.ExecContext(ctx, "CREATE USER "+who+" IDENTIFIED BY '"+pass+"'"); err != nil {
			t.Fatalf("create a user with few rights (the test server's user needs CREATE USER): %v", err)
		}
		t.Cleanup(func() { _, _ = d.SQL.ExecContext(context.Background(), "DROP USER "+who) })
		if grant != "" {
			if _, err := d.SQL.ExecContext(ctx, strings.Replace(grant, "%s", who, 1)); err != nil {
				t.Fatal(err)
			}
		} else if _, err := d.SQL.ExecContext(ctx, "GRANT USAGE ON *.* TO "+who); err != nil {
			t.Fatal(err)
		}
	}
	return user, pass
}

// expectTerminal plays the person at init's terminal: it reads each
// prompt init writes and queues the answer answer gives for it.
type expectTerminal struct {
	out     bytes.Buffer
	pending []byte
	answer  func(prompt string) string
	asked   []string
}

func (e *expectTerminal) Write(p []byte) (int, error) {
	e.out.Write(p)
	s := string(p)
	if !strings.HasSuffix(s, "\n") { // a prompt: the line is left open for the answer
		e.asked = append(e.asked, s)
		e.pending = append(e.pending, e.answer(s)+"\n"...)
	}
	return len(p), nil
}

func (e *expectTerminal) Read(p []byte) (int, error) {
	if len(e.pending) == 0 {
		return 0, io.EOF
	}
	n := copy(p, e.pending)
	e.pending = e.pending[n:]
	return n, nil
}

// TestInitAsks: on a terminal init asks about its guesses (the best one
// the default), which status values mean final and each code's work
// type; the answers end up in the file.
func TestInitAsks(t *testing.T) {
	shop := testshops.Shops[0] // repairorder: a join by names, one-letter statuses
	d := shopdbtest.NewDatabase(t)
	if err := shop.Apply(context.Background(), d.SQL); err != nil {
		t.Fatal(err)
	}
	c := d.Config()
	out := filepath.Join(t.TempDir(), "q.yaml")
	getenv := func(k string) string {
		if k == initPasswordEnv {
			return c.Password
		}
		return ""
	}
	ptAsked := 0
	term := &expectTerminal{answer: func(prompt string) string {
		switch {
		case strings.HasPrefix(prompt, "PT "):
			ptAsked++
			if ptAsked == 1 {
				return "Paint" // not a work type: asked again
			}
			return "RefinishLabour"
		case strings.HasPrefix(prompt, "Final values"):
			return "F"
		case strings.HasPrefix(prompt, "PA "):
			return "Parts"
		case strings.HasPrefix(prompt, "RP "):
			return "RepairLabour"
		case strings.HasPrefix(prompt, "SU "):
			return "-"
		}
		return "" // every guess as proposed, RR's proposal too
	}}
	var stderr bytes.Buffer
	code := runInitWith(context.Background(), []string{"--dsn", initTestDSN(c.User, c.Addr, c.Database), "--output", out},
		term, true, getenv, term, &stderr)
	if code != exitOK {
		t.Fatalf("init: exit %d\n%s\n%s", code, term.out.String(), stderr.String())
	}
	text, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"j.ro_status IN ('F')", "PA: Parts", "PT: RefinishLabour", "RP: RepairLabour", "RR: RemoveReplaceLabour", "# CHECK: SU (1 line): not mapped"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("the file has no %q:\n%s", want, text)
		}
	}
	if strings.Contains(string(text), "proposed from the code's name") {
		t.Errorf("a code a person answered is still marked proposed:\n%s", text)
	}
	screen := term.out.String()
	for _, want := range []string{"line table? [ro_lines]", "Which values of ro_header.ro_status mean the estimate is final", "E ×1, F ×1, O ×1", "is not a documented work type"} {
		if !strings.Contains(screen, want) {
			t.Errorf("init did not ask or show %q:\n%s", want, screen)
		}
	}
}

// TestInitDSN: the DSN's own parameters reach the file (tls), a password
// in it is refused, and the one from the environment is used.
func TestInitDSN(t *testing.T) {
	env := func(k string) string {
		if k == initPasswordEnv {
			return "from-env"
		}
		return ""
	}
	cfg, err := initDSN(initOptions{dsn: "shop@tcp(db.lan:3306)/workshop?tls=preferred"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if got := (&initSession{cfg: cfg}).shopConfig(); got.TLS != "preferred" || cfg.Password != "from-env" || got.Addr != "db.lan:3306" {
		t.Errorf("tls %q, password %q, addr %q; want preferred, from-env, db.lan:3306", got.TLS, cfg.Password, got.Addr)
	}
	for dsn, want := range map[string]string{
		"shop:pw@tcp(db.lan:3306)/workshop": "holds a password",
		"shop@tcp(db.lan:3306)/":            "names no database",
		"@tcp(db.lan:3306)/workshop":        "names no user",
		"shop@tcp(db.lan:3306/workshop":     "--dsn:",
	} {
		if _, err := initDSN(initOptions{dsn: dsn}, env); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("initDSN(%q) = %v, want an error saying %q", dsn, err, want)
		}
	}
}
