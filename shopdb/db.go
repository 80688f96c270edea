package shopdb

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
	"github.com/quotesync/quotesync/shopdb/internal/server"
)

// DB is quotesync's handle on the shop database: its connection pool and
// the integrator's mapping of the shop's tables. It is safe for concurrent
// use. quotesync's own tables are package store's, on the same pool.
//
// A DB works for one insurer (see Insurer): the one Open returns for
// DefaultInsurer, the insurer of a lone remote: section, whose name the
// mapping's statements get as :insurer and whose work types its lines are
// read with. All the DBs of one Open share its pool and its caches.
type DB struct {
	*pool
	insurer   string            // the insurer whose rows this DB reads and writes
	workTypes map[string]string // the operation codes of its lines
	workKey   string            // where workTypes are configured, for messages
}

// pool is what the DBs of one Open share.
type pool struct {
	cfg Config
	x   *sqlx.DB
	q   queries
	lim bounds // cfg.Limits, ready
	// digest derives the markers estimate_state lacks (linedigest.go).
	digest lineDigest
	// linesPerJob is how many lines a job had in the last read of lines
	// (Lines, EachLines or its re-read), on average: the next read makes
	// each job's slice that big at once.
	linesPerJob atomic.Int64
	// linesApart: line_items returned a job's rows apart once; EachLines
	// then hands over every job at the statement's end, as Lines does,
	// instead of reading most jobs twice.
	linesApart atomic.Bool
}

// Open validates cfg, connects and pings. quotesync's own tables are
// store.New's, on the pool Open makes.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	if err := cfg.validateConnection(); err != nil {
		return nil, err
	}
	if err := cfg.Limits.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	qs, err := compileQueries(cfg)
	if err != nil {
		return nil, err
	}
	sdb, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	sdb.SetMaxOpenConns(cfg.MaxOpenConns)
	sdb.SetMaxIdleConns(cfg.MaxOpenConns)
	sdb.SetConnMaxLifetime(cfg.ConnMaxLifetime)
	sdb.SetConnMaxIdleTime(cfg.ConnMaxIdleTime)
	return &DB{pool: &pool{cfg: cfg, x: sqlx.NewDb(sdb, "mysql"), q: qs, lim: newBounds(cfg.Limits),
		digest: lineDigest{forms: digestForms[:], split: digestSplit}},
		insurer: DefaultInsurer, workTypes: cfg.WorkTypes, workKey: workTypesKey}, nil
}

// Connect connects to cfg's server with its connection settings alone (no
// mapping is needed: what `quotesync init` reads an unknown schema with)
// and checks the login, saying what to try when it fails. The pool holds
// two connections at most; closing it is the caller's.
func Connect(ctx context.Context, cfg Config) (*sql.DB, error) {
	if cfg.User == "" || cfg.Database == "" {
		return nil, fmt.Errorf("connect to %s: a user and a database are required", cfg)
	}
	sdb, err := connect(ctx, cfg.withDefaults())
	if err != nil {
		return nil, err
	}
	sdb.SetMaxOpenConns(2)
	return sdb, nil
}

// connect opens a pool on cfg (defaults applied), each connection's
// session set up (sessionInit), and pings it within cfg.QueryTimeout.
func connect(ctx context.Context, cfg Config) (*sql.DB, error) {
	mc := cfg.mysqlConfig()
	var err error
	if mc.TLS, err = cfg.tlsConfig(); err != nil {
		return nil, err
	}
	connector, err := mysql.NewConnector(mc)
	if err != nil {
		return nil, fmt.Errorf("configure driver for %s: %w", cfg, err)
	}
	if cfg.Connector != nil {
		connector = cfg.Connector.Wrap(connector)
	}
	sdb := sql.OpenDB(sessionConnector{connector})
	ctx, cancel := context.WithTimeout(ctx, cfg.QueryTimeout)
	defer cancel()
	if err := sdb.PingContext(ctx); err != nil {
		sdb.Close()
		return nil, fmt.Errorf("connect to %s: %w", cfg, explainConnect(err, cfg))
	}
	return sdb, nil
}

// Close closes the pool, which every DB of one Open shares.
func (db *DB) Close() error {
	return db.x.Close()
}

// Ping checks that the server answers.
func (db *DB) Ping(ctx context.Context) error {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	if err := db.x.PingContext(ctx); err != nil {
		return fmt.Errorf("connect to %s: %w", db.cfg, explainConnect(err, db.cfg))
	}
	return nil
}

// SQL is the connection pool, for quotesync's store (package store), whose
// tables live beside the shop's and whose transactions the mapping's
// statements join (Jobs, WriteBack).
func (db *DB) SQL() *sqlx.DB { return db.x }

// Config returns the configuration in use, defaults applied.
func (db *DB) Config() Config {
	return db.cfg
}

func (db *DB) timeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, db.cfg.QueryTimeout)
}

// mysqlErrno is the server's error number in err, 0 when none.
func mysqlErrno(err error) uint16 { return server.Errno(err) }

// normTime is t as it reads back from a DATETIME(6) column.
func normTime(t time.Time) time.Time { return server.Time(t) }

// now is the current time as stored.
func now() time.Time { return server.Now() }
