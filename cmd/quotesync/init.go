package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/google/renameio/v2"
	"golang.org/x/term"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/termtext"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/discover"
)

var initHelp = `Usage: quotesync init --dsn DSN [--output FILE] [--yes] [--force]
                      [--password-file FILE] [--final VALUES]
                      [--work-type CODE=TYPE ...] [--choose ROLE=NAME ...]

Reads a shop database quotesync has never seen and writes a complete
configuration whose mapping fits it. It reads the schema from
information_schema (tables, columns, keys, foreign keys, indexes, row
estimates) and a few rows of the tables it chooses, in a READ ONLY
transaction with a time limit on each statement: it never writes to the
shop's database.

For every part of the mapping (the job table and its number, the claim
and registration columns, the line table and its path to the job, the
amounts, the soft-delete flag, change times, how new job numbers are
made, the status) it ranks the candidates, writes the queries from the
winners, and says in the file what it chose, the runner-up and why; a
line starting "# CHECK:" marks a guess.

On a terminal it asks about each uncertain choice (the best guess is the
default: press Enter), which status values mean the estimate is final,
and which work type each operation code is. With --yes, or without a
terminal, it asks nothing and takes the best guesses; it may propose work
types for codes it recognises (R&R, RR, PNT and others), marked CHECK, but it never
guesses which status means final: until --final (or an edit of the file)
says so, the configuration pushes Drafts and submits nothing.

  --dsn DSN           the database, in go-sql-driver form:
                      user@tcp(host:3306)/shopdb (no password in it)
  --password-file F   the database password, from a file; or set
                      QUOTESYNC_DB_PASSWORD. Never on the command line.
  --output FILE       where to write (default ./quotesync.yaml); an
                      existing file is refused unless --force
  --yes               ask nothing: take the best guesses
  --final VALUES      the status values that mean final, comma-separated
                      (e.g. FINAL, or F): confirms what init never guesses
  --work-type C=T     maps operation code C to work type T (repeat it)
  --choose ROLE=NAME  fixes one choice: e.g. job_table=ro_header,
                      claim=ins_claim_no, status=estimates.status,
                      numbering=counter (roles: ` + initRoles + `; "-" for none)

Exit status: 0 the file was written; 1 nothing job-like was found, the
database could not be read, or a written query did not prepare (the file
is written, with the error beside the query); 2 bad flags, or the output
file exists.

Example:
  QUOTESYNC_DB_PASSWORD=... quotesync init --dsn 'quotesync@tcp(127.0.0.1:3306)/workshop' --output /etc/quotesync/config.yaml

Flags:
`

// initRoles lists the roles --choose takes.
var initRoles = strings.Join([]string{discover.RoleJobTable, discover.RoleJobNumber, discover.RoleClaim,
	discover.RoleRegistration, discover.RoleBookingDate, discover.RoleLineTable, discover.RoleLineID,
	discover.RoleLineNo, discover.RoleCode, discover.RoleDescription, discover.RoleQuantity, discover.RolePrice,
	discover.RoleTotal, discover.RolePartNumber, discover.RoleSoftDelete, discover.RoleLineUpdated,
	discover.RoleStatus, discover.RoleNumbering}, ", ")

// initPasswordEnv is the variable init reads the database password from.
const initPasswordEnv = "QUOTESYNC_DB_PASSWORD"

// initTimeout bounds reading the schema and the samples.
const initTimeout = 2 * time.Minute

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// initOptions are init's flags, parsed.
type initOptions struct {
	dsn, output, passwordFile string
	yes, force                bool
	final                     []string
	workTypes                 map[string]string
	choose                    map[string]string
}

func runInit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	interactive := term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stdout.Fd()))
	return runInitWith(ctx, args, os.Stdin, interactive, os.Getenv, stdout, stderr)
}

// runInitWith is init with its terminal and environment given: in is
// where answers come from when interactive (and --yes is not set).
func runInitWith(ctx context.Context, args []string, in io.Reader, interactive bool, getenv func(string) string, stdout, stderr io.Writer) int {
	o, code, ok := parseInitFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	if _, err := os.Stat(o.output); err == nil && !o.force {
		return failf(stderr, exitUsage, "quotesync init: %s exists; pass --force to replace it, or --output another file", o.output)
	}
	cfg, err := initDSN(o, getenv)
	if err != nil {
		return failf(stderr, exitUsage, "quotesync init: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, initTimeout)
	defer cancel()
	db, err := shopdb.Connect(ctx, cfg)
	if err != nil {
		return failf(stderr, exitFailure, "quotesync init: %v", err)
	}
	defer db.Close()
	s := &initSession{o: o, cfg: cfg, db: db, stdout: stdout}
	if interactive && !o.yes {
		s.ask = newAsker(in, stdout)
	}
	if err := s.discover(ctx); err != nil {
		return failf(stderr, exitFailure, "quotesync init: %s", termtext.Lines(err.Error()))
	}
	return s.write(ctx, stderr)
}

func parseInitFlags(args []string, stdout, stderr io.Writer) (initOptions, int, bool) {
	o := initOptions{workTypes: map[string]string{}, choose: map[string]string{}}
	fs := verbFlags("init", initHelp)
	fs.StringVar(&o.dsn, "dsn", "", "the shop `database`: user@tcp(host:3306)/shopdb")
	fs.StringVar(&o.output, "output", "quotesync.yaml", "the configuration `file` to write")
	fs.StringVar(&o.passwordFile, "password-file", "", "read the database password from `file` (else $"+initPasswordEnv+")")
	fs.BoolVar(&o.yes, "yes", false, "ask nothing; take the best guesses")
	fs.BoolVar(&o.force, "force", false, "replace an existing output file")
	final := fs.String("final", "", "the status `values` that mean final, comma-separated")
	var workTypes, choose listFlag
	fs.Var(&workTypes, "work-type", "map an operation code to a work type: `CODE=TYPE` (repeatable)")
	fs.Var(&choose, "choose", "fix one choice: `ROLE=NAME` (repeatable)")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return o, code, false
	}
	bad := func(format string, a ...any) (initOptions, int, bool) {
		fmt.Fprintf(stderr, "quotesync init: "+format+"\n", a...)
		return o, exitUsage, false
	}
	if o.dsn == "" {
		return bad("--dsn is required: the shop database, e.g. --dsn 'quotesync@tcp(127.0.0.1:3306)/workshop'")
	}
	for _, v := range strings.Split(*final, ",") {
		if v = strings.TrimSpace(v); v != "" {
			o.final = append(o.final, v)
		}
	}
	for _, wt := range workTypes {
		code, typ, ok := strings.Cut(wt, "=")
		if !ok || strings.TrimSpace(code) == "" || strings.TrimSpace(typ) == "" {
			return bad("--work-type %q: write CODE=TYPE, e.g. --work-type 'R&R=RemoveReplaceLabour'", wt)
		}
		o.workTypes[code] = strings.TrimSpace(typ)
	}
	for _, c := range choose {
		role, name, ok := strings.Cut(c, "=")
		if !ok || !strings.Contains(", "+initRoles+",", ", "+role+",") || name == "" {
			return bad("--choose %q: write ROLE=NAME with ROLE one of %s", c, initRoles)
		}
		o.choose[role] = name
	}
	return o, 0, true
}

// initDSN parses --dsn and adds the password from the file or the
// environment. A password in the DSN itself is refused: a command line is
// visible to every user of the machine (ps) and kept in shell histories.
func initDSN(o initOptions, getenv func(string) string) (shopdb.Config, error) {
	cfg, err := shopdb.ConfigFromDSN(o.dsn)
	if err != nil {
		return cfg, fmt.Errorf("--dsn: %v; write it as user@tcp(host:3306)/shopdb", err)
	}
	if cfg.Password != "" {
		return cfg, errors.New("--dsn holds a password: a command line is visible to every user of the machine and kept in shell histories; " +
			"remove it and use --password-file FILE or the variable " + initPasswordEnv)
	}
	if cfg.User == "" {
		return cfg, errors.New("--dsn names no user: write user@tcp(host:3306)/shopdb")
	}
	if cfg.Database == "" {
		return cfg, errors.New("--dsn names no database: write user@tcp(host:3306)/shopdb")
	}
	switch {
	case o.passwordFile != "":
		b, err := os.ReadFile(o.passwordFile)
		if err != nil {
			return cfg, fmt.Errorf("--password-file: %w", err) // the *os.PathError names the file
		}
		cfg.Password, cfg.PasswordFrom = strings.TrimSpace(string(b)), "--password-file "+o.passwordFile
	case getenv(initPasswordEnv) != "":
		cfg.Password, cfg.PasswordFrom = getenv(initPasswordEnv), "the variable "+initPasswordEnv
	}
	return cfg, nil
}

// initSession is one run of init: what it read and decided.
type initSession struct {
	o      initOptions
	cfg    shopdb.Config // the connection, from --dsn
	db     *sql.DB
	ask    *asker // nil: ask nothing
	stdout io.Writer

	schema    *discover.Schema
	p         *discover.Proposal
	q         discover.Queries
	workTypes map[string]workTypeChoice
	// exampleJob is a job with lines, for the summary to name.
	exampleJob string
}

// discover reads the schema and decides, asking where it is unsure.
func (s *initSession) discover(ctx context.Context) error {
	var err error
	s.schema, err = discover.Read(ctx, s.db, discover.Options{SkipPrefix: shopdb.DefaultTablePrefix})
	if err != nil {
		return err
	}
	if len(s.schema.Tables) == 0 {
		return fmt.Errorf("database %s has no table that user %s can see: if it has tables, the user lacks privileges on them: "+
			"GRANT SELECT ON `%s`.* TO '%s'@'host' (quotesync also needs INSERT and UPDATE on what create_job writes, and its own tables)",
			s.schema.Database, s.cfg.User, s.schema.Database, s.cfg.User)
	}
	sampler, err := discover.NewSampler(ctx, s.db, s.schema.Server, 0)
	if err != nil {
		return err
	}
	defer sampler.Close()
	overrides, final := s.o.choose, s.o.final
	propose := func() error {
		s.p, err = discover.Propose(ctx, s.schema, sampler, overrides, final)
		if nj, ok := errors.AsType[*discover.NoJobsError](err); ok {
			return fmt.Errorf("%w\nThe user %s sees %d tables in %s; if the shop's tables are not among them, grant it SELECT on them", err, s.cfg.User, nj.Tables, s.schema.Database)
		}
		return err
	}
	if err := propose(); err != nil {
		return err
	}
	// Ask about every uncertain choice once, then propose again with the
	// answers; then which status values mean final.
	if s.ask != nil && s.ask.choices(s.p, overrides) {
		if err := propose(); err != nil {
			return err
		}
	}
	if s.ask != nil && len(final) == 0 {
		if final = s.ask.final(s.p); len(final) > 0 {
			if err := propose(); err != nil {
				return err
			}
		}
	}
	s.workTypes = proposeWorkTypes(s.p.Codes, s.o.workTypes)
	if s.ask != nil {
		s.ask.workTypes(s.p, s.workTypes)
	}
	// What a person confirmed is no longer a guess: the choices asked
	// about, the status whose final values were given, and what --choose
	// fixed.
	for i, c := range s.p.Choices {
		if s.o.choose[c.Role] != "" || s.ask != nil && s.ask.confirmed[c.Role] || c.Role == discover.RoleStatus && len(final) > 0 {
			s.p.Choices[i].Guess = false
		}
	}
	s.q = s.p.Queries()
	return nil
}

// write renders the file, has the server prepare every query (and run
// those that read, read-only), writes the file and prints the summary.
func (s *initSession) write(ctx context.Context, stderr io.Writer) int {
	failed := s.prepare(ctx)
	text := s.render(failed)
	if err := s.validateRendered(text); err != nil {
		return failf(stderr, exitFailure, "quotesync init: the configuration written does not parse (%v): please report this as a bug", err)
	}
	// renameio writes a temporary file beside it, syncs it and renames it
	// over the path: a reader never sees half a file.
	if err := renameio.WriteFile(s.o.output, []byte(text), 0o644); err != nil {
		return failf(stderr, exitFailure, "quotesync init: write %s: %v", s.o.output, err)
	}
	s.summary(failed, text)
	if len(failed) > 0 {
		return exitFailure
	}
	return exitOK
}

// prepare runs shopdb's query checks on the written mapping: every
// statement prepared, those that read run in a READ ONLY transaction. It
// returns the failures by query key ("find_job", "create_job[1]").
func (s *initSession) prepare(ctx context.Context) map[string]string {
	failed := map[string]string{}
	cfg := s.shopConfig()
	cfg.Password = s.cfg.Password
	db, err := shopdb.Open(ctx, cfg)
	if err != nil {
		failed["database"] = err.Error()
		return failed
	}
	defer db.Close()
	for _, c := range db.CheckQueries(ctx, nil, "") {
		if c.Err != nil {
			failed[strings.TrimPrefix(c.Key, "shop.queries.")] = c.Err.Error()
		}
	}
	s.exampleJob = exampleJob(ctx, db)
	return failed
}

// exampleJob is the newest job with a claim and lines (sample_jobs), to
// name in the summary's preview; "" when none.
func exampleJob(ctx context.Context, db *shopdb.DB) string {
	samples, err := db.SampleJobs(ctx)
	if err != nil || len(samples) == 0 {
		return ""
	}
	jobs := make([]string, len(samples))
	for i, s := range samples {
		jobs[i] = s.Job
	}
	report, err := db.Lines(ctx, jobs)
	if err != nil {
		return ""
	}
	for _, j := range jobs {
		if len(report[j].Lines) > 0 {
			return j
		}
	}
	return ""
}

// validateRendered parses the written text as quotesync will, and checks
// that it reads back as what was meant: the same statements and the same
// work types (a name or a value from the shop that the YAML read
// otherwise would show here, not in the daemon).
func (s *initSession) validateRendered(text string) error {
	fc, err := config.Parse(strings.NewReader(text))
	if err != nil {
		return err
	}
	if len(fc.Shop.WorkTypes) == 0 {
		// None mapped yet: the file says so, and check refuses it until
		// one is; the rest must still be valid.
		fc.Shop.WorkTypes = map[string]string{"-": "-"}
	}
	set, err := fc.Build(config.BuildOptions{Getenv: func(string) string { return "" }, Scope: config.NoSecrets})
	if err != nil {
		return err
	}
	want := s.shopConfig()
	got := set.Daemon.Shop
	if !maps.Equal(got.WorkTypes, want.WorkTypes) {
		return fmt.Errorf("shop.work_types reads back as %v, not %v", got.WorkTypes, want.WorkTypes)
	}
	if !reflect.DeepEqual(got.Queries, want.Queries) {
		return fmt.Errorf("shop.queries read back otherwise than written")
	}
	return nil
}
