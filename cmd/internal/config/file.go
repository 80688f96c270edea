// Package config is quotesync's configuration file: the YAML format, read
// strictly, and its translation into each package's own configuration
// (sync.Settings), secrets read from files or the environment. The
// command and the demo both load a configuration through it.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"go.yaml.in/yaml/v3"
)

// DefaultPath is where the package installs the configuration.
const DefaultPath = "/etc/quotesync/config.yaml"

// File is the YAML file. Each section turns into its package's own
// Config (see build.go); the packages never see YAML.
type File struct {
	// Remote is the one insurer of most shops (qsync.DefaultInsurer);
	// Remotes, several, each with a name. One or the other: a file written
	// from a File with Remotes leaves an empty Remote out (omitempty), as
	// an empty remote: beside remotes: is refused.
	Remote  RemoteSection  `yaml:"remote,omitempty"`
	Remotes []RemoteEntry  `yaml:"remotes"`
	Shop    ShopSection    `yaml:"shop"`
	Sync    SyncSection    `yaml:"sync"`
	Quote   QuoteSection   `yaml:"quote"`
	Log     LogSection     `yaml:"log"`
	Metrics MetricsSection `yaml:"metrics"`
	Notify  NotifySection  `yaml:"notify"`
	Control ControlSection `yaml:"control"`

	// remoteLine is the line of the remote: key when Parse found one,
	// whatever its value, which may decode to nothing (see buildInsurers).
	remoteLine int
	// site is the site of the template unit the file is read for
	// (SetSite); "" for none.
	site string
}

type RemoteSection struct {
	BaseURL           string        `yaml:"base_url"`
	Token             TokenSection  `yaml:"token"`
	Timeout           time.Duration `yaml:"timeout"`
	MaxAttempts       int           `yaml:"max_attempts"`
	BackoffInitial    time.Duration `yaml:"backoff_initial"`
	BackoffMax        time.Duration `yaml:"backoff_max"`
	RateLimit         float64       `yaml:"rate_limit"`
	Burst             int           `yaml:"burst"`
	MaxBodyBytes      int64         `yaml:"max_body_bytes"`
	DraftUpdate       string        `yaml:"draft_update"`
	StatusMethod      string        `yaml:"status_method"`
	StatusPath        string        `yaml:"status_path"`
	BookingDateLayout string        `yaml:"booking_date_layout"`
}

// TokenSection says where the bearer token comes from: exactly one of
// file, env and oauth2. A literal token is refused on purpose.
type TokenSection struct {
	File   string         `yaml:"file"`
	Env    string         `yaml:"env"`
	OAuth2 *OAuth2Section `yaml:"oauth2"`
	Value  string         `yaml:"value"` // refused: secrets never in the YAML
}

type OAuth2Section struct {
	TokenURL         string            `yaml:"token_url"`
	ClientID         string            `yaml:"client_id"`
	ClientSecretFile string            `yaml:"client_secret_file"`
	ClientSecretEnv  string            `yaml:"client_secret_env"`
	ClientSecret     string            `yaml:"client_secret"` // refused
	Scopes           []string          `yaml:"scopes"`
	EndpointParams   map[string]string `yaml:"endpoint_params"`
	ExpiryLeeway     time.Duration     `yaml:"expiry_leeway"`
}

type ShopSection struct {
	Addr               string            `yaml:"addr"`
	User               string            `yaml:"user"`
	PasswordFile       string            `yaml:"password_file"`
	PasswordEnv        string            `yaml:"password_env"`
	Password           string            `yaml:"password"` // refused
	Database           string            `yaml:"database"`
	TLS                string            `yaml:"tls"`
	TLSCAFile          string            `yaml:"tls_ca_file"`
	TLSServerName      string            `yaml:"tls_server_name"`
	TablePrefix        string            `yaml:"table_prefix"`
	LockName           string            `yaml:"lock_name"`
	ConnMaxLifetime    time.Duration     `yaml:"conn_max_lifetime"`
	ConnMaxIdleTime    time.Duration     `yaml:"conn_max_idle_time"`
	MaxOpenConns       int               `yaml:"max_open_conns"`
	QueryTimeout       time.Duration     `yaml:"query_timeout"`
	LockWait           time.Duration     `yaml:"lock_wait"`
	LockHeartbeat      time.Duration     `yaml:"lock_heartbeat"`
	LockSessionTimeout time.Duration     `yaml:"lock_session_timeout"`
	Params             map[string]string `yaml:"params"`
	WorkTypes          map[string]string `yaml:"work_types"`
	AllowCredits       bool              `yaml:"allow_credits"`
	Limits             LimitsSection     `yaml:"limits"`
	WriteBack          WriteBackSection  `yaml:"write_back"`
	// SingleWriter says that every instance reaches one writer of a
	// clustered server (the same node, or a proxy with one write node):
	// the single-instance lock (GET_LOCK) is local to one server.
	SingleWriter bool           `yaml:"single_writer"`
	Queries      QueriesSection `yaml:"queries"`
}

// LimitsSection is shop.limits: the plausible bounds of a line's amounts.
type LimitsSection struct {
	MaxQuantity Decimal `yaml:"max_quantity"`
	MaxPrice    Decimal `yaml:"max_price"`
	MaxDigits   int     `yaml:"max_digits"`
}

type QueriesSection struct {
	FindJob       string   `yaml:"find_job"`
	CreateJob     []string `yaml:"create_job"`
	BookingDate   string   `yaml:"booking_date"`
	ReleaseJob    []string `yaml:"release_job"`
	LineItems     string   `yaml:"line_items"`
	EstimateState string   `yaml:"estimate_state"`
	ShopChanged   string   `yaml:"shop_changed"`
	QuoteFields   string   `yaml:"quote_fields"`
	SampleJobs    string   `yaml:"sample_jobs"`
}

type SyncSection struct {
	Schedule        string        `yaml:"schedule"`
	TimeZone        string        `yaml:"time_zone"`
	Concurrency     int           `yaml:"concurrency"`
	MaxNewPerPass   int           `yaml:"max_new_per_pass"`
	PassTimeout     time.Duration `yaml:"pass_timeout"`
	RetryBackoffMin time.Duration `yaml:"retry_backoff_min"`
	RetryBackoffMax time.Duration `yaml:"retry_backoff_max"`
	MaxConflicts    int           `yaml:"max_conflicts"`
	WatchSubmitted  time.Duration `yaml:"watch_submitted"`
}

type QuoteSection struct {
	Type            string             `yaml:"type"`
	Rates           map[string]Decimal `yaml:"rates"`
	OmitReferenceID bool               `yaml:"omit_reference_id"`
}

type LogSection struct {
	Level  string `yaml:"level"`  // debug, info, warn, error
	Format string `yaml:"format"` // json, console
}

type MetricsSection struct {
	Listen string `yaml:"listen"` // "" = off; beyond loopback needs UsersFile or Auth none
	// AllowNonLoopback, deprecated, opens a non-loopback Listen without a
	// login, as Auth none does (see Listener).
	AllowNonLoopback bool `yaml:"allow_non_loopback"`
	// Auth is AuthUsers, AuthNone or "" (decided by Listener).
	Auth string `yaml:"auth"`
	// UsersFile is the htpasswd file of bcrypt hashes; "" none.
	UsersFile string `yaml:"users_file"`
	// SessionLifetime is how long a login lasts; 0 means
	// DefaultSessionLifetime.
	SessionLifetime time.Duration `yaml:"session_lifetime"`
	// ScrapeAuth is who reads /metrics and /healthz: AuthUsers, AuthNone,
	// or "" (none on loopback, else as Auth).
	ScrapeAuth string `yaml:"scrape_auth"`
	// TLSCertFile and TLSKeyFile (PEM) make the listener serve HTTPS;
	// both or neither. Read again on SIGHUP.
	TLSCertFile string `yaml:"tls_cert_file"`
	TLSKeyFile  string `yaml:"tls_key_file"`
	// HealthMaxAge: /healthz fails when the last successful pass is older;
	// 0 means three activations of the schedule (see health.go).
	HealthMaxAge time.Duration `yaml:"health_max_age"`
	// StatusPage serves the read-only status page under /status; nil
	// means the default, on (see StatusPageOn).
	StatusPage *bool `yaml:"status_page"`
}

// Defaults of the sections that belong to cmd itself.
const (
	defaultLogLevel  = "info"
	defaultLogFormat = "json"
)

// Decimal decodes a YAML number or string into an exact decimal
// (YAML's own float decoding would round 95.10 through float64).
type Decimal struct{ decimal.Decimal }

func (d *Decimal) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a number such as 95.50", n.Line)
	}
	v, err := decimal.NewFromString(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a number; write an amount such as 95.50", n.Line, n.Value)
	}
	d.Decimal = v
	return nil
}

// MaxFileBytes caps the size of a configuration file (a real one is a
// few kilobytes).
const MaxFileBytes = 1 << 20

// Parse decodes one YAML document strictly: unknown keys and type errors
// are reported with their line. An empty document means defaults.
func Parse(r io.Reader) (*File, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("read config: larger than %d KiB; a quotesync configuration is a few kilobytes: is this the right file?", MaxFileBytes>>10)
	}
	cfg := &File{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil {
		if errors.Is(err, io.EOF) {
			return cfg, nil
		}
		return nil, fmt.Errorf("parse config: %w", friendlyYAMLError(err))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("parse config: the file holds more than one YAML document; keep one (remove the extra '---')")
	}
	cfg.remoteLine = keyLine(data, "remote")
	return cfg, nil
}

// keyLine is the line of a top-level key, whatever its value (null too);
// 0 when the key is not there.
func keyLine(data []byte, key string) int {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return 0
	}
	top := doc.Content[0].Content
	for i := 0; i+1 < len(top); i += 2 {
		if top[i].Value == key {
			return top[i].Line
		}
	}
	return 0
}

// Load reads and parses the file at path.
func Load(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("config file %s does not exist; pass --config FILE or copy config.example.yaml there", path)
		}
		return nil, fmt.Errorf("open config: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > MaxFileBytes {
		return nil, fmt.Errorf("%s: %d bytes, larger than %d KiB; a quotesync configuration is a few kilobytes: is this the right file?", path, fi.Size(), MaxFileBytes>>10)
	}
	cfg, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// friendlyYAMLError rewrites yaml's "field x not found in type main.y" into
// words about the file.
func friendlyYAMLError(err error) error {
	te, ok := errors.AsType[*yaml.TypeError](err)
	if !ok {
		return err
	}
	msgs := make([]string, 0, len(te.Errors))
	for _, m := range te.Errors {
		if i := strings.Index(m, " not found in type "); i >= 0 && strings.Contains(m, "field ") {
			m = strings.Replace(m[:i], "field ", "unknown key ", 1) + " (check its spelling and indentation against config.example.yaml)"
		}
		m = strings.ReplaceAll(m, "time.Duration", "a duration such as 30s")
		msgs = append(msgs, m)
	}
	return errors.New(strings.Join(msgs, "; "))
}
