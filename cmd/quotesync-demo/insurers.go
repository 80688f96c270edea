package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/emulator"
)

// The demo's two insurers. Their names key their requests in quotesync's
// tables, as the names of remotes: do in a user's file.
const (
	insurerAcme    = "acme"
	insurerHarbour = "harbour"
)

// insurerSpec is how one of the demo's insurers serves its API, and so
// how its remotes: entry is written.
type insurerSpec struct {
	name string
	mode string // the emulator's
	// statusMethod and statusPath are its status change; "" keeps the
	// example's (the documented form, POST).
	statusMethod, statusPath string
}

// demoInsurers are the insurers the demo plays, in the order of its
// remotes:. acme is the service as documented, with the example's status
// form; harbour takes a bearer token from a file and a status form the
// documented service does not serve.
func demoInsurers() []insurerSpec {
	return []insurerSpec{
		{name: insurerAcme, mode: emulator.ModeDocumented},
		{name: insurerHarbour, mode: emulator.ModeSpec, statusMethod: http.MethodPut, statusPath: remote.StatusPathQuotesID},
	}
}

const (
	// acmeClientID is the OAuth2 client id the demo registers at acme.
	acmeClientID = "workshop-demo"
	// acmeSecretEnv is the variable acme's remotes: entry names for the
	// client secret; the demo hands its value to the build, not to the
	// environment.
	acmeSecretEnv = "QUOTESYNC_DEMO_ACME_SECRET"
	// acmeRedirectURI is the redirect_uri acme's token endpoint asks for,
	// as the documented flow does; nothing is ever sent to it.
	acmeRedirectURI = "http://127.0.0.1/quotesync-demo/callback"
	// harbourTokenFile holds harbour's token, in the demo's temporary
	// directory.
	harbourTokenFile = "harbour-token"
)

// insurerAPI is one insurer's emulator, served on a loopback listener.
type insurerAPI struct {
	insurerSpec
	emu     *emulator.Emulator
	url     string
	srv     *http.Server
	done    chan struct{}
	refused atomic.Int64 // API calls answered 401: a token this emulator does not know

	secret    string // the emulator's token (acme: the client secret); never shown
	tokenFile string // harbour: the file holding its token

	// What the built configuration says, for the setup lines: the status
	// change ("POST /jobs/{jobId}/quotes/status/{status}") and where the
	// token comes from (never the token).
	status, tokenFrom string
}

// startInsurer starts the emulator of spec on a free loopback port, with
// secret as its token (the client secret in the documented mode); dir is
// where a token file goes.
func startInsurer(spec insurerSpec, secret, dir string) (*insurerAPI, error) {
	opts := emulator.Options{Token: secret, Seed: 1, Mode: spec.mode}
	if spec.mode == emulator.ModeDocumented {
		opts.ClientID = acmeClientID
	}
	emu, err := emulator.New(opts)
	if err != nil {
		return nil, fmt.Errorf("start the emulator of insurer %s: %w", spec.name, err)
	}
	a := &insurerAPI{insurerSpec: spec, emu: emu, secret: secret}
	if spec.mode == emulator.ModeSpec {
		a.tokenFile = filepath.Join(dir, harbourTokenFile)
		if err := os.WriteFile(a.tokenFile, []byte(secret+"\n"), 0o600); err != nil {
			return nil, fmt.Errorf("write the token file of insurer %s: %w", spec.name, err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the emulator of insurer %s: %w", spec.name, err)
	}
	a.url = "http://" + ln.Addr().String()
	a.srv = &http.Server{Handler: a.countRefused(emu), ReadHeaderTimeout: 10 * time.Second}
	a.done = make(chan struct{})
	go func() {
		defer close(a.done)
		_ = a.srv.Serve(ln) // http.ErrServerClosed after Close
	}()
	return a, nil
}

// countRefused counts the answers 401 of h: none means every call
// carried the insurer's own credentials.
func (a *insurerAPI) countRefused(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if rec.status == http.StatusUnauthorized {
			a.refused.Add(1)
		}
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

// close stops the emulator's server; safe on nil.
func (a *insurerAPI) close() error {
	if a == nil || a.srv == nil {
		return nil
	}
	err := a.srv.Close()
	<-a.done
	return err
}

// entry is the insurer's remotes: entry: the example's remote: block
// with the insurer's address, token and status form.
func (a *insurerAPI) entry(example config.RemoteSection) config.RemoteEntry {
	e := config.RemoteEntry{Name: a.name, RemoteSection: example}
	e.BaseURL = a.url
	if a.tokenFile != "" {
		e.Token = config.TokenSection{File: a.tokenFile}
	} else {
		e.Token = config.TokenSection{OAuth2: &config.OAuth2Section{
			TokenURL:        a.url + emulator.TokenPath,
			ClientID:        acmeClientID,
			ClientSecretEnv: acmeSecretEnv,
			EndpointParams:  map[string]string{"redirect_uri": acmeRedirectURI},
		}}
	}
	if a.statusPath != "" {
		e.StatusMethod, e.StatusPath = a.statusMethod, a.statusPath
	}
	return e
}
