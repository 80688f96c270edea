package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/quotesync/quotesync/cmd/internal/statuspage"
	"github.com/quotesync/quotesync/cmd/internal/termtext"
	"github.com/quotesync/quotesync/remote/redact"
	qsync "github.com/quotesync/quotesync/sync"
)

// Text from outside (the insurer's ids, claims and answers, the shop's job
// numbers and codes) goes through termtext before it meets a terminal: a
// single value through termtext.Safe, a message quotesync composed around
// such values (an error) through termtext.Lines, JSON through writeJSON.
// A verb whose output quotes what quotesync kept or was answered (status,
// history, check, config, retry, once's plan) writes it through
// redacting: the secrets are removed from the whole of it.

// redacting returns w's stand-in for a verb's output, which holds what
// the verb writes, and the flush that writes it to w when the verb ends
// (defer), the secrets of set redacted from the whole: a secret may span
// two writes (a tabwriter's cells), and is matched only whole.
func redacting(w io.Writer, set *redact.Secrets) (io.Writer, func()) {
	var buf bytes.Buffer
	return &buf, func() {
		_, _ = io.WriteString(w, set.Redact(buf.String()))
		buf.Reset()
	}
}

// redactedError is an error whose text had the secrets removed when it
// was recorded (the last pass's error that /healthz, the status page and
// sd_notify show); errors.Is and As still see the error.
type redactedError struct {
	msg string
	err error
}

func redactErr(set *redact.Secrets, err error) error {
	if err == nil {
		return nil
	}
	return redactedError{msg: set.Redact(err.Error()), err: err}
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }

// truncate cuts s to at most n runes, marking the cut with "…", and puts
// it on one line. Make a value from outside safe before: a newline in it
// is then shown, not folded away.
func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// dash shows an empty cell as "-".
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ago renders how long before now t was, compactly ("45s", "12m", "3h",
// "5d"); "-" for the zero time.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return statuspage.Span(max(now.Sub(t), 0))
}

// flat puts a message quotesync composed around values from outside (an
// error, a reason) on one line, safe for a terminal: its own line breaks
// become spaces.
func flat(s string) string { return strings.Join(strings.Fields(termtext.Lines(s)), " ") }

// printErr writes "quotesync VERB: err" on w, the error made safe for a
// terminal: it may quote the service's answer or the shop's data.
func printErr(w io.Writer, verb string, err error) {
	fmt.Fprintf(w, "quotesync %s: %s\n", verb, termtext.Lines(err.Error()))
}

// fail is printErr, for a verb that stops with the exit status code.
func fail(w io.Writer, code int, verb string, err error) int {
	printErr(w, verb, err)
	return code
}

// failf writes a line of its own on w for a verb that stops with the exit
// status code.
func failf(w io.Writer, code int, format string, args ...any) int {
	fmt.Fprintf(w, format+"\n", args...)
	return code
}

// writeJSON writes v as indented JSON for --json, with no character a
// terminal acts on left raw (termtext.JSON): the values decode exactly, and
// a person may read the output on a terminal.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(termtext.JSON(b), '\n'))
	return err
}

// perInsurer is f of the lone insurer of ins, or, of several, each one's
// name, sep and f of it, joined by join.
func perInsurer(ins []qsync.Insurer, sep, join string, f func(qsync.Insurer) string) string {
	if len(ins) == 1 {
		return f(ins[0])
	}
	parts := make([]string, len(ins))
	for i, in := range ins {
		parts[i] = in.Name + sep + f(in)
	}
	return strings.Join(parts, join)
}
