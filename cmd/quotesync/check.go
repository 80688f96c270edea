package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
)

const checkHelp = `Usage: quotesync check [--config FILE]

Checks everything the daemon needs and prints one line per check, then one
verdict. It writes nothing anywhere (no migration, no remote write, every
shop query run read-only or only prepared) and never prints a secret.

  config file     parses strictly (unknown keys and wrong types are named
                  with their line) and every key is valid
  secrets         the token source yields a token; the database password
                  is readable
  database        the shop database accepts the login
  state schema    quotesync's own tables are current, or are created (or
                  migrated) by the first start of run or once: that needs
                  CREATE, ALTER and INDEX privileges; tables migrated by a
                  newer quotesync fail (upgrade quotesync)
  shop.queries.*  each query prepares on the server; each query that reads
                  runs in a read-only transaction and returns the columns
                  quotesync reads
  remote          GET /requests answers with the token (a read-only call)
  work types      every operation code on the estimates quotesync would
                  push next (the jobs it tracks, and the shop's jobs for the
                  requests now pending) is under shop.work_types

"warn" lines point at shop data the daemon will hold back until the shop
fixes it (a line without a price, say); they do not fail the check.

Exit status: 0 every check passed, 1 a check failed, 2 bad flags, or the
file does not parse or is invalid.

Example:
  sudo CREDENTIALS_DIRECTORY=/etc/quotesync/credentials quotesync check --config /etc/quotesync/config.yaml

Flags:
`

// Check verdicts of one line.
const (
	checkOK   = "ok"
	checkFail = "FAIL"
	checkWarn = "warn"
	checkSkip = "skip"
)

// checkTimeout bounds each network step of check.
const checkTimeout = 30 * time.Second

// checkItem is one line of the checklist.
type checkItem struct {
	Status string
	Name   string
	Detail string
}

// checklist collects the lines of a check.
type checklist struct {
	items     []checkItem
	configBad bool // the file itself failed: exit status 2
}

func (c *checklist) add(status, name, format string, args ...any) {
	c.items = append(c.items, checkItem{Status: status, Name: name, Detail: fmt.Sprintf(format, args...)})
}

// failed returns the names of the failed checks.
func (c *checklist) failed() []string {
	var out []string
	for _, it := range c.items {
		if it.Status == checkFail {
			out = append(out, it.Name)
		}
	}
	return out
}

// code is the exit status the checklist calls for.
func (c *checklist) code() int {
	switch {
	case c.configBad:
		return exitUsage
	case len(c.failed()) > 0:
		return exitFailure
	}
	return exitOK
}

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	config := fs.String("config", defaultConfigPath, "configuration `file`")
	fs.Usage = func() { fmt.Fprint(stderr, checkHelp); fs.PrintDefaults() }
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	cl := &checklist{}
	fc, err := loadConfig(*config)
	if err != nil {
		cl.configBad = true
		cl.add(checkFail, "config file", "%v", err)
	} else {
		checkConfig(ctx, cl, fc, os.Getenv)
	}
	printChecklist(stdout, *config, cl)
	return cl.code()
}

// printChecklist writes one line per check (continuation lines indented)
// and the verdict.
func printChecklist(w io.Writer, path string, cl *checklist) {
	fmt.Fprintf(w, "quotesync check: %s\n", path)
	width := len("config file")
	for _, it := range cl.items {
		width = max(width, len(it.Name))
	}
	for _, it := range cl.items {
		lines := strings.Split(it.Detail, "\n")
		fmt.Fprintf(w, "%-4s  %-*s  %s\n", it.Status, width, it.Name, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(w, "%-4s  %-*s  %s\n", "", width, "", l)
		}
	}
	failed := cl.failed()
	if len(failed) == 0 {
		skipped := 0
		for _, it := range cl.items {
			if it.Status == checkSkip {
				skipped++
			}
		}
		if skipped > 0 {
			fmt.Fprintf(w, "verdict: OK: %d checks passed, %d not checked yet (see skip above)\n", len(cl.items)-skipped, skipped)
			return
		}
		fmt.Fprintf(w, "verdict: OK: all %d checks passed\n", len(cl.items))
		return
	}
	fmt.Fprintf(w, "verdict: FAIL: %d of %d checks failed: %s\n", len(failed), len(cl.items), strings.Join(failed, ", "))
}

// checkConfig runs every check after the file parsed.
func checkConfig(ctx context.Context, cl *checklist, fc *fileConfig, getenv func(string) string) {
	if _, err := fc.build(getenv, readNoSecrets); err != nil {
		cl.configBad = true
		cl.add(checkFail, "config file", "%v", err)
		return
	}
	cl.add(checkOK, "config file", "parsed strictly; every key is valid")

	set, err := fc.build(getenv, readAllSecrets)
	if err == nil {
		err = checkToken(ctx, set)
	}
	if err != nil {
		cl.add(checkFail, "secrets", "%v", err)
		for _, name := range []string{"database", "remote"} {
			cl.add(checkSkip, name, "not checked: the secrets did not resolve")
		}
		return
	}
	pw := "no database password (none configured)"
	if set.passwordFrom != "" {
		pw = "database password from " + set.passwordFrom
	}
	cl.add(checkOK, "secrets", "token from %s; %s", set.tokenFrom, pw)

	db := checkDatabase(ctx, cl, set)
	if db != nil {
		defer db.Close()
	}
	pending, remoteOK := checkRemote(ctx, cl, set)
	if db == nil {
		return
	}
	if !remoteOK {
		pending = nil
	}
	checkWorkTypes(ctx, cl, db, set.shop.WorkTypes, pending)
}

// checkToken asks the token source for a token (reading the file, the
// variable, or the OAuth2 token endpoint); the token is not kept.
func checkToken(ctx context.Context, set *settings) error {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	tok, err := set.tokens.Token(ctx)
	if err != nil {
		return fmt.Errorf("remote.token: no token from %s: %w", set.tokenFrom, err)
	}
	if strings.TrimSpace(tok) == "" {
		return fmt.Errorf("remote.token: %s yields an empty token; put the insurer's token there", set.tokenFrom)
	}
	return nil
}

// checkDatabase connects and checks the state schema and the queries; it
// returns the open database, or nil when the login failed.
func checkDatabase(ctx context.Context, cl *checklist, set *settings) *shopdb.DB {
	octx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	db, err := shopdb.Open(octx, set.shop)
	if err != nil {
		cl.add(checkFail, "database", "%s", explainDBError(err, set))
		cl.add(checkSkip, "state schema", "not checked: no database connection")
		cl.add(checkSkip, "shop.queries", "not checked: no database connection")
		cl.add(checkSkip, "work types", "not checked: no database connection")
		return nil
	}
	cl.add(checkOK, "database", "connected to %s", set.shop.String())

	cur, latest, err := db.SchemaVersion(octx)
	prefix := db.Config().TablePrefix
	switch {
	case err != nil:
		cl.add(checkFail, "state schema", "%v", err)
	case cur == 0:
		cl.add(checkOK, "state schema", "quotesync's tables (%s*) do not exist yet: the first start of run or once creates them (version %d); the database user needs CREATE, ALTER and INDEX on %s", prefix, latest, set.shop.Database)
	case cur < latest:
		cl.add(checkOK, "state schema", "version %d; the next start of run or once migrates it to %d", cur, latest)
	case cur > latest:
		cl.add(checkFail, "state schema", "version %d was written by a newer quotesync (this one knows %d): upgrade quotesync on this machine", cur, latest)
	default:
		cl.add(checkOK, "state schema", "version %d (current)", cur)
	}

	for _, q := range db.CheckQueries(ctx) {
		if q.Err != nil {
			detail := q.Err.Error()
			if mysqlErrno(q.Err) == errTableAccessDenied {
				detail += fmt.Sprintf("\nuser %s lacks that privilege: GRANT it on the shop's tables, e.g. GRANT SELECT, INSERT, UPDATE ON `%s`.* TO the quotesync user", set.shop.User, set.shop.Database)
			}
			cl.add(checkFail, q.Key, "%s", detail)
			continue
		}
		detail := q.Note
		if len(q.Columns) > 0 {
			detail += " (" + strings.Join(q.Columns, ", ") + ")"
		}
		cl.add(checkOK, q.Key, "%s", detail)
	}
	return db
}

// checkRemote lists the pending requests with the token, with few retries.
func checkRemote(ctx context.Context, cl *checklist, set *settings) ([]remote.Request, bool) {
	rc := set.remote
	if rc.MaxAttempts == 0 || rc.MaxAttempts > 2 {
		rc.MaxAttempts = 2
	}
	rc.BackoffInitial, rc.BackoffMax = 500*time.Millisecond, 2*time.Second
	client, err := remote.New(rc, set.tokens)
	if err != nil {
		cl.add(checkFail, "remote", "%v", err)
		return nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, 2*checkTimeout)
	defer cancel()
	reqs, err := client.ListRequests(ctx)
	var de *remote.DecodeError
	switch {
	case errors.As(err, &de):
		cl.add(checkOK, "remote", "GET /requests answered with the token: %s", plural(len(reqs), "pending request"))
		cl.add(checkWarn, "remote data", "%v; quotesync skips those requests until the service fixes them", de)
	case err != nil:
		cl.add(checkFail, "remote", "%s", explainRemoteError(err, set))
		return nil, false
	default:
		cl.add(checkOK, "remote", "GET %s%s/requests answered with the token: %s", strings.TrimRight(rc.BaseURL, "/"), remote.APIRoot, plural(len(reqs), "pending request"))
	}
	return reqs, true
}

// explainRemoteError says what a failed list call means and what to do.
func explainRemoteError(err error, set *settings) string {
	switch {
	case errors.Is(err, remote.ErrUnauthorized):
		return fmt.Sprintf("%v\nthe service refused the token from %s: put the insurer's current token there (with OAuth2, check client_id and the client secret)", err, set.tokenFrom)
	case errors.Is(err, remote.ErrNotFound):
		return fmt.Sprintf("%v\nno such endpoint: check remote.base_url (the API is under base_url + %s)", err, remote.APIRoot)
	case errors.Is(err, remote.ErrTemporary):
		return fmt.Sprintf("%v\nthe service did not answer usefully: check remote.base_url, DNS and the firewall, then run check again", err)
	}
	return err.Error()
}
