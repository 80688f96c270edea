package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
)

// Defaults of the emulator verb.
const (
	defaultEmulatorListen   = "127.0.0.1:8099"
	emulatorTokenEnv        = "QUOTESYNC_EMULATOR_TOKEN"
	emulatorShutdownTimeout = 5 * time.Second
)

// emulatorUsage is printed by 'quotesync emulator --help'.
const emulatorUsage = `Usage: quotesync emulator [flags]

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

Example:
  printf 'devtoken' > /tmp/emu.token
  quotesync emulator --listen 127.0.0.1:8099 --token-file /tmp/emu.token --seed-requests 3
  curl -H 'Authorization: Bearer devtoken' http://127.0.0.1:8099/integrations/repairer/requests

Flags:
`

// emulatorFlags are the parsed flags of the emulator verb.
type emulatorFlags struct {
	listen, token, tokenFile, state string
	mode, clientID                  string
	tokenTTL                        time.Duration
	seedRequests                    int
	seed                            uint64
	allowRemoteAdmin                bool
}

func runEmulator(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f emulatorFlags
	fs := flag.NewFlagSet("emulator", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), emulatorUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&f.listen, "listen", defaultEmulatorListen, "`address` to listen on (host:port; port 0 picks a free one)")
	fs.StringVar(&f.token, "token", "", "bearer `token` clients must send (prefer --token-file or $"+emulatorTokenEnv+")")
	fs.StringVar(&f.tokenFile, "token-file", "", "`file` holding the bearer token (surrounding whitespace is ignored)")
	fs.IntVar(&f.seedRequests, "seed-requests", 0, "add `N` random pending requests at start")
	fs.StringVar(&f.state, "state", "", "JSON `file` the state is loaded from and saved to after every change")
	fs.Uint64Var(&f.seed, "seed", 0, "random seed for --seed-requests and fault probabilities (0: from the clock)")
	fs.StringVar(&f.mode, "mode", emulator.ModeSpec, "`mode`: spec (the specification) or documented (the public documentation's service)")
	fs.StringVar(&f.clientID, "client-id", emulator.DefaultClientID, "OAuth2 client `id` of --mode documented (its secret is the token)")
	fs.DurationVar(&f.tokenTTL, "token-ttl", emulator.DefaultTokenTTL, "`lifetime` of the access tokens of --mode documented")
	fs.BoolVar(&f.allowRemoteAdmin, "allow-remote-admin", false, "let non-loopback clients use the unauthenticated admin API")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "quotesync emulator: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if f.seedRequests < 0 || f.seedRequests > emulator.MaxRandomRequests {
		fmt.Fprintf(stderr, "quotesync emulator: --seed-requests: must be 0 to %d\n", emulator.MaxRandomRequests)
		return exitUsage
	}
	if f.mode != emulator.ModeSpec && f.mode != emulator.ModeDocumented {
		fmt.Fprintf(stderr, "quotesync emulator: --mode %q: must be %s or %s\n", f.mode, emulator.ModeSpec, emulator.ModeDocumented)
		return exitUsage
	}
	if f.tokenTTL <= 0 {
		fmt.Fprintf(stderr, "quotesync emulator: --token-ttl: must be positive, e.g. 5m\n")
		return exitUsage
	}
	token, err := emulatorToken(f)
	if err != nil {
		fmt.Fprintf(stderr, "quotesync emulator: %v\n", err)
		return exitUsage
	}
	emu, err := emulator.New(emulator.Options{Token: token, StatePath: f.state, Seed: f.seed,
		AllowRemoteAdmin: f.allowRemoteAdmin, Mode: f.mode, ClientID: f.clientID, TokenTTL: f.tokenTTL})
	if err != nil {
		fmt.Fprintf(stderr, "quotesync emulator: %v\n", err)
		return exitFailure
	}
	if f.seedRequests > 0 {
		emu.AddRandomRequests(f.seedRequests)
	}
	return serveEmulator(ctx, emu, f.listen, stdout, stderr)
}

// emulatorToken resolves the token: --token-file, then --token, then the
// environment. The error never contains the token.
func emulatorToken(f emulatorFlags) (string, error) {
	if f.tokenFile != "" && f.token != "" {
		return "", errors.New("--token and --token-file: give one of them")
	}
	if f.tokenFile != "" {
		data, err := os.ReadFile(f.tokenFile)
		if err != nil {
			return "", fmt.Errorf("read token file: %w", err)
		}
		tok := strings.TrimSpace(string(data))
		if tok == "" {
			return "", fmt.Errorf("token file %s: empty", f.tokenFile)
		}
		return tok, nil
	}
	if f.token != "" {
		return f.token, nil
	}
	if tok := strings.TrimSpace(os.Getenv(emulatorTokenEnv)); tok != "" {
		return tok, nil
	}
	return "", fmt.Errorf("no token: set --token-file, $%s or --token", emulatorTokenEnv)
}

// serveEmulator serves emu on listen until ctx is cancelled, then shuts
// down gracefully (bounded by emulatorShutdownTimeout).
func serveEmulator(ctx context.Context, emu *emulator.Emulator, listen string, stdout, stderr io.Writer) int {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintf(stderr, "quotesync emulator: listen: %v\n", err)
		return exitFailure
	}
	srv := &http.Server{Handler: emu, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	addr := ln.Addr().String()
	fmt.Fprintf(stdout, "quotesync emulator listening on %s; base URL http://%s (API root http://%s%s, admin http://%s%s)\n",
		addr, addr, addr, emulator.APIPrefix, addr, emulator.AdminPrefix)
	if emu.Mode() == emulator.ModeDocumented {
		fmt.Fprintf(stdout, "quotesync emulator: documented mode; OAuth2 token URL http://%s%s\n", addr, emulator.TokenPath)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		fmt.Fprintf(stderr, "quotesync emulator: warning: listening beyond loopback; this is a test tool\n")
	}

	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "quotesync emulator: serve: %v\n", err)
		return exitFailure
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), emulatorShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		// Calls held by a land_then_hang fault: cut them.
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "quotesync emulator: serve: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "quotesync emulator stopped\n")
	return exitOK
}
