package main

import (
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
	"github.com/shopspring/decimal"
	"go.uber.org/zap"

	"github.com/quotesync/quotesync/remote"
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
// holding the sample shop, the daemon's real shop adapter on it, the
// emulator of the insurer's API on a loopback listener, and the daemon's
// real remote client and engine wired as `quotesync run` wires them.
type stack struct {
	mysqlAddr string
	stopMySQL func() error
	shopPool  *sql.DB          // the shop application's own connections
	shop      *sampleshop.Shop // plays the shop's part on shopPool
	db        *shopdb.DB       // quotesync's connections
	schema    int              // state schema version after Migrate

	emu     *emulator.Emulator
	apiURL  string
	api     *http.Server
	apiDone chan struct{}

	client *remote.Client
	engine *qsync.Engine
}

// stackOptions configures startStack.
type stackOptions struct {
	mysqlAddr string      // listen address of the embedded server
	schedule  string      // the engine's cron spec
	log       *zap.Logger // the daemon's logger
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

	// quotesync's side, as cmd/quotesync builds it from the YAML file.
	cfg := sampleshop.Mapping()
	cfg.Addr, cfg.User, cfg.Password, cfg.Database = mc.Addr, mc.User, mc.Passwd, mc.DBName
	driverLog := o.log.Named("mysql")
	cfg.DriverLog = func(msg string) { driverLog.Warn("mysql driver", zap.String("detail", msg)) }
	if s.db, err = shopdb.Open(ctx, cfg); err != nil {
		return s, fmt.Errorf("connect to the shop database: %w", err)
	}
	if err := s.db.Migrate(ctx); err != nil {
		return s, fmt.Errorf("migrate quotesync's state tables: %w", err)
	}
	if s.schema, _, err = s.db.SchemaVersion(ctx); err != nil {
		return s, fmt.Errorf("read the state schema version: %w", err)
	}

	token, err := newToken()
	if err != nil {
		return s, err
	}
	if err := s.startAPI(token); err != nil {
		return s, err
	}
	// Production defaults (timeouts, retries, rate limit 10/s) except the
	// base URL and the token.
	if s.client, err = remote.New(remote.Config{BaseURL: s.apiURL, UserAgent: "quotesync-demo"}, remote.StaticToken(token)); err != nil {
		return s, fmt.Errorf("remote: %w", err)
	}
	sc := qsync.DefaultConfig()
	sc.Schedule = o.schedule
	sc.RetryBackoffMin, sc.RetryBackoffMax = DefaultRetryBackoffMin, DefaultRetryBackoffMax
	sc.Quote.Rates = demoRates()
	if s.engine, err = qsync.New(sc, s.client, s.db, o.log.Named("sync")); err != nil {
		return s, err
	}
	return s, nil
}

// demoRates are the labour rates of config.example.yaml.
func demoRates() map[string]decimal.Decimal {
	return map[string]decimal.Decimal{
		"RemoveReplaceLabour": decimal.RequireFromString("95.50"),
		"RepairLabour":        decimal.RequireFromString("95.50"),
		"RefinishLabour":      decimal.RequireFromString("88.00"),
		"MechanicalLabour":    decimal.RequireFromString("120.00"),
	}
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

// lockFunc adapts the shop database's single-instance lock to the
// scheduler, as `quotesync run` does.
func (s *stack) lockFunc() qsync.LockFunc {
	return func(ctx context.Context) (qsync.Lease, error) {
		l, err := s.db.AcquireLock(ctx)
		if err != nil {
			return nil, err
		}
		return l, nil
	}
}

// Close stops everything in reverse order of start; safe on a partial
// stack.
func (s *stack) Close() error {
	var errs []error
	if s.api != nil {
		errs = append(errs, s.api.Close())
		<-s.apiDone
	}
	if s.db != nil {
		errs = append(errs, s.db.Close())
	}
	if s.shopPool != nil {
		errs = append(errs, s.shopPool.Close())
	}
	if s.stopMySQL != nil {
		errs = append(errs, s.stopMySQL())
	}
	return errors.Join(errs...)
}
