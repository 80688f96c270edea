package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/termtext"
	"github.com/quotesync/quotesync/remote/redact"
	qsync "github.com/quotesync/quotesync/sync"
)

// configFlags are --config and --site, which every verb that reads the
// configuration takes. --site SITE is one of the sites of the template
// unit (quotesync@SITE.service): the file is config.SitePath(SITE) unless
// --config names another, every log line carries the site, and the
// control socket defaults to the site's own.
type configFlags struct {
	fs   *flag.FlagSet
	file string
	site siteFlag
}

// registerConfig registers --config and --site on fs.
func registerConfig(fs *flag.FlagSet) *configFlags {
	c := &configFlags{fs: fs}
	fs.StringVar(&c.file, "config", config.DefaultPath, "configuration `file`")
	fs.Var(&c.site, "site", "the site `SITE` of quotesync@SITE.service: reads "+config.SitePath("SITE")+" (unless --config says otherwise), names the site in the log")
	return c
}

// path is the configuration file to read, once fs is parsed.
func (c *configFlags) path() string {
	given := false
	c.fs.Visit(func(f *flag.Flag) { given = given || f.Name == "config" })
	if c.site != "" && !given {
		return config.SitePath(string(c.site))
	}
	return c.file
}

// common returns the flags as commonFlags.
func (c *configFlags) common() commonFlags { return commonFlags{configFlags: c} }

// siteFlag is --site; a name no site may have is a flag error.
type siteFlag string

func (s *siteFlag) String() string { return string(*s) }

func (s *siteFlag) Set(v string) error {
	if err := config.CheckSiteName(v); err != nil {
		return err
	}
	*s = siteFlag(v)
	return nil
}

// commonFlags are the flags every verb that runs the daemon or its parts
// takes: the configuration and the log's overrides.
type commonFlags struct {
	*configFlags
	logFormat string
	logLevel  string
	// secrets is the set loadSettings adds the secrets it reads to (the
	// daemon's, kept across reloads); a new one each time when nil.
	secrets *redact.Secrets
}

// register registers --config, --site and the log's flags on fs.
func (c *commonFlags) register(fs *flag.FlagSet) {
	c.configFlags = registerConfig(fs)
	fs.StringVar(&c.logFormat, "log-format", "", "log format, json or console (default: log.format of the file)")
	fs.StringVar(&c.logLevel, "log-level", "", "log level, debug, info, warn or error (default: log.level of the file)")
}

// logger builds the process's logger (newLogger) for these flags: with
// --site, every line carries the site.
func (c *commonFlags) logger(level zap.AtomicLevel, format string, w io.Writer, secrets *redact.Secrets) *zap.Logger {
	log := newLogger(level, format, w, secrets)
	if c.site != "" {
		log = log.With(zap.String(fieldSite, string(c.site)))
	}
	return log
}

// loadSettings reads the file, applies the flags' overrides and reads the
// secrets of scope.
func (c *commonFlags) loadSettings(scope config.Scope) (*config.Settings, error) {
	fc, err := config.Load(c.path())
	if err != nil {
		return nil, err
	}
	fc.SetSite(string(c.site))
	if c.logFormat != "" {
		fc.Log.Format = c.logFormat
	}
	if c.logLevel != "" {
		fc.Log.Level = c.logLevel
	}
	s, err := fc.Build(config.BuildOptions{Getenv: os.Getenv, Scope: scope, UserAgent: userAgent(), Secrets: c.secrets})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.path(), err)
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
	log := c.logger(zap.NewAtomicLevelAt(set.LogLevel), set.LogFormat, w, set.Daemon.Secrets)
	o.Log = log
	if qd, err = qsync.Open(ctx, set.Daemon, o); err != nil {
		printErr(w, verb, err)
		_ = log.Sync()
		return nil, nil, exitFailure
	}
	return qd, func() { _ = qd.Close(); _ = log.Sync() }, exitOK
}

// newLogger builds the one logger of the process; level can change later
// (a reload sets log.level). Every secret of secrets (which a reload may
// add to) is removed from every line, whatever field or message it came
// in. When w is the journal's stream (systemd's $JOURNAL_STREAM), every
// line starts with its syslog priority.
func newLogger(level zap.AtomicLevel, format string, w io.Writer, secrets *redact.Secrets) *zap.Logger {
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
	if toJournal(w) {
		enc = newPriorityEncoder(enc)
	}
	if j, ok := w.(*journalErrors); ok {
		w = j.logLines() // the priority of its lines is kept, no other
	}
	// zap escapes C0 in values but leaves DEL, C1 and bidi controls raw;
	// `once` and a daemon run by hand log to a terminal.
	core := zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(termtext.NewJSONWriter(w))), level)
	if secrets != nil {
		core = redactCore{Core: core, secrets: secrets}
	}
	return zap.New(core)
}

// redactCore removes the secrets from every line of the core it wraps,
// before encoding (so that no escaping hides them): from the message and
// from every field that holds text (strings, errors, Stringers). A
// receiver's or a service's answer that quotes a secret back reaches the
// log in an error's text, and no field is trusted to be free of it.
type redactCore struct {
	zapcore.Core
	secrets *redact.Secrets
}

// With implements zapcore.Core.
func (c redactCore) With(fields []zapcore.Field) zapcore.Core {
	return redactCore{Core: c.Core.With(c.redact(fields)), secrets: c.secrets}
}

// Check implements zapcore.Core: the entry is written through c.
func (c redactCore) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(ent.Level) {
		return ce.AddCore(ent, c)
	}
	return ce
}

// Write implements zapcore.Core.
func (c redactCore) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	ent.Message = c.secrets.Redact(ent.Message)
	return c.Core.Write(ent, c.redact(fields))
}

// redact returns fields with the secrets removed from their text; an
// error or a Stringer becomes the string of its redacted text.
func (c redactCore) redact(fields []zapcore.Field) []zapcore.Field {
	if c.secrets.Empty() {
		return fields
	}
	out := make([]zapcore.Field, len(fields))
	for i, f := range fields {
		switch f.Type {
		case zapcore.StringType:
			f.String = c.secrets.Redact(f.String)
		case zapcore.ByteStringType:
			if b, ok := f.Interface.([]byte); ok {
				f.Interface = []byte(c.secrets.Redact(string(b)))
			}
		case zapcore.ErrorType:
			if err, ok := f.Interface.(error); ok && err != nil {
				f = zap.String(f.Key, c.secrets.Redact(err.Error()))
			}
		case zapcore.StringerType:
			if st, ok := f.Interface.(fmt.Stringer); ok && st != nil {
				f = zap.String(f.Key, c.secrets.Redact(st.String()))
			}
		}
		out[i] = f
	}
	return out
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

// verbFlags is the flag set of a verb; its usage is help, then the flags.
func verbFlags(name, help string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), help); fs.PrintDefaults() }
	return fs
}

// parseArgs parses a verb's flags, before and after its arguments, and
// returns the arguments; ok is false when the verb should stop with code.
// Help asked for goes to standard output (it is the answer, and pipes
// into a pager); a flag error and the usage that follows it go to
// standard error.
func parseArgs(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (rest []string, code int, ok bool) {
	if wantsHelp(args) {
		fs.SetOutput(stdout)
		fs.Usage()
		return nil, exitOK, false
	}
	fs.SetOutput(stderr)
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			return nil, exitOK, false
		} else if err != nil {
			return nil, exitUsage, false
		}
		if fs.NArg() == 0 {
			return rest, exitOK, true
		}
		rest, args = append(rest, fs.Arg(0)), fs.Args()[1:]
	}
}

// parseFlags is parseArgs for a verb that takes no argument.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (int, bool) {
	rest, code, ok := parseArgs(fs, args, stdout, stderr)
	if ok && len(rest) > 0 {
		fmt.Fprintf(stderr, "quotesync %s: unexpected argument %q; run 'quotesync %s --help'\n", fs.Name(), rest[0], fs.Name())
		return exitUsage, false
	}
	return code, ok
}

// parseOneArg is parseArgs for a verb that takes one argument, what (as
// messages name it).
func parseOneArg(fs *flag.FlagSet, what string, args []string, stdout, stderr io.Writer) (arg string, code int, ok bool) {
	rest, code, ok := parseArgs(fs, args, stdout, stderr)
	switch {
	case !ok:
		return "", code, false
	case len(rest) == 0:
		fmt.Fprintf(stderr, "quotesync %s: %s is missing; %s\n", fs.Name(), what, "run 'quotesync "+fs.Name()+" --help'")
		return "", exitUsage, false
	}
	if arg = strings.TrimSpace(rest[0]); len(rest) > 1 || arg == "" {
		fmt.Fprintf(stderr, "quotesync %s: one argument, %s, please; unexpected %q\n", fs.Name(), what, strings.Join(rest[1:], " "))
		return "", exitUsage, false
	}
	return arg, exitOK, true
}
