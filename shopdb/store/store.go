package store

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

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/internal/server"
)

// Store is quotesync's own tables in the shop's database. It is safe for
// concurrent use.
//
// A Store works on the rows of one insurer (see Insurer): the one New
// returns on shopdb.DefaultInsurer's, the insurer of a lone remote:
// section. Every read and write of a request's row and its events, and
// the change markers, are that insurer's; the reads that list
// (ListRequests, PhaseCounts, the status page's), JobHolder,
// RequestsByID and the outbox see every insurer's. All the Stores of one
// New share its pool, its statements' state and the test hooks.
type Store struct {
	*shared
	insurer string // the insurer whose rows this Store reads and writes
	// openRows is how many rows this insurer's last OpenRequests read,
	// to size the next one's slice at once.
	openRows atomic.Int64
}

// shared is what the Stores of one New share.
type shared struct {
	db  *shopdb.DB // the connection and the mapping's configuration
	cfg shopdb.Config
	x   *sqlx.DB
	t   tables
	// beforeCommit, when set (by tests), runs inside InTx's and Deliver's
	// transactions just before COMMIT.
	beforeCommit func(ctx context.Context, tx *sqlx.Tx) error
	// markerSQL is UpdateMarkers' statement (markerStatement); markerBytes the
	// most bytes one may have, 0 until the server is asked (see
	// markerAskBytes); markerCase is set once the server has refused
	// markerSQL's syntax.
	markerSQL   string
	markerBytes atomic.Int64
	markerCase  atomic.Bool
}

// tables are the quoted names of quotesync's own tables.
type tables struct{ requests, events, schema, settings, outbox string }

func newTables(prefix string) tables {
	q := func(name string) string { return "`" + prefix + name + "`" }
	return tables{q("requests"), q("events"), q("schema"), q("settings"), q("outbox")}
}

// New returns quotesync's store on db's connection pool (shop.table_prefix
// names its tables), working on shopdb.DefaultInsurer's rows. It reads
// nothing: call Migrate (or check SchemaVersion) before using the tables.
func New(db *shopdb.DB) *Store {
	cfg := db.Config()
	st := &Store{shared: &shared{db: db, cfg: cfg, x: db.SQL(), t: newTables(cfg.TablePrefix)}, insurer: shopdb.DefaultInsurer}
	st.markerSQL = st.markerStatement()
	return st
}

// Insurer returns a Store that works on the rows of the insurer name, on
// the same pool. Nothing is read or checked: a name that does not pass
// CheckInsurerName simply matches no row.
func (st *Store) Insurer(name string) *Store {
	return &Store{shared: st.shared, insurer: name}
}

// InsurerName is the name of the insurer whose rows st works on.
func (st *Store) InsurerName() string { return st.insurer }

func (st *Store) timeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, st.cfg.QueryTimeout)
}

// inTx runs f in a transaction and commits; any error rolls back.
func (st *Store) inTx(ctx context.Context, f func(tx *sqlx.Tx) error) error {
	tx, err := st.x.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return wrapf(tx.Commit(), "commit")
}

// queryer is what the store's statements run on: the pool or a transaction.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// mysqlErrno is the server's error number in err, 0 when none.
func mysqlErrno(err error) uint16 { return server.Errno(err) }

// dupKey returns the key a duplicate-entry error (1062) names in the form
// MySQL and MariaDB document, "Duplicate entry '<entry>' for key '<key>'"
// (MySQL 8 writes "<table>.<key>"); ok is false for another error or form.
// The entry is data and may hold "' for key '" itself: the key is the
// message's last quoted part.
func dupKey(err error) (key string, ok bool) {
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != server.ErrDupEntry {
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
func CapText(s string) string {
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

// keepText is s as the state tables keep it: the secrets of
// shopdb.Config.Redact removed, cut to MaxTextLen.
func (st *Store) keepText(text string) string {
	if st.cfg.Redact != nil {
		text = st.cfg.Redact.Redact(text)
	}
	return CapText(text)
}

// capHead is how much of the beginning CapText keeps; the end gets the rest.
const capHead = 1000

// dbTime is t as stored: UTC, microseconds; nil (NULL) for the zero time.
func dbTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return normTime(t)
}

// normTime is t as it reads back from a DATETIME(6) column.
func normTime(t time.Time) time.Time { return server.Time(t) }

// now is the current time as stored.
func now() time.Time { return server.Now() }

// Error numbers the store branches on.
const (
	errDupEntry        = server.ErrDupEntry
	errNoSuchTable     = server.ErrNoSuchTable
	errTableExists     = server.ErrTableExists
	errDupFieldName    = server.ErrDupFieldName
	errDupKeyName      = server.ErrDupKeyName
	errCantDropKey     = server.ErrCantDropKey
	errLockWaitTimeout = server.ErrLockWaitTimeout
	errUnknownTable    = server.ErrUnknownTable
)
