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

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/termtext"
	qsync "github.com/quotesync/quotesync/sync"
)

// defaultConfigPath is where the package installs the configuration.
const defaultConfigPath = config.DefaultPath

// commonFlags are the flags every verb that reads the configuration takes.
type commonFlags struct {
	config    string
	logFormat string
	logLevel  string
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", config.DefaultPath, "configuration `file`")
	fs.StringVar(&c.logFormat, "log-format", "", "log format, json or console (default: log.format of the file)")
	fs.StringVar(&c.logLevel, "log-level", "", "log level, debug, info, warn or error (default: log.level of the file)")
}

// loadSettings reads the file, applies the flags' overrides and reads the
// secrets of scope.
func (c *commonFlags) loadSettings(scope config.Scope) (*config.Settings, error) {
	fc, err := config.Load(c.config)
	if err != nil {
		return nil, err
	}
	if c.logFormat != "" {
		fc.Log.Format = c.logFormat
	}
	if c.logLevel != "" {
		fc.Log.Level = c.logLevel
	}
	s, err := fc.Build(config.BuildOptions{Getenv: os.Getenv, Scope: scope, UserAgent: userAgent()})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.config, err)
	}
	return s, nil
}

// assemble loads the settings of scope and assembles the daemon with o,
// logging on w, for a verb that uses it once (once, retry); done closes
// it. code is the exit status when that failed: 2 for the file, else 1.
func (c *commonFlags) assemble(ctx context.Context, verb string, scope config.Scope, o qsync.OpenOptions, w io.Writer) (qd *qsync.Daemon, done func(), code int) {
	set, err := c.loadSettings(scope)
	if err != nil {
		printErr(w, verb, err)
		return nil, nil, exitUsage
	}
	log := newLogger(zap.NewAtomicLevelAt(set.LogLevel), set.LogFormat, w)
	o.Log = log
	if qd, err = qsync.Open(ctx, set.Daemon, o); err != nil {
		printErr(w, verb, err)
		_ = log.Sync()
		return nil, nil, exitFailure
	}
	return qd, func() { _ = qd.Close(); _ = log.Sync() }, exitOK
}

// newLogger builds the one logger of the process; level can change later
// (a reload sets log.level). When w is the journal's stream (systemd's
// $JOURNAL_STREAM), every line starts with its syslog priority.
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
	if toJournal(w, os.Getenv) {
		enc = newPriorityEncoder(enc)
	}
	// zap escapes C0 in values but leaves DEL, C1 and bidi controls raw;
	// `once` and a daemon run by hand log to a terminal.
	return zap.New(zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(termtext.NewJSONWriter(w))), level))
}

// wantsHelp reports whether args ask for help (-h, -help, --help) before
// any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// parseFlags parses a verb's flags; it returns the exit code to use when
// the verb should stop (help asked for, or bad flags). Help asked for goes
// to standard output (it is the answer, and pipes into a pager); a flag
// error and the usage that follows it go to standard error.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (int, bool) {
	if wantsHelp(args) {
		fs.SetOutput(stdout)
		fs.Usage()
		return exitOK, false
	}
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
