// Package remote is the typed HTTP client of the Repairer Quotation
// Integration Service: list pending requests, accept one, create and update
// the Draft quote, change its status.
//
// The client owns everything about one call: the bearer token (and its
// refresh after a 401), the per-attempt timeout, retries of temporary
// failures with exponential backoff and jitter (Retry-After honoured),
// a client-side token-bucket rate limit, a cap on response bodies, and the
// classification of every failure into one of five sentinel errors. It does
// not log: it returns errors, and calls Config.Observe once per attempt for
// metrics.
package remote

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/quotesync/quotesync/remote/redact"
)

// Defaults of Config; a zero field takes its default.
const (
	DefaultUserAgent         = "quotesync"
	DefaultTimeout           = 30 * time.Second
	DefaultMaxAttempts       = 4
	DefaultBackoffInitial    = 500 * time.Millisecond
	DefaultBackoffMax        = 30 * time.Second
	DefaultRateLimit         = 10 // calls per second
	DefaultBurst             = 5
	DefaultMaxBodyBytes      = 8 << 20
	DefaultDraftUpdate       = DraftUpdateRepost
	DefaultStatusMethod      = http.MethodPost
	DefaultStatusPath        = StatusPathQuotesStatus
	DefaultBookingDateLayout = time.DateOnly
)

// Draft update strategies (Config.DraftUpdate).
const (
	// DraftUpdateRepost re-POSTs the whole quote to /jobs/{id}/quotes.
	DraftUpdateRepost = "repost"
	// DraftUpdatePut PUTs the quote to /jobs/{id}/quotes/{type}.
	DraftUpdatePut = "put"
)

// APIRoot is the path under Config.BaseURL every endpoint is relative to.
const APIRoot = "/integrations/repairer"

// Config configures a Client. Every field but BaseURL has a default; a zero
// value means the default.
type Config struct {
	// BaseURL is the service's base address (http or https, no query); the
	// API root is BaseURL + "/integrations/repairer". Required.
	BaseURL string
	// UserAgent names the client; DefaultUserAgent when empty. cmd sets
	// "quotesync/<version>".
	UserAgent string
	// Timeout bounds one attempt (token, request, response body);
	// DefaultTimeout when zero.
	Timeout time.Duration
	// MaxAttempts bounds the attempts of one call at temporary failures;
	// DefaultMaxAttempts when zero, 1 = no retry. The one retry after a 401
	// does not count against it.
	MaxAttempts int
	// BackoffInitial is the wait before the second attempt, doubled for
	// each later one up to BackoffMax, each ±20% (see Backoff); a
	// Retry-After is waited at least, BackoffMax at most.
	// DefaultBackoffInitial and DefaultBackoffMax when zero.
	BackoffInitial, BackoffMax time.Duration
	// RateLimit is the sustained calls (attempts) per second of the token
	// bucket; DefaultRateLimit when zero; negative means unlimited.
	RateLimit float64
	// Burst is the token bucket's size; DefaultBurst when zero.
	Burst int
	// MaxBodyBytes caps a response body; a larger one is a temporary
	// failure. DefaultMaxBodyBytes when zero.
	MaxBodyBytes int64
	// DraftUpdate is DraftUpdateRepost (the default) or DraftUpdatePut.
	DraftUpdate string
	// StatusMethod is "POST" (the default) or "PUT".
	StatusMethod string
	// StatusPath is one of the four path forms (StatusPathQuotesStatus, the
	// default, which the public documentation's example uses;
	// StatusPathQuoteStatus; StatusPathQuotesID; StatusPathQuoteID) or
	// StatusPathAuto; DefaultStatusPath when empty.
	StatusPath string
	// BookingDateLayout is the Go time layout of bookingDate on accept;
	// DefaultBookingDateLayout (ISO 8601 date) when empty.
	BookingDateLayout string
	// Observe, when set, is called once per attempt, synchronously, after
	// the attempt ends. It must be safe for concurrent use.
	Observe func(CallInfo)
	// HTTPClient sends the requests; when nil a client with sane transport
	// timeouts that does not follow redirects.
	HTTPClient *http.Client
	// Secrets is the set every text the client keeps of an answer (an
	// Error's Body, a header it quotes) is redacted with before it is
	// cut, and which every token the client sends joins before it is
	// sent (redact.Secrets.AddFetched). The daemon passes its one set, so
	// that its log, its tables and its pages redact the same secrets; nil
	// means a set of the client's own, which holds its tokens only.
	Secrets *redact.Secrets
	// IdleConns is how many idle connections the default client keeps to
	// the service: as many as calls in flight at once (the daemon sets
	// sync.concurrency), so that a busy pass neither opens a new
	// connection per call nor keeps more than it uses. Default 16.
	IdleConns int
}

// CallInfo describes one attempt of one call, for Config.Observe.
type CallInfo struct {
	Method, Route string        // Route is the path template: "POST /requests/{id}"
	Status        int           // 0 when no HTTP answer
	Class         string        // ClassOK, ClassTemporary, ...
	Attempt       int           // 1-based
	Duration      time.Duration // of this attempt, the rate-limit wait excluded
	Err           error         // nil on success
}

// Client calls the integration service. It is safe for concurrent use.
type Client struct {
	cfg     Config
	api     string // BaseURL + APIRoot, no trailing slash
	tokens  TokenSource
	secrets *redact.Secrets // cfg.Secrets, or a set of its own
	http    *http.Client
	limiter *rate.Limiter
	// statusForm remembers, in auto mode, the index+1 into statusCandidates
	// of the form that worked; 0 while unknown.
	statusForm atomic.Int32
	// sleep, now and rand are time.Sleep-with-context, time.Now and the
	// backoff's chance (rand.Float64); tests swap them.
	sleep func(ctxDone <-chan struct{}, d time.Duration) bool
	now   func() time.Time
	rand  func() float64
}

// New validates cfg, fills in its defaults and returns a Client that gets
// its bearer token from tokens. An invalid field is a *ConfigError.
func New(cfg Config, tokens TokenSource) (*Client, error) {
	if tokens == nil {
		return nil, errors.New("new remote client: token source is nil")
	}
	cfg, api, err := cfg.normalize()
	if err != nil {
		return nil, fmt.Errorf("new remote client: %w", err)
	}
	limit := rate.Limit(cfg.RateLimit)
	if cfg.RateLimit < 0 {
		limit = rate.Inf
	}
	c := &Client{
		cfg:     cfg,
		api:     api,
		tokens:  tokens,
		secrets: cfg.Secrets,
		http:    cfg.HTTPClient,
		limiter: rate.NewLimiter(limit, cfg.Burst),
		sleep:   sleepCtx,
		now:     time.Now,
		rand:    rand.Float64,
	}
	if c.http == nil {
		c.http = defaultHTTPClient(cfg.IdleConns)
	}
	if c.secrets == nil {
		c.secrets = redact.New()
	}
	return c, nil
}

// normalize checks cfg and fills in defaults; it also returns the API root.
func (cfg Config) normalize() (Config, string, error) {
	u, err := url.Parse(cfg.BaseURL)
	switch {
	case cfg.BaseURL == "":
		return cfg, "", configError("BaseURL", "required")
	case err != nil:
		return cfg, "", configError("BaseURL", "not a URL")
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return cfg, "", configError("BaseURL", "must be an absolute http or https URL, got %q", u.Redacted())
	case u.User != nil:
		return cfg, "", configError("BaseURL", "must not carry credentials, got %q", u.Redacted())
	case u.RawQuery != "" || u.Fragment != "":
		return cfg, "", configError("BaseURL", "must have no query or fragment, got %q", u.Redacted())
	}
	api := strings.TrimRight(cfg.BaseURL, "/") + APIRoot

	durations := []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"Timeout", &cfg.Timeout, DefaultTimeout},
		{"BackoffInitial", &cfg.BackoffInitial, DefaultBackoffInitial},
		{"BackoffMax", &cfg.BackoffMax, DefaultBackoffMax},
	}
	for _, d := range durations {
		if *d.v < 0 {
			return cfg, "", configError(d.name, "must not be negative, got %s", *d.v)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if cfg.BackoffMax < cfg.BackoffInitial {
		return cfg, "", configError("BackoffMax", "must be at least BackoffInitial (%s), got %s", cfg.BackoffInitial, cfg.BackoffMax)
	}
	if cfg.MaxAttempts < 0 || cfg.Burst < 0 || cfg.MaxBodyBytes < 0 {
		return cfg, "", configError(firstNegative(cfg), "must not be negative")
	}
	cfg.UserAgent = cmp.Or(cfg.UserAgent, DefaultUserAgent)
	cfg.MaxAttempts = cmp.Or(cfg.MaxAttempts, DefaultMaxAttempts)
	cfg.Burst = cmp.Or(cfg.Burst, DefaultBurst)
	cfg.MaxBodyBytes = cmp.Or(cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	cfg.RateLimit = cmp.Or(cfg.RateLimit, DefaultRateLimit)
	cfg.BookingDateLayout = cmp.Or(cfg.BookingDateLayout, DefaultBookingDateLayout)

	switch cfg.DraftUpdate = cmp.Or(strings.ToLower(cfg.DraftUpdate), DefaultDraftUpdate); cfg.DraftUpdate {
	case DraftUpdateRepost, DraftUpdatePut:
	default:
		return cfg, "", configError("DraftUpdate", "must be %q or %q, got %q", DraftUpdateRepost, DraftUpdatePut, cfg.DraftUpdate)
	}
	switch cfg.StatusMethod = cmp.Or(strings.ToUpper(cfg.StatusMethod), DefaultStatusMethod); cfg.StatusMethod {
	case http.MethodPut, http.MethodPost:
	default:
		return cfg, "", configError("StatusMethod", "must be PUT or POST, got %q", cfg.StatusMethod)
	}
	cfg.StatusPath = cmp.Or(cfg.StatusPath, DefaultStatusPath)
	if cfg.StatusPath != StatusPathAuto && !isStatusForm(cfg.StatusPath) {
		return cfg, "", configError("StatusPath", "must be %q or one of %s, got %q",
			StatusPathAuto, strings.Join(statusForms(), ", "), cfg.StatusPath)
	}
	return cfg, api, nil
}

// firstNegative names the first negative integer field of cfg.
func firstNegative(cfg Config) string {
	switch {
	case cfg.MaxAttempts < 0:
		return "MaxAttempts"
	case cfg.Burst < 0:
		return "Burst"
	}
	return "MaxBodyBytes"
}

// ConfigError is New's error for an invalid field of Config: Field names
// it as the struct does ("DraftUpdate"), so that a caller can name it in
// its own words (a configuration file's key).
type ConfigError struct {
	Field string
	Err   error // what is wrong with the value
}

// Error returns "Field: what is wrong".
func (e *ConfigError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns what is wrong.
func (e *ConfigError) Unwrap() error { return e.Err }

// configError is a *ConfigError about field.
func configError(field, format string, args ...any) *ConfigError {
	return &ConfigError{Field: field, Err: fmt.Errorf(format, args...)}
}

// defaultHTTPClient is http.DefaultTransport's clone (dial 30s, TLS
// handshake 10s, idle connections 90s and at most idle of them, proxy from the environment) in a
// client that returns redirects instead of following them: an API call that
// is redirected is misconfigured, and following would resend the token.
func defaultHTTPClient(idle int) *http.Client {
	if idle <= 0 {
		idle = 16
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = idle
	t.MaxIdleConnsPerHost = idle
	return &http.Client{
		Transport: t,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// sleepCtx waits d or until done is closed; it reports whether d elapsed.
func sleepCtx(done <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-done:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}
