package shopdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
)

// DB is quotesync's handle on the shop database: the mapping queries, the
// daemon's own state tables and the single-instance lock. It is safe for
// concurrent use.
//
// A DB works on the rows of one insurer (see Insurer): the one Open
// returns on DefaultInsurer's, the insurer of a lone remote: section.
// Every read and write of a request's row, its events and the mapping's
// job statements (:insurer) are that insurer's; the reads that list
// (ListRequests, PhaseCounts, the status page's), JobHolder and the
// outbox see every insurer's. All the DBs of one Open share its pool, its
// caches and its lock.
type DB struct {
	*pool
	insurer   string            // the insurer whose rows this DB reads and writes
	workTypes map[string]string // the operation codes of its lines
	workKey   string            // where workTypes are configured, for messages
	// openRows is how many rows this insurer's last OpenRequests read,
	// to size the next one's slice at once.
	openRows atomic.Int64
}

// pool is what the DBs of one Open share.
type pool struct {
	cfg   Config
	x     *sqlx.DB
	trips *atomic.Int64
	q     queries
	t     tables
	lim   bounds // cfg.Limits, ready; see limits
	// lineHint is what the last LineTexts read per job (lineHint), to
	// size the next one's buffers at once.
	lineHint lineHint
	// digest derives change markers when estimate_state has none
	// (linedigest.go).
	digest lineDigest
	// beforeCommit, when set (by tests), runs inside InTx's transaction
	// just before COMMIT.
	beforeCommit func(ctx context.Context, tx *sqlx.Tx) error
	// markerSQL is UpdateMarkers' statement (markerSQL); markerBytes the
	// most bytes one may have, 0 until the server is asked (see
	// markerAskBytes); markerCase is set once the server has refused
	// markerSQL's syntax.
	markerSQL   string
	markerBytes atomic.Int64
	markerCase  atomic.Bool
}

// tables are the quoted names of quotesync's own tables.
type tables struct {
	requests, events, schema, settings string
	outbox                             string
}

func newTables(prefix string) tables {
	return tables{
		requests: "`" + prefix + "requests`",
		events:   "`" + prefix + "events`",
		schema:   "`" + prefix + "schema`",
		settings: "`" + prefix + "settings`",
		outbox:   "`" + prefix + "outbox`",
	}
}

// Open validates cfg, connects and pings. It does not migrate: call
// Migrate (or check SchemaVersion) before using the state tables.
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
	mc := cfg.mysqlConfig()
	if mc.TLS, err = cfg.tlsConfig(); err != nil {
		return nil, err
	}
	connector, err := mysql.NewConnector(mc)
	if err != nil {
		return nil, fmt.Errorf("configure driver for %s: %w", cfg, err)
	}
	trips := new(atomic.Int64)
	sdb := sql.OpenDB(&countingConnector{inner: connector, n: trips})
	sdb.SetMaxOpenConns(cfg.MaxOpenConns)
	sdb.SetMaxIdleConns(cfg.MaxOpenConns)
	sdb.SetConnMaxLifetime(cfg.ConnMaxLifetime)
	sdb.SetConnMaxIdleTime(cfg.ConnMaxIdleTime)
	db := &DB{pool: &pool{cfg: cfg, x: sqlx.NewDb(sdb, "mysql"), trips: trips, q: qs, t: newTables(cfg.TablePrefix), lim: newBounds(cfg.Limits)},
		insurer: DefaultInsurer, workTypes: cfg.WorkTypes, workKey: workTypesKey}
	db.markerSQL = markerSQL(db.t.requests)
	if err := db.Ping(ctx); err != nil {
		sdb.Close()
		return nil, err
	}
	return db, nil
}

// Close closes the connection pool, which every DB of the same Open
// shares.
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

// RoundTrips is the number of commands sent to the server that waited for
// its answer (statements, BEGIN/COMMIT/ROLLBACK, pings, the per-connection
// session set-up) since Open.
func (db *DB) RoundTrips() int64 {
	return db.trips.Load()
}

// Config returns the configuration in use, defaults applied.
func (db *DB) Config() Config {
	return db.cfg
}

func (db *DB) timeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, db.cfg.QueryTimeout)
}

// inTx runs f in a transaction and commits; any error rolls back.
func (db *DB) inTx(ctx context.Context, f func(tx *sqlx.Tx) error) error {
	tx, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// MySQL error numbers quotesync branches on.
const (
	errDupEntry     = 1062 // ER_DUP_ENTRY
	errNoSuchTable  = 1146 // ER_NO_SUCH_TABLE
	errTableExists  = 1050 // ER_TABLE_EXISTS_ERROR
	errDupFieldName = 1060 // ER_DUP_FIELDNAME
	errDupKeyName   = 1061 // ER_DUP_KEYNAME
	errCantDropKey  = 1091 // ER_CANT_DROP_FIELD_OR_KEY
	errReadOnlyTx   = 1792 // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
)

// mysqlErrno is the server's error number in err, 0 when none.
func mysqlErrno(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// dupKey returns the key a duplicate-entry error (1062) names in the form
// MySQL and MariaDB document, "Duplicate entry '<entry>' for key '<key>'"
// (MySQL 8 writes "<table>.<key>"); ok is false for another error or form.
// The entry is data and may hold "' for key '" itself: the key is the
// message's last quoted part.
func dupKey(err error) (key string, ok bool) {
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != errDupEntry {
		return "", false
	}
	const head, sep = "Duplicate entry '", "' for key '"
	msg := me.Message
	i := strings.LastIndex(msg, sep)
	if !strings.HasPrefix(msg, head) || i < len(head) || !strings.HasSuffix(msg, "'") || len(msg) < i+len(sep)+1 {
		return "", false
	}
	key = msg[i+len(sep) : len(msg)-1]
	if j := strings.LastIndexByte(key, '.'); j >= 0 {
		key = key[j+1:]
	}
	return key, key != ""
}

// MaxTextLen caps last_error and event messages (bytes): what the state
// tables keep of a text, and what the reconciler keeps of one anywhere.
const MaxTextLen = 4000

// CapText cuts s to at most MaxTextLen bytes on rune boundaries: it keeps
// the beginning (which names the request, job or call) and the end (an
// error's wrapped cause, the decisive part), and says how much of the
// middle went.
func CapText(s string) string { return capText(s) }

// keepText is s as the state tables keep it: the secrets of
// Config.Redact removed, cut to MaxTextLen.
func (db *DB) keepText(s string) string {
	if db.cfg.Redact != nil {
		s = db.cfg.Redact.Redact(s)
	}
	return capText(s)
}

// capHead is how much of the beginning capText keeps; the end gets the rest.
const capHead = 1000

// capText cuts s to at most MaxTextLen bytes; see CapText.
func capText(s string) string {
	if len(s) <= MaxTextLen {
		return s
	}
	head := capHead
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	// The marker's length depends on the number in it; reserve room for
	// the largest one a string can need.
	tail := len(s) - (MaxTextLen - head - len(fmt.Sprintf(" … [%d bytes cut] … ", len(s))))
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + fmt.Sprintf(" … [%d bytes cut] … ", tail-head) + s[tail:]
}

// dbTime is t as stored: UTC, microseconds; nil (NULL) for the zero time.
func dbTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return normTime(t)
}

// normTime is t as it reads back from a DATETIME(6) column.
func normTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

// now is the current time as stored.
func now() time.Time { return normTime(time.Now()) }
