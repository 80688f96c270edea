package shopdb

import (
	"cmp"
	"database/sql/driver"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/quotesync/quotesync/shopdb/internal/server"
)

// Defaults of Config; a zero field means its default.
const (
	DefaultAddr            = "127.0.0.1:3306"
	DefaultTablePrefix     = "quotesync_"
	DefaultConnMaxLifetime = 3 * time.Minute
	// DefaultConnMaxIdleTime closes a pooled connection unused this long:
	// between the passes of the default schedule (every minute) an idle
	// site holds its lock's session alone.
	DefaultConnMaxIdleTime    = 30 * time.Second
	DefaultMaxOpenConns       = 10
	DefaultQueryTimeout       = 30 * time.Second
	DefaultLockHeartbeat      = 5 * time.Second
	DefaultLockSessionTimeout = 30 * time.Second
	// DefaultDialTimeout bounds connecting to the server.
	DefaultDialTimeout = 10 * time.Second
	// DefaultLockWait is how long a statement of quotesync's waits for a
	// row or table lock before the server gives up (see Config.LockWait).
	DefaultLockWait = 5 * time.Second
)

// Limits checked by Validate.
const (
	maxConnMaxLifetime = 5 * time.Minute
	maxPrefixLen       = 32 // the longest table or key name stays under 64 characters
)

// Config is how quotesync reaches the shop's database and how the shop's
// schema maps onto quotesync's needs. The YAML keys named below live under
// "shop:"; the command decodes the file, shopdb validates what it is given.
type Config struct {
	// Addr is host:port of the server (shop.addr), or the path of its unix
	// socket when it starts with "/". Default DefaultAddr.
	Addr string
	// User (shop.user) is required.
	User string
	// Password is resolved by the command from a file or the environment;
	// it is never printed, not even by String.
	Password string
	// PasswordFrom says where the password comes from ("file
	// /etc/quotesync/credentials/db-password"), for messages; "": none.
	PasswordFrom string
	// Database (shop.database) is the shop's schema; quotesync's own tables
	// live beside the shop's. Required.
	Database string
	// TLS (shop.tls): "" (off), "true", "skip-verify" or "preferred".
	TLS string
	// TLSCAFile (shop.tls_ca_file) is a PEM file of the CA that signed
	// the server's certificate (MySQL 8's own: ca.pem of its data
	// directory): the connection is TLS, the certificate verified against
	// it and its name against the host of Addr or TLSServerName. TLS must
	// then be "" or "true". Empty: none.
	TLSCAFile string
	// TLSServerName (shop.tls_server_name) is the name the server's
	// certificate must carry when it is not the host of Addr (an IP
	// address, a socket, MySQL 8's own certificate); with TLSCAFile or
	// TLS "true" only. Empty: the host of Addr.
	TLSServerName string
	// TablePrefix (shop.table_prefix) prefixes quotesync's own tables.
	// Default DefaultTablePrefix; letters, digits and "_" only.
	TablePrefix string
	// LockName (shop.lock_name) is the GET_LOCK name of the single-instance
	// lock; default derived from Database and TablePrefix.
	LockName string
	// ConnMaxLifetime (shop.conn_max_lifetime) recycles pooled connections;
	// default DefaultConnMaxLifetime, at most 5m.
	ConnMaxLifetime time.Duration
	// ConnMaxIdleTime (shop.conn_max_idle_time) closes a pooled connection
	// that has not been used for this long, so that an idle daemon holds
	// the lock's session and at most the one connection its passes use.
	// Default DefaultConnMaxIdleTime, at most ConnMaxLifetime's bound.
	ConnMaxIdleTime time.Duration
	// MaxOpenConns (shop.max_open_conns) caps the pool; the lock pins one
	// connection of it. Default DefaultMaxOpenConns, at least 2.
	MaxOpenConns int
	// QueryTimeout (shop.query_timeout) bounds each operation of DB.
	// Default DefaultQueryTimeout.
	QueryTimeout time.Duration
	// LockWait (shop.lock_wait) is the server's lock wait of quotesync's
	// sessions (innodb_lock_wait_timeout for row locks, lock_wait_timeout
	// for table and metadata locks): a statement that waits longer for a
	// lock the shop's program holds fails, so that one request behind a
	// lock waits for the next pass while the rest go on. Default
	// DefaultLockWait; whole seconds; at or above QueryTimeout,
	// QueryTimeout ends the wait first; negative: the server's own (its
	// defaults are 50s and a year), for a server that keeps no such setting
	// per session.
	LockWait time.Duration
	// LockHeartbeat (shop.lock_heartbeat) is how often the lock checks it
	// is still held. Default DefaultLockHeartbeat.
	LockHeartbeat time.Duration
	// LockSessionTimeout (shop.lock_session_timeout) is the wait_timeout of
	// the lock's connection: how soon the server frees the lock of a
	// vanished holder. Default DefaultLockSessionTimeout; at least twice
	// LockHeartbeat.
	LockSessionTimeout time.Duration

	// Queries (shop.queries) is the mapping SQL; see Queries.
	Queries Queries
	// Params (shop.params) names extra parameters of the mapping queries:
	// parameter name → dotted JSON path into the request as received from
	// the remote, e.g. "registration": "vehicle.registration" (a number
	// segment indexes an array: "vehicle.owners.0.name"). Strings and
	// numbers arrive as text, booleans as 1/0, objects and arrays as JSON
	// text; a path missing in a request yields NULL.
	Params map[string]string
	// WorkTypes (shop.work_types) maps the shop's operation codes to remote
	// work types, e.g. "R&R": "RemoveReplaceLabour". A line whose code is
	// not a key here is invalid.
	WorkTypes map[string]string
	// AllowCredits (shop.allow_credits) accepts negative quantities and
	// prices (credit lines). Default false.
	AllowCredits bool
	// Limits (shop.limits) are the plausible bounds of a line's amounts;
	// the zero value means the defaults.
	Limits Limits
	// WriteBack (shop.write_back) is the optional statement run in the
	// shop's database after each kind of event (WriteBackKinds), with the
	// parameters of WriteBackParams.
	WriteBack map[string]string

	// DriverLog, when set, receives the MySQL driver's own diagnostics
	// (e.g. "unexpected EOF" when a connection drops); nil discards them.
	// The errors themselves are always returned to the caller.
	DriverLog func(msg string)
	// Redact removes the secrets (the process's one set: the password,
	// the tokens, the webhook's secret and URL) from every text the state
	// tables keep, the whole text before it is cut: errors, event
	// messages, the outbox's details and failures. nil: none is.
	Redact Redacter
	// Connector, when set, wraps the driver's connector of the pool Open
	// makes: a test's hook (shopdbtest.Trips counts round trips with it).
	Connector interface {
		Wrap(driver.Connector) driver.Connector
	}

	// fromDSN: the connection settings came from a DSN (ConfigFromDSN),
	// and messages name it, not the keys of shop:.
	fromDSN bool
}

// ConfigFromDSN is the connection part of a Config (Addr, User, Password,
// Database, TLS) read from a go-sql-driver/mysql DSN, as `quotesync init
// --dsn` takes it: user@tcp(host:3306)/shopdb, or user@unix(/path)/shopdb.
// A failed connection's messages then name --dsn. It checks nothing else
// (a password in it, a missing user or database: the caller's to refuse).
func ConfigFromDSN(dsn string) (Config, error) {
	m, err := mysql.ParseDSN(dsn)
	if err != nil {
		return Config{}, err
	}
	c := Config{Addr: m.Addr, User: m.User, Password: m.Passwd, Database: m.DBName, fromDSN: true}
	switch m.TLSConfig {
	case "true", "skip-verify", "preferred":
		c.TLS = m.TLSConfig
	}
	return c, nil
}

// Redacter removes secret values from a text (remote/redact's Secrets).
type Redacter interface {
	Redact(text string) string
}

// driverLogger adapts Config.DriverLog to the driver's Logger.
type driverLogger func(msg string)

func (f driverLogger) Print(v ...any) {
	if f != nil {
		f(strings.TrimSuffix(fmt.Sprint(v...), "\n"))
	}
}

// Queries holds the integrator's SQL: sqlx named queries (":name"
// parameters; write "::" for a literal colon, and no literal "?").
//
// Parameters available to FindJob, CreateJob, BookingDate and ReleaseJob:
// :request_id, :claim_number, :expiry (NULL when none) and every key of
// Config.Params; BookingDate also gets :job, ReleaseJob :job and
// :job_created. LineItems and EstimateState get :jobs, a list, expanded
// for "IN (:jobs)"; they must use it.
type Queries struct {
	// FindJob (shop.queries.find_job) returns the existing job for a
	// request: one column "job", zero rows for none, never more than one.
	FindJob string
	// CreateJob (shop.queries.create_job) creates a job when FindJob is
	// absent or finds none: statements run in order in the transaction that
	// records the reservation; the last one returns the new "job".
	CreateJob []string
	// BookingDate (shop.queries.booking_date), optional, returns one
	// DATE/DATETIME column (or "YYYY-MM-DD" text) for :job.
	BookingDate string
	// ReleaseJob (shop.queries.release_job), optional: statements run in
	// order, in the transaction that records it, when a request that
	// holds job :job is taken by someone else or goes away before our
	// accept landed; :job_created is 1 when create_job made the job (for
	// example: cancel a job quotesync created, unlink one it found). Without
	// it the job number is reported as unused and the shop keeps the job.
	ReleaseJob []string
	// LineItems (shop.queries.line_items) returns the estimate lines of
	// :jobs with columns job, line_id, line_no, code, description, quantity,
	// price and optionally part_number, total (alias them with AS). Other
	// columns are an error. Amounts are read from their text form (DECIMAL
	// keeps its scale); a NULL total means quantity × price rounded half up
	// to cents. Optional item fields: markup (a number under the rules of
	// price), is_on_report (1/0 or true/false) and meta_<key> columns (item
	// metadata under <key>); NULL leaves a field out. A job with one
	// invalid row is reported, not loaded.
	LineItems string
	// EstimateState (shop.queries.estimate_state) returns one row per job
	// of :jobs (GROUP BY the job) with columns job and optionally final (a
	// number, non-zero meaning final, or true/false; NULL is false; with
	// no final column no estimate is ever final: Drafts are pushed and
	// nothing is submitted) and marker (any type; it must change whenever
	// the estimate or its lines change). Other columns are an error; a job
	// with two rows or an invalid final is reported, not loaded, and the
	// others go on.
	EstimateState string
	// ShopChanged (shop.queries.shop_changed), optional but worth it for a
	// shop with many jobs: a cheap query, without parameters, returning one
	// row whose values change whenever anything line_items or
	// estimate_state read changes (for example MAX(updated_at) and COUNT(*)
	// of the lines and the estimates). When its row is the same as at the
	// last pass and quotesync's own state did not change either, a pass
	// reads nothing else from the database.
	ShopChanged string
	// QuoteFields (shop.queries.quote_fields), optional, returns at most
	// one row per job of :jobs: a column job and any others, each a field
	// of the job's quote beside the items, named as the query spells the
	// column, its value sent as a JSON string (a NULL or empty value
	// leaves the field out). The fields quotesync writes itself
	// (ReservedQuoteFields) are refused. The marker of estimate_state, and
	// shop_changed, must change when these values change.
	QuoteFields string
	// SampleJobs (shop.queries.sample_jobs), optional and read by `check`
	// only: the shop's newest jobs that have a claim number, at most
	// MaxSampleJobs, with columns job, claim_number and any of Params'
	// names (the values a request for that job would carry). check finds
	// each through FindJob and reads its lines and estimate state, to
	// prove the mapping on real rows. No parameters.
	SampleJobs string
}

// withDefaults returns c with every zero tunable set to its default.
func (c Config) withDefaults() Config {
	c.Addr = cmp.Or(c.Addr, DefaultAddr)
	c.TablePrefix = cmp.Or(c.TablePrefix, DefaultTablePrefix)
	if c.LockName == "" && c.Database != "" {
		c.LockName = server.LockName("quotesync." + c.Database + "." + c.TablePrefix)
	}
	c.ConnMaxLifetime = cmp.Or(c.ConnMaxLifetime, DefaultConnMaxLifetime)
	c.ConnMaxIdleTime = cmp.Or(c.ConnMaxIdleTime, DefaultConnMaxIdleTime)
	c.MaxOpenConns = cmp.Or(c.MaxOpenConns, DefaultMaxOpenConns)
	c.QueryTimeout = cmp.Or(c.QueryTimeout, DefaultQueryTimeout)
	c.LockWait = cmp.Or(c.LockWait, DefaultLockWait)
	c.LockHeartbeat = cmp.Or(c.LockHeartbeat, DefaultLockHeartbeat)
	c.LockSessionTimeout = cmp.Or(c.LockSessionTimeout, DefaultLockSessionTimeout)
	return c
}

var (
	prefixPattern = regexp.MustCompile(`^[A-Za-z0-9_]*$`)
	paramPattern  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// Validate reports the first problem with c, naming its YAML key under
// "shop:" and the fix. Zero tunables are valid (they mean the default).
func (c Config) Validate() error {
	if err := c.validateConnection(); err != nil {
		return err
	}
	if err := c.Limits.validate(); err != nil {
		return err
	}
	_, err := compileQueries(c)
	return err
}

func (c Config) validateConnection() error {
	switch {
	case c.User == "":
		return fmt.Errorf("shop.user: required")
	case c.Database == "":
		return fmt.Errorf("shop.database: required (the shop's schema name)")
	case len(c.Database) > 64:
		return fmt.Errorf("shop.database: longer than 64 characters")
	case !prefixPattern.MatchString(c.TablePrefix) || len(c.TablePrefix) > maxPrefixLen:
		return fmt.Errorf("shop.table_prefix: %q must be at most %d letters, digits or underscores", c.TablePrefix, maxPrefixLen)
	case len(c.LockName) > server.MaxLockNameLen:
		return fmt.Errorf("shop.lock_name: longer than %d characters", server.MaxLockNameLen)
	case c.ConnMaxLifetime < 0 || c.ConnMaxLifetime > maxConnMaxLifetime:
		return fmt.Errorf("shop.conn_max_lifetime: %s must be between 0 (default %s) and %s", c.ConnMaxLifetime, DefaultConnMaxLifetime, maxConnMaxLifetime)
	case c.ConnMaxIdleTime < 0 || c.ConnMaxIdleTime > maxConnMaxLifetime:
		return fmt.Errorf("shop.conn_max_idle_time: %s must be between 0 (default %s) and %s", c.ConnMaxIdleTime, DefaultConnMaxIdleTime, maxConnMaxLifetime)
	case c.MaxOpenConns < 0 || c.MaxOpenConns == 1:
		return fmt.Errorf("shop.max_open_conns: %d must be at least 2 (the lock pins one connection) or 0 for the default %d", c.MaxOpenConns, DefaultMaxOpenConns)
	case c.QueryTimeout < 0:
		return fmt.Errorf("shop.query_timeout: must not be negative")
	case c.LockHeartbeat < 0:
		return fmt.Errorf("shop.lock_heartbeat: must not be negative")
	case c.LockSessionTimeout < 0 || (c.LockSessionTimeout > 0 && c.LockSessionTimeout < time.Second):
		return fmt.Errorf("shop.lock_session_timeout: must be at least 1s")
	}
	d := c.withDefaults()
	if d.LockSessionTimeout < 2*d.LockHeartbeat {
		return fmt.Errorf("shop.lock_session_timeout: %s must be at least twice shop.lock_heartbeat (%s)", d.LockSessionTimeout, d.LockHeartbeat)
	}
	if d.LockWait > 0 && d.LockWait%time.Second != 0 {
		return fmt.Errorf("shop.lock_wait: %s must be whole seconds (the server counts its lock waits in seconds), or negative for the server's own", d.LockWait)
	}
	if err := c.validateTLS(); err != nil {
		return err
	}
	for _, name := range sortedKeys(c.Params) {
		switch path := c.Params[name]; {
		case !paramPattern.MatchString(name):
			return fmt.Errorf("shop.params.%s: a parameter name is letters, digits and underscores", name)
		case slices.Contains(builtinParams, name):
			return fmt.Errorf("shop.params.%s: %s is a built-in parameter; choose another name", name, name)
		case path == "" || strings.HasPrefix(path, ".") || strings.HasSuffix(path, ".") || strings.Contains(path, ".."):
			return fmt.Errorf("shop.params.%s: %q is not a dotted JSON path such as vehicle.registration", name, path)
		}
	}
	if len(c.WorkTypes) == 0 {
		return fmt.Errorf("shop.work_types: required: map each operation code of the shop to a remote work type")
	}
	for _, code := range sortedKeys(c.WorkTypes) {
		if strings.TrimSpace(code) == "" || strings.TrimSpace(c.WorkTypes[code]) == "" {
			return fmt.Errorf("shop.work_types.%s: code and work type must both be non-empty", code)
		}
	}
	return nil
}

// mysqlConfig is the driver configuration for c (defaults applied).
func (c Config) mysqlConfig() *mysql.Config {
	m := mysql.NewConfig()
	m.User = c.User
	m.Passwd = c.Password
	m.Net = "tcp"
	if strings.HasPrefix(c.Addr, "/") {
		m.Net = "unix"
	}
	m.Addr = c.Addr
	m.DBName = c.Database
	m.ParseTime = true
	m.Loc = time.UTC
	// Arguments are interpolated client-side: one round trip per statement,
	// no prepare, and no 65,535-placeholder limit for "IN (:jobs)".
	m.InterpolateParams = true
	m.Timeout = DefaultDialTimeout
	m.RejectReadOnly = true
	m.Logger = driverLogger(c.DriverLog)
	if c.TLS != "" && c.TLS != "false" {
		m.TLSConfig = c.TLS
	}
	if c.LockWait > 0 {
		// Set by the driver on every new connection, in the one SET of
		// its handshake: the lock's session and every pooled one.
		secs := strconv.Itoa(int(c.LockWait / time.Second))
		m.Params = map[string]string{"innodb_lock_wait_timeout": secs, "lock_wait_timeout": secs}
	}
	return m
}

// String describes c without its password.
func (c Config) String() string {
	d := c.withDefaults()
	if c.fromDSN {
		return fmt.Sprintf("mysql %s@%s/%s", d.User, d.Addr, d.Database) // no tables of quotesync's in view yet
	}
	return fmt.Sprintf("mysql %s@%s/%s (tables %s*)", d.User, d.Addr, d.Database, d.TablePrefix)
}

// GoString is String, so that %#v does not print the password either.
func (c Config) GoString() string { return "shopdb.Config{" + c.String() + "}" }

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
