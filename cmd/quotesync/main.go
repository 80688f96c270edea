// Command quotesync is the sync daemon between a repair workshop's
// shop-management database and an insurer's Repairer Quotation Integration
// Service. See README.md.
package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"syscall"

	"github.com/quotesync/quotesync/cmd/internal/config"
)

// Exit codes, documented in docs/operations.md.
const (
	exitOK      = 0 // success
	exitFailure = 1 // the work failed (a pass failed, a check failed)
	exitUsage   = 2 // bad command line or configuration
)

// verb is one sub-command.
type verb struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// verbs lists every sub-command; each lives in a file of its own name.
var verbs = map[string]verb{
	"check":    {"check the configuration, secrets, database, queries, work types and token", runCheck},
	"config":   {"print the configuration as the daemon sees it: values, defaults, origins", runConfig},
	"history":  {"show one request's timeline (by request id or job number)", runHistory},
	"init":     {"write a configuration from a shop database quotesync has never seen", runInit},
	"insurers": {"list the insurers; adopt, move or end the requests of one", runInsurers},
	"preview":  {"show the quote of one shop job exactly as a pass would send it", runPreview},
	"once":     {"run one pass now (or print its plan with --dry-run)", runOnce},
	"passwd":   {"add a user of the status page's login, or change their password", runPasswd},
	"retry":    {"put a rejected request back into the flow", runRetry},
	"run":      {"run the daemon: passes on the schedule until stopped", runRun},
	"status":   {"show the tracked requests and their phases", runStatus},
	"sync-now": {"ask the running daemon for a pass at once", runSyncNow},
	"version":  {"print the version", runVersion},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := dispatch(ctx, os.Args[1:], os.Stdout, stderrFor(os.Stderr))
	stop()
	os.Exit(code)
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		usage(stderr) // not asked for: a mistake, so standard error and exit 2
		return exitUsage
	case args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help":
		usage(stdout)
		return exitOK
	case args[0] == "--version" || args[0] == "-version":
		return runVersion(ctx, args[1:], stdout, stderr)
	}
	v, ok := verbs[args[0]]
	if !ok {
		v, ok = internalVerbs[args[0]] // not listed in the help
	}
	if !ok {
		return failf(stderr, exitUsage, "quotesync: unknown command %q; run 'quotesync --help' for the list", args[0])
	}
	return v.run(ctx, args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: quotesync <command> [flags]\n\nCommands:\n")
	for _, name := range slices.Sorted(maps.Keys(verbs)) {
		fmt.Fprintf(w, "  %-10s %s\n", name, verbs[name].summary)
	}
	fmt.Fprintf(w, "\nEvery command that reads the configuration takes --config FILE (default %s).\n", config.DefaultPath)
	fmt.Fprintf(w, "Run 'quotesync <command> --help' for the flags of one command; --version prints the version.\n\n")
	fmt.Fprintf(w, "Exit status: 0 success, 1 the work or a check failed, 2 bad command line or configuration.\n\n")
	fmt.Fprintf(w, "Example:\n  quotesync check --config %s\n", config.DefaultPath)
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// userAgent names quotesync and its version in every remote call.
func userAgent() string { return "quotesync/" + version }

const versionHelp = `Usage: quotesync version

Prints the version of quotesync, the Go release it was built with and
the platform.

Exit status: 0, or 2 for a bad command line.

Example:
  quotesync version

`

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := verbFlags("version", versionHelp)
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	fmt.Fprintf(stdout, "quotesync %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}
