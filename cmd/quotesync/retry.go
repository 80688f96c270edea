package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/termtext"
	"github.com/quotesync/quotesync/remote/redact"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

const retryHelp = `Usage: quotesync retry [--config FILE] [--note TEXT] [--insurer NAME] REQUEST_ID

Puts a request a person sees as stuck back into the flow, and records the
change in the event log with the note. The next pass of the daemon takes
it up again:

  rejected         back to the phase it was refused in (a request whose
                   job number the remote refused goes back to waiting, so
                   that its job is looked up again)
  accept_unknown   reserved again: the accept is sent again
  gone,            waiting: the job is looked up again and the request
  taken_elsewhere  accepted should the remote list it again
  held, or waiting due now, and a held job is read again
  for a retry

Fix the cause first (see 'quotesync status', which says what to do for
each): a request rejected for the same reason is rejected again. A
submitted request has nothing to retry, nor has one ended with its
insurer that keeps its job (its insurer may hold it accepted).

It writes only quotesync's own row (compare-and-set), so it is safe while
the daemon runs, and logs the change on standard error ("request put back
into the flow") as the daemon logs its own. Then it delivers what the
change queued (shop.write_back.retried, notifications) and any other
delivery not made yet, each once; one that fails is left to the daemon.
It needs the database password, not the token.

With several insurers (remotes:), two insurers' services may use one
request id: --insurer NAME says whose request it is. Without it, an id
tracked for one insurer only is that insurer's; an id tracked for several
is refused, naming them.

Exit status: 0 the request was put back, 1 it is unknown, submitted, or
the database could not be written (or its state tables are not this
quotesync's version: a newer one migrated them, upgrade quotesync; an
older one, start the daemon once to migrate them), 2 bad flags or
configuration.

Example:
  quotesync retry --config /etc/quotesync/config.yaml --note "job number fixed in the shop" 1234

Flags:
`

func runRetry(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := verbFlags("retry", retryHelp)
	cfg := registerConfig(fs)
	note := fs.String("note", "", "why, for the event log (default: who ran it)")
	insurer := fs.String("insurer", "", "the insurer whose request it is (with several insurers, when the id is tracked for more than one)")
	ids, code, ok := parseArgs(fs, args, stdout, stderr)
	switch {
	case !ok:
		return code
	case len(ids) == 0:
		return failf(stderr, exitUsage, "quotesync retry: the request id is missing; 'quotesync status' lists the stuck ones\nExample: quotesync retry 1234")
	case len(ids) > 1 || strings.TrimSpace(ids[0]) == "":
		return failf(stderr, exitUsage, "quotesync retry: one request id, please; unexpected %q", strings.Join(ids[1:], " "))
	}
	id := strings.TrimSpace(ids[0])
	if *note == "" {
		*note = "retry requested from the command line"
		if u := os.Getenv("USER"); u != "" {
			*note += " by " + u
		}
	}
	// Assembled as the daemon is, so that the change goes through its
	// executor: logged, and queued for delivery as its event says.
	cf := cfg.common()
	cf.secrets = redact.New()
	stdout, flush := redacting(stdout, cf.secrets) // it quotes the error quotesync kept
	defer flush()
	qd, done, code := cf.assemble(ctx, "retry", config.ShopSecrets, qsync.OpenOptions{AllowNoTables: true, StateOnly: true}, stderr)
	if qd == nil {
		return code
	}
	defer done()
	shown := termtext.Safe(id) // as typed; maybe pasted from a listing
	if cur, _, err := qd.Store.SchemaVersion(ctx); err == nil && cur == 0 {
		return failf(stderr, exitFailure, "quotesync retry: request %s is not tracked: quotesync's state tables do not exist yet in %s (quotesync has not run on this database; the first start of 'quotesync run' or 'once' creates them)", shown, qd.Shop.Config().Database)
	}

	before, after, err := qd.Retry(ctx, *insurer, id, *note)
	switch {
	case errors.Is(err, qsync.ErrAmbiguous):
		return failf(stderr, exitFailure, "quotesync retry: %s; say which with --insurer NAME", termtext.Safe(err.Error()))
	case errors.Is(err, store.ErrNotFound):
		return failf(stderr, exitFailure, "quotesync retry: request %s is not tracked by quotesync; 'quotesync status --all' lists the requests it knows", shown)
	case errors.Is(err, store.ErrStale):
		return failf(stderr, exitFailure, "quotesync retry: request %s changed while it was being retried; look at 'quotesync status' and run retry again if it is still stuck", shown)
	case err != nil: // ErrNotRetryable among them
		return fail(stderr, exitFailure, "retry", err)
	}
	qd.Deliver(ctx) // the write-back and notifications of the change
	fmt.Fprintf(stdout, "request %s (claim %s, job %s): %s -> %s; the next pass takes it up again\n",
		shown, dash(termtext.Safe(after.ClaimNumber)), dash(termtext.Safe(jobOf(after))), before.Phase, after.Phase)
	if before.LastError != "" {
		fmt.Fprintf(stdout, "it was %s because: %s\n", before.Phase, termtext.Lines(before.LastError))
	}
	return exitOK
}
