package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
	qsync "github.com/quotesync/quotesync/sync"
)

// commonFlags are the flags every verb that reads the configuration takes.
type commonFlags struct {
	config    string
	logFormat string
	logLevel  string
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", defaultConfigPath, "configuration `file`")
	fs.StringVar(&c.logFormat, "log-format", "", "log format, json or console (default: log.format of the file)")
	fs.StringVar(&c.logLevel, "log-level", "", "log level, debug, info, warn or error (default: log.level of the file)")
}

// loadSettings reads the file, applies the flags' overrides and reads the
// secrets of scope.
func (c *commonFlags) loadSettings(scope secretScope) (*settings, error) {
	fc, err := loadConfig(c.config)
	if err != nil {
		return nil, err
	}
	if c.logFormat != "" {
		fc.Log.Format = c.logFormat
	}
	if c.logLevel != "" {
		fc.Log.Level = c.logLevel
	}
	s, err := fc.build(os.Getenv, scope)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.config, err)
	}
	return s, nil
}

// newLogger builds the one logger of the process; level can change later
// (a reload sets log.level).
func newLogger(level zap.AtomicLevel, format string, w io.Writer) *zap.Logger {
	ec := zap.NewProductionEncoderConfig()
	ec.TimeKey = "ts"
	ec.EncodeTime = zapcore.ISO8601TimeEncoder
	ec.EncodeDuration = zapcore.StringDurationEncoder
	var enc zapcore.Encoder
	if format == "console" {
		ec.EncodeLevel = zapcore.CapitalLevelEncoder
		enc = zapcore.NewConsoleEncoder(ec)
	} else {
		enc = zapcore.NewJSONEncoder(ec)
	}
	return zap.New(zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(w)), level))
}

// app is the daemon's parts, wired.
type app struct {
	set    *settings
	log    *zap.Logger
	db     *shopdb.DB
	client *remote.Client
	engine *qsync.Engine
}

// appOptions says what openApp prepares.
type appOptions struct {
	migrate bool                  // apply pending state migrations
	observe func(remote.CallInfo) // per-attempt hook of the remote client
	metrics qsync.Metrics         // nil: none
}

// openApp connects to the shop database (checking the state schema, and
// migrating it when asked), and builds the remote client and the engine.
func openApp(ctx context.Context, s *settings, log *zap.Logger, opts appOptions) (*app, error) {
	db, err := shopdb.Open(ctx, shopConfig(s, log))
	if err != nil {
		return nil, fmt.Errorf("connect to the shop database: %w", err)
	}
	a := &app{set: s, log: log, db: db}
	if err := a.prepareSchema(ctx, opts.migrate); err != nil {
		return nil, errors.Join(err, a.Close())
	}
	rc := s.remote
	rc.Observe = opts.observe
	a.client, err = remote.New(rc, s.tokens)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("remote: %w", err), a.Close())
	}
	a.engine, err = qsync.New(s.sync, a.client, db, log.Named(loggerSync))
	if err != nil {
		return nil, errors.Join(err, a.Close())
	}
	if opts.metrics != nil {
		a.engine.Metrics = opts.metrics
	}
	return a, nil
}

// shopConfig is the database configuration of s with the driver's own
// diagnostics routed to log.
func shopConfig(s *settings, log *zap.Logger) shopdb.Config {
	cfg := s.shop
	driverLog := log.Named(loggerMySQL)
	cfg.DriverLog = func(msg string) { driverLog.Warn(msgDriver, zap.String(fieldDetail, msg)) }
	return cfg
}

// prepareSchema migrates quotesync's state tables, or only checks that
// they are current when migrate is false. Either way it refuses tables
// that a newer quotesync migrated.
func (a *app) prepareSchema(ctx context.Context, migrate bool) error {
	if migrate {
		if err := a.db.Migrate(ctx); err != nil {
			if errors.Is(err, shopdb.ErrSchemaTooNew) {
				return fmt.Errorf("migrate quotesync's state tables: %w; %s", err, upgradeHint)
			}
			if mysqlErrno(err) == errTableAccessDenied {
				cfg := a.db.Config()
				return fmt.Errorf("migrate quotesync's state tables: %w; the database user needs CREATE, ALTER and INDEX on %s for its own tables (%s*): GRANT CREATE, ALTER, INDEX, SELECT, INSERT, UPDATE ON `%s`.* TO '%s'@…", err, cfg.Database, cfg.TablePrefix, cfg.Database, cfg.User)
			}
			return fmt.Errorf("migrate quotesync's state tables: %w", err)
		}
		return nil
	}
	cur, latest, err := a.db.SchemaVersion(ctx)
	if err != nil {
		return fmt.Errorf("read the state schema version: %w", err)
	}
	if cur > latest {
		return schemaTooNew(a.db.Config().Database, cur, latest)
	}
	if cur == 0 {
		return fmt.Errorf("quotesync's state tables do not exist yet in %s: the first start of 'quotesync run' (or a 'quotesync once' without --dry-run) creates them", a.db.Config().Database)
	}
	if cur < latest {
		return fmt.Errorf("quotesync's state tables are at version %d, this quotesync needs %d: run 'quotesync once' or start the daemon once to migrate them", cur, latest)
	}
	return nil
}

// upgradeHint is what to do when a newer quotesync migrated the database.
const upgradeHint = "a newer quotesync migrated this database: upgrade quotesync on this machine to that version (or newer) before running it again"

// schemaTooNew is the error of a state schema newer than this quotesync:
// reading or writing tables of a layout it does not know could lose state.
func schemaTooNew(database string, cur, latest int) error {
	return fmt.Errorf("quotesync's state tables in %s are at version %d, this quotesync knows only up to %d: %s: %w",
		database, cur, latest, upgradeHint, shopdb.ErrSchemaTooNew)
}

// Close closes the database.
func (a *app) Close() error {
	if a.db == nil {
		return nil
	}
	return a.db.Close()
}

// parseFlags parses a verb's flags; it returns the exit code to use when
// the verb should stop (help asked for, or bad flags).
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (int, bool) {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "quotesync %s: unexpected argument %q; run 'quotesync %s --help'\n", fs.Name(), fs.Arg(0), fs.Name())
		return exitUsage, false
	}
	return 0, true
}
