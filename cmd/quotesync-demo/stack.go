package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/statuspage"
	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// Defaults of the demo's wiring.
const (
	DefaultSchedule = "@every 1s"
	// DefaultPageAddr is where the demo serves the status page: loopback,
	// a free port.
	DefaultPageAddr = "127.0.0.1:0"
)

// The demo's two insurers. Their names key their requests in quotesync's
// tables, as the names of remotes: do in a user's file. acme is the
// service as documented (OAuth2, the example's status form); harbour
// takes a bearer token from a file and a status form the documented
// service does not serve.
const (
	insurerAcme    = "acme"
	insurerHarbour = "harbour"
	// acmeSecretEnv is the variable acme's remotes: entry names for the
	// client secret; the demo hands its value to the build, not to the
	// environment.
	acmeSecretEnv = "QUOTESYNC_DEMO_ACME_SECRET"
)

// stack is the demo's running parts: the embedded server holding the
// sample shop, one emulator per insurer, and quotesync assembled by
// qsync.Open from config.example.yaml (the mapping a user starts from)
// with the demo's addresses and credentials under remotes:.
type stack struct {
	mysqlAddr string
	shopPool  *sql.DB          // the shop application's own connections
	shop      *sampleshop.Shop // plays the shop's part on shopPool
	schema    int              // state schema version after Migrate
	insurers  []*insurerAPI    // acme, harbour: the order of remotes:
	daemon    *qsync.Daemon
	pageURL   string         // the daemon's status page
	closers   []func() error // what Close undoes, in order of start
}

// insurerAPI is one insurer's emulator, served on loopback.
type insurerAPI struct {
	name, mode string
	emu        *emulator.Emulator
	srv        *httptest.Server
	refused    atomic.Int64  // API calls answered 401: a token this emulator does not know
	built      qsync.Insurer // what the configuration built, for the setup lines
}

func (s *stack) insurer(name string) *insurerAPI {
	return s.insurers[slices.IndexFunc(s.insurers, func(a *insurerAPI) bool { return a.name == name })]
}

// startStack starts and wires everything, the timeline observing the
// daemon; on error it closes what it started.
func startStack(ctx context.Context, o demoOptions, log *zap.Logger, tl *timeline) (s *stack, err error) {
	s = &stack{}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Close())
			s = nil
		}
	}()
	mc, stopMySQL, pool, err := startShop(ctx, o.mysqlAddr)
	if err != nil {
		return s, err
	}
	s.shopPool, s.shop = pool, sampleshop.New(pool)
	s.closers = append(s.closers, stopMySQL, pool.Close)
	s.mysqlAddr = mc.Addr
	// The directory holds harbour's token file.
	tmpDir, err := os.MkdirTemp("", "quotesync-demo-")
	if err != nil {
		return s, fmt.Errorf("make the demo's temporary directory: %w", err)
	}
	s.closers = append(s.closers, func() error { return os.RemoveAll(tmpDir) })
	// config.example.yaml, as a user's file is loaded, with the demo's
	// database, schedule and short retry backoffs, and its remote: block
	// made into one remotes: entry per insurer with the insurer's
	// emulator, credentials and status form.
	fc, err := config.Parse(bytes.NewReader(config.Example))
	if err != nil {
		return s, fmt.Errorf("load the example configuration: %w", err)
	}
	env := make(map[string]string) // what the build reads as the environment
	for _, a := range []*insurerAPI{{name: insurerAcme, mode: emulator.ModeDocumented}, {name: insurerHarbour, mode: emulator.ModeSpec}} {
		secret := "demo-" + rand.Text() // a random token (or client secret) for this run, never shown
		opts := emulator.Options{Token: secret, Seed: 1, Mode: a.mode, ClientID: "workshop-demo"}
		if a.emu, err = emulator.New(opts); err != nil {
			return s, fmt.Errorf("start the emulator of insurer %s: %w", a.name, err)
		}
		a.srv = httptest.NewServer(a.emu)
		s.closers = append(s.closers, func() error { a.srv.Close(); return nil })
		s.insurers = append(s.insurers, a)
		e := config.RemoteEntry{Name: a.name, RemoteSection: fc.Remote}
		e.BaseURL = a.srv.URL
		if a.mode == emulator.ModeDocumented {
			env[acmeSecretEnv] = secret
			// The redirect_uri is asked for by acme's token endpoint, as the
			// documented flow does; nothing is ever sent to it.
			e.Token = config.TokenSection{OAuth2: &config.OAuth2Section{TokenURL: a.srv.URL + emulator.TokenPath,
				ClientID: opts.ClientID, ClientSecretEnv: acmeSecretEnv,
				EndpointParams: map[string]string{"redirect_uri": "http://127.0.0.1/quotesync-demo/callback"}}}
		} else {
			e.Token = config.TokenSection{File: filepath.Join(tmpDir, "harbour-token")}
			if err := os.WriteFile(e.Token.File, []byte(secret+"\n"), 0o600); err != nil {
				return s, fmt.Errorf("write the token file of insurer %s: %w", a.name, err)
			}
			e.StatusMethod, e.StatusPath = http.MethodPut, remote.StatusPathQuotesID
		}
		fc.Remotes = append(fc.Remotes, e)
	}
	fc.DropRemote() // remotes: replaces it
	fc.Shop.Addr, fc.Shop.User, fc.Shop.Database = mc.Addr, mc.User, mc.DBName
	fc.Shop.PasswordFile, fc.Shop.PasswordEnv = "", ""
	// The embedded server takes no row locks and keeps its
	// innodb_lock_wait_timeout global only: a session may not set it.
	fc.Shop.LockWait = -time.Second
	fc.Sync.Schedule = DefaultSchedule
	// The engine's wait before retrying a failed remote call (production:
	// 1m to 1h), short so that a transient failure does not outlast the demo.
	fc.Sync.RetryBackoffMin, fc.Sync.RetryBackoffMax = time.Second, 4*time.Second
	getenv := func(k string) string { return env[k] }
	set, err := fc.Build(config.BuildOptions{Getenv: getenv, Scope: config.AllSecrets, UserAgent: "quotesync-demo"})
	if err != nil {
		return s, fmt.Errorf("build the example configuration: %w", err)
	}
	set.Daemon.Shop.Password = mc.Passwd
	set.Daemon.Shop.Connector = &shopdbtest.Trips{}   // the summary says how many statements were sent
	names := make([]string, len(set.Daemon.Insurers)) // for the status page
	for i, ins := range set.Daemon.Insurers {
		s.insurers[i].built, names[i] = ins, ins.Name
	}
	opts := qsync.OpenOptions{Migrate: true, Log: log, Observers: []qsync.Observer{tl},
		ObserveCall: func(insurer string, ci remote.CallInfo) {
			if ci.Status == http.StatusUnauthorized {
				s.insurer(insurer).refused.Add(1)
			}
		}}
	if s.daemon, err = qsync.Open(ctx, set.Daemon, opts); err != nil {
		return s, err
	}
	s.closers = append(s.closers, s.daemon.Close)
	if s.schema, _, err = s.daemon.Store.SchemaVersion(ctx); err != nil {
		return s, fmt.Errorf("read the state schema version: %w", err)
	}
	seedRequests(s, time.Now())

	// The daemon's status page over the demo's database, as `quotesync run`
	// serves it on its listener.
	ln, err := net.Listen("tcp", o.pageAddr)
	if err != nil {
		return s, fmt.Errorf("status page: listen on %s: %w", o.pageAddr, err)
	}
	h := statuspage.New(statuspage.Options{Store: func() *store.Store { return s.daemon.Store },
		Insurers: func() []string { return names }, Refresh: 5 * time.Second, Version: "demo"})
	page := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	page.Start()
	s.pageURL = page.URL + "/status"
	s.closers = append(s.closers, func() error { page.Close(); return nil })
	return s, nil
}

// Close stops everything in reverse order of start; safe on a partial
// stack.
func (s *stack) Close() error {
	var errs []error
	for _, c := range slices.Backward(s.closers) {
		errs = append(errs, c())
	}
	return errors.Join(errs...)
}
