// Command quotesync-emulator serves the in-memory emulator of the
// insurer's integration service (remote/emulator) over HTTP, one or
// several instances, for integrators and tests. It is a program of its own
// so that the daemon, bin/quotesync, does not carry a test tool.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
)

const (
	exitOK      = 0 // served until interrupted
	exitFailure = 1 // an emulator could not be created, listen or serve
	exitUsage   = 2 // bad command line

	defaultEmulatorListen   = "127.0.0.1:8099"
	emulatorTokenEnv        = "QUOTESYNC_EMULATOR_TOKEN"
	emulatorShutdownTimeout = 5 * time.Second
)

const emulatorUsage = `Usage: quotesync-emulator [flags]

Serve the in-memory emulator of the Repairer Quotation Integration Service
(the API under /integrations/repairer, the admin API under /_emulator/)
until interrupted (SIGINT/SIGTERM). It is a test tool: do not expose it.

The bearer token comes from --token-file, else --token, else
$` + emulatorTokenEnv + `. Prefer the file or the environment: a literal
--token is visible in the process list.

--mode spec (the default) follows the specification the integrator was
given; --mode documented behaves as the service's public documentation
describes it: OAuth2 client credentials at /oauth2/token (client id
--client-id, client secret the token above, redirect_uri required, tokens
lasting --token-ttl), string request ids, claimNumber, local expiry,
plain-text errors, "400 request already accepted", only the documented
status forms and item types.

Several instances, one per insurer, each on its own port with its own
state: repeat --instance instead of --listen, --token-file, --mode,
--client-id, --token-ttl, --seed-requests and --state (--seed and
--allow-remote-admin apply to every instance). An instance is a
comma-separated list of key=value:

  name=NAME           required; letters, digits, - and _; names it in the output
  listen=HOST:PORT    required; port 0 picks a free one
  mode=MODE           spec (the default) or documented
  token-file=FILE     the bearer token, or the OAuth2 client secret
  token-env=VAR       ... or from this environment variable
                      (neither: $` + emulatorTokenEnv + `; a literal token is refused)
  client-id=ID        mode=documented only; default as --client-id
  token-ttl=DURATION  mode=documented only; default as --token-ttl
  seed-requests=N     add N random pending requests at start
  state=FILE          JSON file the instance's state is kept in

Each instance is a separate emulator with its own state: both number
their requests from 1001, and accepting 1001 at one leaves it pending at
the other.

Exit status: 0 stopped by SIGINT or SIGTERM, 1 an emulator could not
listen or serve, 2 bad command line.

Example:
  printf 'devtoken' > /tmp/emu.token
  quotesync-emulator --listen 127.0.0.1:8099 --token-file /tmp/emu.token --seed-requests 3
  curl -H 'Authorization: Bearer devtoken' http://127.0.0.1:8099/integrations/repairer/requests

Two insurers:
  quotesync-emulator \
    --instance 'name=aa,listen=127.0.0.1:8099,token-file=/tmp/emu.token,seed-requests=3' \
    --instance 'name=bb,listen=127.0.0.1:8098,mode=documented,token-file=/tmp/emu.token,seed-requests=3'

Flags:
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runEmulator(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func runEmulator(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var single emulatorInstance // the single-instance flags
	var token, tokenFile string
	var seed uint64
	var allowRemoteAdmin bool
	var specs listFlag
	fs := flag.NewFlagSet("quotesync-emulator", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), emulatorUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&single.listen, "listen", defaultEmulatorListen, "`address` to listen on (host:port; port 0 picks a free one)")
	fs.StringVar(&token, "token", "", "bearer `token` clients must send (prefer --token-file or $"+emulatorTokenEnv+")")
	fs.StringVar(&tokenFile, "token-file", "", "`file` holding the bearer token (surrounding whitespace is ignored)")
	fs.IntVar(&single.seedRequests, "seed-requests", 0, "add `N` random pending requests at start")
	fs.StringVar(&single.state, "state", "", "JSON `file` the state is loaded from and saved to after every change")
	fs.Uint64Var(&seed, "seed", 0, "random seed for --seed-requests and fault probabilities (0: from the clock)")
	fs.StringVar(&single.mode, "mode", emulator.ModeSpec, "`mode`: spec (the specification) or documented (the public documentation's service)")
	fs.StringVar(&single.clientID, "client-id", emulator.DefaultClientID, "OAuth2 client `id` of --mode documented (its secret is the token)")
	fs.DurationVar(&single.tokenTTL, "token-ttl", emulator.DefaultTokenTTL, "`lifetime` of the access tokens of --mode documented")
	fs.BoolVar(&allowRemoteAdmin, "allow-remote-admin", false, "let non-loopback clients use the unauthenticated admin API")
	fs.Var(&specs, "instance", "serve one emulator `instance`: name=NAME,listen=HOST:PORT,... (repeatable; see above)")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	var insts []emulatorInstance
	var err error
	if len(specs) > 0 {
		insts, err = instancesFromSpecs(fs, specs)
	} else {
		err = checkSingle(&single, token, tokenFile)
		insts = []emulatorInstance{single}
	}
	if err != nil {
		fmt.Fprintf(stderr, "quotesync-emulator: %v\n", err)
		return exitUsage
	}
	for i, in := range insts {
		emu, err := emulator.New(emulator.Options{Token: in.token, StatePath: in.state, Seed: seed,
			AllowRemoteAdmin: allowRemoteAdmin, Mode: in.mode, ClientID: in.clientID, TokenTTL: in.tokenTTL})
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", in.label(), err)
			return exitFailure
		}
		if in.seedRequests > 0 {
			emu.AddRandomRequests(in.seedRequests)
		}
		insts[i].emu = emu
	}
	return serveEmulators(ctx, insts, stdout, stderr)
}

// checkSingle checks the single-instance flags and resolves the token
// (--token-file, --token, the environment); no error contains it.
func checkSingle(in *emulatorInstance, token, tokenFile string) error {
	switch {
	case in.seedRequests < 0 || in.seedRequests > emulator.MaxRandomRequests:
		return fmt.Errorf("--seed-requests: must be 0 to %d", emulator.MaxRandomRequests)
	case in.mode != emulator.ModeSpec && in.mode != emulator.ModeDocumented:
		return fmt.Errorf("--mode %q: must be %s or %s", in.mode, emulator.ModeSpec, emulator.ModeDocumented)
	case in.tokenTTL <= 0:
		return errors.New("--token-ttl: must be positive, e.g. 5m")
	case tokenFile != "" && token != "":
		return errors.New("--token and --token-file: give one of them")
	case tokenFile != "":
		var err error
		in.token, err = readEmulatorToken(tokenFile)
		return err
	}
	in.token = cmp.Or(token, strings.TrimSpace(os.Getenv(emulatorTokenEnv)))
	if in.token == "" {
		return fmt.Errorf("no token: set --token-file, $%s or --token", emulatorTokenEnv)
	}
	return nil
}

func readEmulatorToken(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read token file: %w", err)
	}
	tok := strings.TrimSpace(string(data))
	if tok == "" {
		return "", fmt.Errorf("token file %s: empty", path)
	}
	return tok, nil
}

// serveEmulators serves every emulator on its own listener until ctx is
// cancelled or one of them fails, then shuts them all down gracefully
// (bounded by emulatorShutdownTimeout).
func serveEmulators(ctx context.Context, list []emulatorInstance, stdout, stderr io.Writer) int {
	lns := make([]net.Listener, 0, len(list))
	for _, s := range list {
		ln, err := net.Listen("tcp", s.listen)
		if err != nil {
			for _, l := range lns {
				_ = l.Close()
			}
			fmt.Fprintf(stderr, "%s: listen: %v\n", s.label(), err)
			return exitFailure
		}
		lns = append(lns, ln)
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	srvs := make([]*http.Server, len(list))
	errs := make(chan error, len(list))
	for i, s := range list {
		srvs[i] = &http.Server{Handler: s.emu, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			errs <- fmt.Errorf("%s: serve: %w", s.label(), srvs[i].Serve(lns[i]))
			stop() // one failed: stop them all
		}()
		announceEmulator(s, lns[i].Addr(), stdout, stderr)
	}
	<-ctx.Done()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), emulatorShutdownTimeout)
	defer cancel()
	for _, srv := range srvs {
		if err := srv.Shutdown(shutdownCtx); err != nil {
			// Calls held by a land_then_hang fault: cut them.
			_ = srv.Close()
		}
	}
	code := exitOK
	for range list {
		if err := <-errs; !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(stderr, err)
			code = exitFailure
		}
	}
	if code == exitOK {
		fmt.Fprintf(stdout, "quotesync-emulator stopped\n")
	}
	return code
}

// announceEmulator prints where s serves, and in which mode when named
// (an --instance).
func announceEmulator(s emulatorInstance, a net.Addr, stdout, stderr io.Writer) {
	addr, label := a.String(), s.label()
	mode := ""
	if s.name != "" {
		mode = " (mode " + s.emu.Mode() + ")"
	}
	fmt.Fprintf(stdout, "%s listening on %s%s; base URL http://%s (API root http://%s%s, admin http://%s%s)\n",
		label, addr, mode, addr, addr, emulator.APIPrefix, addr, emulator.AdminPrefix)
	if s.emu.Mode() == emulator.ModeDocumented {
		fmt.Fprintf(stdout, "%s: documented mode; OAuth2 token URL http://%s%s\n", label, addr, emulator.TokenPath)
	}
	if tcp, ok := a.(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		fmt.Fprintf(stderr, "%s: warning: listening beyond loopback; this is a test tool\n", label)
	}
}

// parseFlags parses the flags; it returns the exit code to use when the
// program should stop (help asked for, to standard output, or bad flags,
// to standard error, as quotesync's verbs do).
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (int, bool) {
	fs.SetOutput(stderr)
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(stdout)
			fs.Usage()
			return exitOK, false
		}
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "quotesync-emulator: unexpected argument %q; run 'quotesync-emulator --help'\n", fs.Arg(0))
		return exitUsage, false
	}
	return 0, true
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }
