package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-sql-driver/mysql"
	"go.uber.org/zap"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	qsync "github.com/quotesync/quotesync/sync"
)

// Defaults of the demo's wiring.
const (
	// DefaultSchedule is the demo's pass schedule (production: "@every 1m"
	// or a cron spec).
	DefaultSchedule = "@every 1s"
	// DefaultRetryBackoffMin and DefaultRetryBackoffMax bound the engine's
	// wait before retrying a failed remote call (production: 1m and 1h),
	// so that a transient failure does not outlast the demo.
	DefaultRetryBackoffMin = time.Second
	DefaultRetryBackoffMax = 4 * time.Second
)

// stack is the demo's running parts: the embedded MySQL-compatible server
// holding the sample shop, the emulator of the insurer's API on a loopback
// listener, and quotesync assembled by qsync.Open from config.example.yaml
// (the mapping a user starts from) with the demo's addresses and token, the
// way `quotesync run` assembles it from a user's file.
type stack struct {
	mysqlAddr string
	stopMySQL func() error
	shopPool  *sql.DB          // the shop application's own connections
	shop      *sampleshop.Shop // plays the shop's part on shopPool
	schema    int              // state schema version after Migrate

	emu     *emulator.Emulator
	apiURL  string
	api     *http.Server
	apiDone chan struct{}

	daemon *qsync.Daemon
	db     *shopdb.DB // the daemon's connections
}

// stackOptions configures startStack.
type stackOptions struct {
	mysqlAddr string      // listen address of the embedded server
	schedule  string      // the engine's cron spec
	log       *zap.Logger // the daemon's logger
	observers []qsync.Observer
}

// demoTokenEnv is the variable the demo's configuration names for the
// token; the demo hands its value to the build, not to the environment.
const demoTokenEnv = "QUOTESYNC_DEMO_TOKEN"

// startStack starts and wires everything; on error it closes what it
// started.
func startStack(ctx context.Context, o stackOptions) (s *stack, err error) {
	s = &stack{}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Close())
			s = nil
		}
	}()
	dsn, stop, err := startMySQL(mysqlConfig{Addr: o.mysqlAddr})
	if err != nil {
		return s, fmt.Errorf("start the embedded mysql server: %w", err)
	}
	s.stopMySQL = stop
	mc, err := mysql.ParseDSN(dsn)
	if err != nil {
		return s, fmt.Errorf("parse the embedded server's dsn: %w", err)
	}
	s.mysqlAddr = mc.Addr

	// The shop application's side: its schema, its data, its own pool.
	if s.shopPool, err = sql.Open("mysql", dsn); err != nil {
		return s, fmt.Errorf("open the shop's pool: %w", err)
	}
	s.shopPool.SetMaxOpenConns(2)
	if err := sampleshop.Apply(ctx, s.shopPool); err != nil {
		return s, err
	}
	s.shop = sampleshop.New(s.shopPool)

	token, err := newToken()
	if err != nil {
		return s, err
	}
	if err := s.startAPI(token); err != nil {
		return s, err
	}
	set, err := demoSettings(mc, s.apiURL, token, o.schedule)
	if err != nil {
		return s, err
	}
	if s.daemon, err = qsync.Open(ctx, set, qsync.OpenOptions{Migrate: true, Log: o.log, Observers: o.observers}); err != nil {
		return s, err
	}
	s.db = s.daemon.DB
	if s.schema, _, err = s.db.SchemaVersion(ctx); err != nil {
		return s, fmt.Errorf("read the state schema version: %w", err)
	}
	return s, nil
}

// demoSettings loads config.example.yaml as a user's file is loaded, with
// the demo's database, emulator, token, a one-second schedule and short
// retry backoffs (production: 1m to 1h) so that a transient failure does
// not outlast the demo.
func demoSettings(mc *mysql.Config, apiURL, token, schedule string) (qsync.Settings, error) {
	fc, err := config.Parse(bytes.NewReader(config.Example))
	if err != nil {
		return qsync.Settings{}, fmt.Errorf("load the example configuration: %w", err)
	}
	fc.Remote.BaseURL = apiURL
	fc.Remote.Token = config.TokenSection{Env: demoTokenEnv}
	fc.Shop.Addr, fc.Shop.User, fc.Shop.Database = mc.Addr, mc.User, mc.DBName
	fc.Shop.PasswordFile, fc.Shop.PasswordEnv = "", ""
	fc.Sync.Schedule = schedule
	fc.Sync.RetryBackoffMin, fc.Sync.RetryBackoffMax = DefaultRetryBackoffMin, DefaultRetryBackoffMax
	getenv := func(k string) string {
		if k == demoTokenEnv {
			return token
		}
		return ""
	}
	set, err := fc.Build(config.BuildOptions{Getenv: getenv, Scope: config.AllSecrets, UserAgent: "quotesync-demo"})
	if err != nil {
		return qsync.Settings{}, fmt.Errorf("build the example configuration: %w", err)
	}
	set.Daemon.Shop.Password = mc.Passwd
	return set.Daemon, nil
}

// newToken returns a random bearer token for this run; it is never shown.
func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate the demo token: %w", err)
	}
	return "demo-" + hex.EncodeToString(b), nil
}

// startAPI serves the emulator on a free loopback port.
func (s *stack) startAPI(token string) error {
	emu, err := emulator.New(emulator.Options{Token: token, Seed: 1})
	if err != nil {
		return fmt.Errorf("start the emulator: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen for the emulator: %w", err)
	}
	s.emu = emu
	s.apiURL = "http://" + ln.Addr().String()
	s.api = &http.Server{Handler: emu, ReadHeaderTimeout: 10 * time.Second}
	s.apiDone = make(chan struct{})
	go func() {
		defer close(s.apiDone)
		_ = s.api.Serve(ln) // http.ErrServerClosed after Close
	}()
	return nil
}

// Close stops everything in reverse order of start; safe on a partial
// stack.
func (s *stack) Close() error {
	var errs []error
	if s.api != nil {
		errs = append(errs, s.api.Close())
		<-s.apiDone
	}
	if s.daemon != nil {
		errs = append(errs, s.daemon.Close())
	}
	if s.shopPool != nil {
		errs = append(errs, s.shopPool.Close())
	}
	if s.stopMySQL != nil {
		errs = append(errs, s.stopMySQL())
	}
	return errors.Join(errs...)
}
