// Command quotesync-demo is quotesync's zero-setup demo: one command, on a
// machine with nothing but Go, shows the whole workflow: the daemon's real
// code, wired as `quotesync run` wires a file with remotes:, against an
// embedded MySQL-compatible server holding the sample shop and the
// emulators of two insurers' APIs, while the demo plays the shop's part
// (README.md says what it shows and checks).
//
// The embedded server is a stand-in, not MariaDB: it serialises sessions
// (serialize.go) and is no place for performance figures; EMBEDDED-SERVER.md
// says what it can and cannot do. The demo is a module of its own so that
// the daemon's does not require the embedded server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `Usage: quotesync-demo [--verbose] [--timeout 60s] [--serve 2m]
       quotesync-demo --serve-mysql [--mysql-addr 127.0.0.1:3307]

Runs quotesync's real daemon code against an embedded MySQL-compatible
server holding a sample shop and emulators of two insurers' APIs (acme
and harbour, served by one daemon through remotes:), plays the shop's
part, and prints a timeline and a summary. Needs nothing but Go; nothing
leaves this machine. It prints the address of the status page (the
daemon's /status, on loopback) while it runs; --serve keeps the page up
for a while after the run.

--serve-mysql only starts the embedded server with the sample shop, prints
its DSN and serves until Ctrl-C (to look around with a MySQL client).

Exit status: 0 when every request of both insurers reached Submitted with
exactly the shop's final lines, 1 when not (or the demo could not start),
2 bad flags.

Example:
  go -C cmd/quotesync-demo run .
  go -C cmd/quotesync-demo run . -serve 2m
  go -C cmd/quotesync-demo run . --verbose 2>daemon.log.json

Flags:
`

// run is main without the process; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("quotesync-demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o demoOptions
	fs.BoolVar(&o.verbose, "verbose", false, "also write the daemon's raw JSON log lines (as quotesync run writes them) to standard error")
	fs.DurationVar(&o.timeout, "timeout", DefaultTimeout, "give up, report what did not converge and exit 1 after this `duration`")
	fs.StringVar(&o.mysqlAddr, "mysql-addr", DefaultMySQLAddr, "listen `address` of the embedded MySQL server (port 0: a free one)")
	fs.DurationVar(&o.serve, "serve", 0, "after the run, keep serving the status page for this `duration` (e.g. 2m) so that you can look at it")
	fs.StringVar(&o.pageAddr, "page-addr", DefaultPageAddr, "listen `address` of the status page (loopback; port 0: a free one)")
	serve := fs.Bool("serve-mysql", false, "only serve the embedded server with the sample shop until Ctrl-C")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "quotesync-demo: unexpected argument %q; run 'quotesync-demo --help'\n", fs.Arg(0))
		return 2
	}
	if o.timeout <= 0 {
		fmt.Fprintln(stderr, "quotesync-demo: --timeout: must be positive, e.g. 60s")
		return 2
	}
	if o.serve < 0 {
		fmt.Fprintln(stderr, "quotesync-demo: --serve: must not be negative, e.g. 2m")
		return 2
	}
	if *serve {
		return serveMySQL(ctx, o.mysqlAddr, stdout, stderr)
	}
	return runDemo(ctx, o, stdout, stderr)
}
