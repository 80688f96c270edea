package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/go-sql-driver/mysql"
	"go.uber.org/zap"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// Defaults of the demo's wiring.
const (
	DefaultSchedule = "@every 1s"
	// DefaultRetryBackoffMin and DefaultRetryBackoffMax bound the engine's
	// wait before retrying a failed remote call (production: 1m and 1h),
	// so that a transient failure does not outlast the demo.
	DefaultRetryBackoffMin = time.Second
	DefaultRetryBackoffMax = 4 * time.Second
)

// stack is the demo's running parts: the embedded server holding the
// sample shop, one emulator per insurer, and quotesync assembled by
// qsync.Open from config.example.yaml (the mapping a user starts from)
// with the demo's addresses and credentials under remotes:.
type stack struct {
	mysqlAddr string
	stopMySQL func() error
	shopPool  *sql.DB          // the shop application's own connections
	shop      *sampleshop.Shop // plays the shop's part on shopPool
	schema    int              // state schema version after Migrate

	insurers []*insurerAPI // in the order of demoInsurers
	tmpDir   string        // holds harbour's token file; removed at Close

	daemon *qsync.Daemon
	db     *shopdb.DB   // the daemon's connections
	st     *store.Store // quotesync's store on them
}

func (s *stack) insurer(name string) *insurerAPI {
	return s.insurers[slices.IndexFunc(s.insurers, func(a *insurerAPI) bool { return a.name == name })]
}

func (s *stack) remoteStates() map[string]emulator.State {
	out := make(map[string]emulator.State, len(s.insurers))
	for _, a := range s.insurers {
		out[a.name] = a.emu.State()
	}
	return out
}

type stackOptions struct {
	mysqlAddr string // listen address of the embedded server
	schedule  string
	log       *zap.Logger
	observers []qsync.Observer
}

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

	if s.tmpDir, err = os.MkdirTemp("", "quotesync-demo-"); err != nil {
		return s, fmt.Errorf("make the demo's temporary directory: %w", err)
	}
	for _, spec := range demoInsurers() {
		// A random token (or client secret) for this run, never shown.
		a, err := startInsurer(spec, "demo-"+rand.Text(), s.tmpDir)
		if a != nil {
			s.insurers = append(s.insurers, a)
		}
		if err != nil {
			return s, err
		}
	}
	set, err := demoSettings(mc, s.insurers, o.schedule)
	if err != nil {
		return s, err
	}
	if s.daemon, err = qsync.Open(ctx, set, qsync.OpenOptions{Migrate: true, Log: o.log, Observers: o.observers}); err != nil {
		return s, err
	}
	s.db, s.st = s.daemon.Shop, s.daemon.Store
	if s.schema, _, err = s.st.SchemaVersion(ctx); err != nil {
		return s, fmt.Errorf("read the state schema version: %w", err)
	}
	return s, nil
}

// demoSettings loads config.example.yaml as a user's file is loaded, with
// the demo's database, its insurers under remotes: (each the example's
// remote: block with the insurer's emulator, credentials and status
// form), its schedule and short retry backoffs.
func demoSettings(mc *mysql.Config, apis []*insurerAPI, schedule string) (qsync.Settings, error) {
	fc, err := config.Parse(bytes.NewReader(config.Example))
	if err != nil {
		return qsync.Settings{}, fmt.Errorf("load the example configuration: %w", err)
	}
	var acmeSecret string
	for _, a := range apis {
		fc.Remotes = append(fc.Remotes, a.entry(fc.Remote))
		if a.name == insurerAcme {
			acmeSecret = a.secret
		}
	}
	fc.DropRemote() // remotes: replaces it
	fc.Shop.Addr, fc.Shop.User, fc.Shop.Database = mc.Addr, mc.User, mc.DBName
	fc.Shop.PasswordFile, fc.Shop.PasswordEnv = "", ""
	// The embedded server takes no row locks and keeps its
	// innodb_lock_wait_timeout global only: a session may not set it.
	fc.Shop.LockWait = -time.Second
	fc.Sync.Schedule = schedule
	fc.Sync.RetryBackoffMin, fc.Sync.RetryBackoffMax = DefaultRetryBackoffMin, DefaultRetryBackoffMax
	getenv := func(k string) string {
		if k == acmeSecretEnv {
			return acmeSecret
		}
		return ""
	}
	set, err := fc.Build(config.BuildOptions{Getenv: getenv, Scope: config.AllSecrets, UserAgent: "quotesync-demo"})
	if err != nil {
		return qsync.Settings{}, fmt.Errorf("build the example configuration: %w", err)
	}
	set.Daemon.Shop.Password = mc.Passwd
	set.Daemon.Shop.Connector = &shopdbtest.Trips{} // the summary says how many statements were sent
	for i, ins := range set.Daemon.Insurers {
		apis[i].status = ins.Remote.StatusMethod + " " + ins.Remote.StatusPath
		apis[i].tokenFrom = ins.TokenFrom
	}
	return set.Daemon, nil
}

// Close stops everything in reverse order of start; safe on a partial
// stack.
func (s *stack) Close() error {
	var errs []error
	for _, a := range s.insurers {
		errs = append(errs, a.close())
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
	if s.tmpDir != "" {
		errs = append(errs, os.RemoveAll(s.tmpDir))
	}
	return errors.Join(errs...)
}
