package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/termtext"
	"github.com/quotesync/quotesync/remote/redact"
	qsync "github.com/quotesync/quotesync/sync"
)

const checkHelp = `Usage: quotesync check [--config FILE]

Checks everything the daemon needs and prints one line per check, then one
verdict. It writes nothing anywhere (no migration, no remote write, every
shop query run read-only or only prepared) and never prints a secret.

  config file     parses strictly (unknown keys and wrong types are named
                  with their line) and every key is valid
  other sites     no other configuration of this host (the *.yaml files
                  beside this one, in sites/ below it, or above it for a
                  site's file) uses the same state tables or lock on the
                  same database server; the installed example is left out
  sync.schedule   the next passes it starts; one that never fires or runs
                  more often than every second is refused
  secrets         the token source yields a token; the database password
                  is readable
  database        the shop database accepts the login
  state schema    quotesync's own tables are current, or are created (or
                  migrated) by the first start of run or once: that needs
                  CREATE, ALTER and INDEX privileges; tables migrated by a
                  newer quotesync fail (upgrade quotesync); tables an
                  older quotesync left warn (status and history refuse
                  them, check leaves their requests out, until that
                  start migrates them)
  shop.queries.*  each query prepares on the server; each query that reads
                  runs in a read-only transaction and returns the columns
                  quotesync reads
  remote          GET /requests answers with the token (a read-only call)
  work types      every operation code on the estimates quotesync would
                  push next (the jobs it tracks, and the shop's jobs for the
                  requests now pending) is under shop.work_types
  real rows       with shop.queries.sample_jobs: find_job finds each of
                  the shop's newest jobs again by its own claim, their
                  lines read as a pass reads them, estimate_state's
                  markers steady; with several insurers find_job and
                  line_items for each (:insurer its name, its work
                  types), on lines that name it
  item types      (warn) a work type mapped to an item type the service's
                  documentation does not list
  cluster         the server is not a Galera or Group Replication node,
                  or shop.single_writer says every instance reaches one
                  writer (else a warning: the lock is local to one node)
  listener        with metrics.listen set: who the listener lets in and
                  why (a login of metrics.users_file, or none), the users
                  file and the TLS certificate read; a warning for a
                  listener open beyond loopback, a users file without
                  users or readable by others, /metrics behind a login
                  without TLS, or an expired certificate. A non-loopback
                  listener without users_file or auth: none fails the
                  config file line: the daemon refuses to start with it

"warn" lines point at shop data the daemon will hold back until the shop
fixes it (a line without a price, say), at a clustered server, or at
state tables the next start migrates; they do not fail the check.

Exit status: 0 every check passed, 1 a check failed, 2 bad flags, or the
file does not parse or is invalid.

Example:
  sudo CREDENTIALS_DIRECTORY=/etc/quotesync/credentials quotesync check --config /etc/quotesync/config.yaml

Flags:
`

// checkTimeout bounds the token check.
const checkTimeout = 30 * time.Second

// checklist collects the lines of a check.
type checklist struct {
	items     []qsync.CheckItem
	configBad bool // the file itself failed: exit status 2
}

func (c *checklist) add(status, name, format string, args ...any) {
	c.items = append(c.items, qsync.CheckItem{Status: status, Name: name, Detail: fmt.Sprintf(format, args...)})
}

// named returns the names of the checks of status.
func (c *checklist) named(status string) []string {
	var out []string
	for _, it := range c.items {
		if it.Status == status {
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
	case len(c.named(qsync.CheckFail)) > 0:
		return exitFailure
	}
	return exitOK
}

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := verbFlags("check", checkHelp)
	cfg := registerConfig(fs)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	path := cfg.path()
	cl := &checklist{}
	// Every secret the checks read joins secrets, and the checklist is
	// printed with them redacted: its details quote the service's and
	// the receivers' answers.
	secrets := redact.New()
	fc, err := config.Load(path)
	if err != nil {
		cl.configBad = true
		cl.add(qsync.CheckFail, "config file", "%v", err)
	} else {
		checkConfig(ctx, cl, path, fc, os.Getenv, secrets)
	}
	out, flush := redacting(stdout, secrets)
	printChecklist(out, path, cl)
	flush()
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
		lines := strings.Split(termtext.Lines(it.Detail), "\n") // the details quote the shop and the service
		fmt.Fprintf(w, "%-4s  %-*s  %s\n", it.Status, width, it.Name, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(w, "%-4s  %-*s  %s\n", "", width, "", l)
		}
	}
	failed := cl.named(qsync.CheckFail)
	if len(failed) == 0 {
		if skipped := len(cl.named(qsync.CheckSkip)); skipped > 0 {
			fmt.Fprintf(w, "verdict: OK: %s passed, %d not checked yet (see skip above)\n", qsync.Plural(len(cl.items)-skipped, "check"), skipped)
			return
		}
		fmt.Fprintf(w, "verdict: OK: all %d checks passed\n", len(cl.items))
		return
	}
	fmt.Fprintf(w, "verdict: FAIL: %d of %d checks failed: %s\n", len(failed), len(cl.items), strings.Join(failed, ", "))
}

// checkConfig runs every check after the file parsed: the file's own
// validity and its secrets here, the rest in the engine (qsync.Check).
func checkConfig(ctx context.Context, cl *checklist, path string, fc *config.File, getenv func(string) string, secrets *redact.Secrets) {
	plain, err := fc.Build(config.BuildOptions{Getenv: getenv, Scope: config.NoSecrets, UserAgent: userAgent(), Secrets: secrets})
	if err != nil {
		cl.configBad = true
		cl.add(qsync.CheckFail, "config file", "%v", err)
		return
	}
	cl.add(qsync.CheckOK, "config file", "parsed strictly; every key is valid")
	checkSites(cl, path, plain.Daemon.Shop, getenv)
	checkListener(cl, plain, time.Now())
	checkItemTypes(cl, fc)
	cl.items = append(cl.items, qsync.ScheduleItem(plain.Daemon.Sync, time.Now()))
	checkWebhookURL(cl, fc, plain)

	set, err := fc.Build(config.BuildOptions{Getenv: getenv, Scope: config.AllSecrets, UserAgent: userAgent(), Secrets: secrets})
	if err == nil {
		err = checkToken(ctx, set)
	}
	if err != nil {
		cl.add(qsync.CheckFail, "secrets", "%v", err)
		for _, name := range []string{"database", "remote"} {
			cl.add(qsync.CheckSkip, name, "not checked: the secrets did not resolve")
		}
		return
	}
	pw := "no database password (none configured)"
	if set.PasswordFrom != "" {
		pw = "database password from " + set.PasswordFrom
	}
	hook := ""
	if set.WebhookURLFrom != "" && set.WebhookURLFrom != config.WebhookURLInYAML {
		hook = "; webhook URL from " + set.WebhookURLFrom
	}
	cl.add(qsync.CheckOK, "secrets", "%s; %s%s", tokensFrom(set.Daemon.Insurers), pw, hook)
	cl.items = append(cl.items, qsync.Check(ctx, set.Daemon)...)
	checkClusterLine(ctx, cl, set)
}

// checkWebhookURL says that a webhook URL written in the YAML holds a
// secret (its path or query: Slack, Teams and Discord put the key there),
// where it should come from instead; never the path or the query.
func checkWebhookURL(cl *checklist, fc *config.File, plain *config.Settings) {
	if plain.WebhookURLFrom != config.WebhookURLInYAML || len(redact.URL(fc.Notify.Webhook.URL)) == 0 {
		return
	}
	cl.add(qsync.CheckWarn, "notify.webhook.url", "%s is written in the YAML, which should hold no secret: its path and query are one (Slack, Teams and Discord put the key there); "+
		"move the URL to a file named by notify.webhook.url_file (e.g. ${CREDENTIALS_DIRECTORY}/webhook-url, systemd LoadCredential=) or a variable named by url_env",
		qsync.WebhookOrigin(fc.Notify.Webhook.URL))
}

// tokensFrom says where each insurer's token comes from: "token from
// …", or with several insurers "tokens: aa from …, bb from …".
func tokensFrom(ins []qsync.Insurer) string {
	from := func(in qsync.Insurer) string { return in.TokenFrom }
	if len(ins) == 1 {
		return "token from " + from(ins[0])
	}
	return "tokens: " + perInsurer(ins, " from ", ", ", from)
}

// checkToken asks every insurer's token source for a token (reading the
// file, the variable, or the OAuth2 token endpoint); no token is kept.
func checkToken(ctx context.Context, set *config.Settings) error {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	var errs []error
	for _, ins := range set.Daemon.Insurers {
		key := ins.KeyOf("token")
		tok, err := ins.Tokens.Token(ctx)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: no token from %s: %w", key, ins.TokenFrom, err))
		case strings.TrimSpace(tok) == "":
			errs = append(errs, fmt.Errorf("%s: %s yields an empty token; put the insurer's token there", key, ins.TokenFrom))
		}
	}
	return errors.Join(errs...)
}

// checkItemTypes warns about each item type shop.work_types (or an
// insurer's own work_types under remotes:) maps a code to that the
// service's documentation does not list (qsync.DocumentedWorkTypes); it
// adds nothing when all are listed. A type outside them may still be
// taken (the specification shows others, such as RemoveReplace), but a
// service that follows the documentation refuses it with 400.
func checkItemTypes(cl *checklist, fc *config.File) {
	type mapping struct {
		key string
		m   map[string]string
	}
	mappings := []mapping{{"shop.work_types", fc.Shop.WorkTypes}}
	for _, e := range fc.Remotes {
		mappings = append(mappings, mapping{"remotes[" + e.Name + "].work_types", e.WorkTypes})
	}
	for _, wt := range mappings {
		var odd []string
		for _, code := range slices.Sorted(maps.Keys(wt.m)) {
			if typ := wt.m[code]; !slices.Contains(qsync.DocumentedWorkTypes, typ) {
				odd = append(odd, fmt.Sprintf("%s → %s", code, typ))
			}
		}
		if len(odd) == 0 {
			continue
		}
		cl.add(qsync.CheckWarn, "item types", "%s maps to item types the service's documentation does not list: %s; "+
			"a service that follows it refuses them (400): use one of %s, unless the insurer confirmed the type",
			wt.key, strings.Join(odd, ", "), strings.Join(qsync.DocumentedWorkTypes, ", "))
	}
}
