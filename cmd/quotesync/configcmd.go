package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/termtext"
	"github.com/quotesync/quotesync/remote/redact"
)

const configHelp = `Usage: quotesync config [--config FILE] [--json]

Prints the configuration as the daemon sees it: every key of the file
format, the value set in the file or the default that applies, and where
each comes from:

  file         set in the YAML file
  default      not set (or set to its zero value): the default applies
  environment  a secret read from the environment variable a *_env key
               names, or a value using ${VAR}
  secret file  a secret read from the file a *_file key names

Secrets are never shown: only where they come from (the file's path,
the variable's name, and whether it is set here). Values that use
${CREDENTIALS_DIRECTORY} show what it expands to in this environment
(systemd sets it for the service; run it as
CREDENTIALS_DIRECTORY=/etc/quotesync/credentials quotesync config to
see the same paths). Long values (SQL) are cut to one line; --json gives
them whole.

This is the answer to "what is it actually using"; 'quotesync check' is
the verdict on it (the database, the queries, the token).

Exit status: 0 printed and the file is valid, 1 the output could not be
written, 2 bad flags, or a file that does not parse or validate (the
listing is printed when it parses, then the errors).

Example:
  quotesync config --config /etc/quotesync/config.yaml

Flags:
`

// configValueWidth is where the text listing cuts a value.
const configValueWidth = 48

func runConfig(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := verbFlags("config", configHelp)
	cfg := registerConfig(fs)
	asJSON := fs.Bool("json", false, "print JSON: every entry with its whole value")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	path := cfg.path()
	entries, err := config.Effective(path, string(cfg.site), os.Getenv)
	if err != nil {
		return fail(stderr, exitUsage, "config", err)
	}
	secrets := redact.New() // what the file's secrets are, as far as they can be read
	invalid := validateFile(path, secrets)
	for i, e := range entries { // whole, before the listing cuts them
		entries[i].Value, entries[i].Detail = secrets.Redact(e.Value), secrets.Redact(e.Detail)
	}
	if *asJSON {
		err = writeJSON(stdout, entries)
	} else {
		err = writeConfigTable(stdout, path, entries)
	}
	if err != nil {
		return failf(stderr, exitFailure, "quotesync config: write: %v", err)
	}
	if err := invalid; err != nil {
		return failf(stderr, exitUsage, "quotesync config: %s does not validate ('quotesync check' says more):\n%s", path, termtext.Lines(secrets.Redact(err.Error())))
	}
	return exitOK
}

// writeConfigTable prints the entries as a table, one line each.
func writeConfigTable(w io.Writer, path string, entries []config.Entry) error {
	fmt.Fprintf(w, "quotesync config: %s, as the daemon sees it (secrets only by where they come from; --json for long values whole)\n", path)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tORIGIN\tDETAIL")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", termtext.Safe(e.Key), oneLine(e.Value), e.Origin, dash(termtext.Safe(e.Detail)))
	}
	return tw.Flush()
}

// oneLine puts a value on one line, cut at configValueWidth: the line
// breaks and indents of a YAML block (SQL) become single spaces, and any
// other control character is shown (termtext.Safe).
func oneLine(v string) string {
	v = termtext.Safe(strings.Join(strings.FieldsFunc(v, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r'
	}), " "))
	if n := utf8.RuneCountInString(v); n > configValueWidth {
		return string([]rune(v)[:configValueWidth-1]) + "…"
	}
	return v
}

// validateFile runs the file's validation without needing any secret;
// the secrets it can read join secrets.
func validateFile(path string, secrets *redact.Secrets) error {
	fc, err := config.Load(path)
	if err != nil {
		return err
	}
	_, err = fc.Build(config.BuildOptions{Getenv: os.Getenv, Scope: config.NoSecrets, UserAgent: userAgent(), Secrets: secrets})
	return err
}
