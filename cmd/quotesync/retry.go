package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/quotesync/quotesync/shopdb"
)

const retryHelp = `Usage: quotesync retry [--config FILE] [--note TEXT] REQUEST_ID

Puts a rejected request back into the flow: its phase goes back to where
it was rejected from (reserved, accepted or drafted), with its attempts
and error cleared, and the change is recorded in the event log with the
note. The next pass of the daemon takes it up again. Fix the cause first
(see the LAST ERROR column of 'quotesync status'): a request rejected for
the same reason is rejected again.

It writes only quotesync's own row (compare-and-set), so it is safe while
the daemon runs. It needs the database password, not the token.

Exit status: 0 the request was put back, 1 it is unknown, not rejected, or
the database could not be written (or a newer quotesync migrated its state
tables: upgrade quotesync), 2 bad flags or configuration.

Example:
  quotesync retry --config /etc/quotesync/config.yaml --note "job number fixed in the shop" 1234

Flags:
`

func runRetry(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("retry", flag.ContinueOnError)
	config := fs.String("config", defaultConfigPath, "configuration `file`")
	note := fs.String("note", "", "why, for the event log (default: who ran it)")
	fs.Usage = func() { fmt.Fprint(stderr, retryHelp); fs.PrintDefaults() }
	id, code, ok := parseRetryArgs(fs, args, stderr)
	if !ok {
		return code
	}
	if *note == "" {
		*note = "retry requested from the command line"
		if u := os.Getenv("USER"); u != "" {
			*note += " by " + u
		}
	}
	db, code := openStateDB(ctx, "retry", *config, stderr)
	if db == nil {
		return code
	}
	defer db.Close()

	before, err := db.Request(ctx, id)
	if err == nil {
		_, err = db.Retry(ctx, id, *note)
	}
	switch {
	case errors.Is(err, shopdb.ErrNotFound):
		fmt.Fprintf(stderr, "quotesync retry: request %s is not tracked by quotesync; 'quotesync status --all' lists the requests it knows\n", id)
		return exitFailure
	case errors.Is(err, shopdb.ErrNotRejected):
		fmt.Fprintf(stderr, "quotesync retry: request %s is %s, not rejected: only a rejected request can be retried (the daemon retries the others on its own)\n", id, before.Phase)
		return exitFailure
	case errors.Is(err, shopdb.ErrStale):
		fmt.Fprintf(stderr, "quotesync retry: request %s changed while it was being retried; look at 'quotesync status' and run retry again if it is still rejected\n", id)
		return exitFailure
	case err != nil:
		fmt.Fprintf(stderr, "quotesync retry: %v\n", err)
		return exitFailure
	}
	after, err := db.Request(ctx, id)
	if err != nil {
		fmt.Fprintf(stderr, "quotesync retry: request %s was put back, but reading it again failed: %v\n", id, err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "request %s (claim %s, job %s): rejected -> %s; the next pass takes it up again\n",
		id, dash(after.ClaimNumber), dash(after.JobNumber), after.Phase)
	fmt.Fprintf(stdout, "it was rejected because: %s\n", dash(truncate(before.LastError, 300)))
	return exitOK
}

// parseRetryArgs parses flags before and after the request id.
func parseRetryArgs(fs *flag.FlagSet, args []string, stderr io.Writer) (id string, code int, ok bool) {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", exitOK, false
		}
		return "", exitUsage, false
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "quotesync retry: the request id is missing; 'quotesync status' lists the rejected ones\nExample: quotesync retry 1234")
		return "", exitUsage, false
	}
	id = strings.TrimSpace(fs.Arg(0))
	if err := fs.Parse(fs.Args()[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", exitOK, false
		}
		return "", exitUsage, false
	}
	if fs.NArg() > 0 || id == "" {
		fmt.Fprintf(stderr, "quotesync retry: one request id, please; unexpected %q\n", strings.Join(fs.Args(), " "))
		return "", exitUsage, false
	}
	return id, exitOK, true
}
