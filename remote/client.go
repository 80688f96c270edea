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
	"slices"
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
	// BackoffInitial and BackoffMax (DefaultBackoffInitial and
	// DefaultBackoffMax when zero) are the Backoff of temporary failures;
	// a Retry-After is waited at least, BackoffMax at most.
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
	// StatusPath is one of the four StatusPath… forms or StatusPathAuto;
	// DefaultStatusPath (the public documentation's example) when empty.
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
	// Secrets redacts every text the client keeps of an answer (an
	// Error's Body, a header it quotes) before it is cut, and every token
	// the client sends joins it first (AddFetched). The daemon passes its
	// one set; nil means a set of the client's own.
	Secrets *redact.Secrets
	// IdleConns is how many idle connections the default client keeps: as
	// many as calls in flight (the daemon sets sync.concurrency). Default 16.
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
	// statusForm is, in auto mode, the index+1 into autoCandidates of the
	// form that worked; 0 while unknown.
	statusForm atomic.Int32
	// sleep, now and rand (the backoff's chance): tests swap them.
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
		secrets: cmp.Or(cfg.Secrets, redact.New()),
		http:    cfg.HTTPClient,
		limiter: rate.NewLimiter(limit, cfg.Burst),
		sleep:   sleepCtx,
		now:     time.Now,
		rand:    rand.Float64,
	}
	if c.http == nil { // not cmp.Or: the default clones a transport
		c.http = defaultHTTPClient(cfg.IdleConns)
	}
	return c, nil
}

// Validate reports every invalid field of cfg, each a *ConfigError
// (joined), as New does.
func (cfg Config) Validate() error {
	_, _, err := cfg.normalize()
	return err
}

// normalize checks cfg (see Validate) and fills in defaults; it also
// returns the API root.
func (cfg Config) normalize() (Config, string, error) {
	var errs []error
	bad := func(field, format string, args ...any) { errs = append(errs, configError(field, format, args...)) }
	switch u, err := url.Parse(cfg.BaseURL); {
	case cfg.BaseURL == "":
		bad("BaseURL", "required")
	case err != nil:
		bad("BaseURL", "not a URL")
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		bad("BaseURL", "must be an absolute http or https URL, got %q", u.Redacted())
	case u.User != nil:
		bad("BaseURL", "must not carry credentials, got %q", u.Redacted())
	case u.RawQuery != "" || u.Fragment != "":
		bad("BaseURL", "must have no query or fragment, got %q", u.Redacted())
	}
	orDefault(bad, "Timeout", &cfg.Timeout, DefaultTimeout)
	orDefault(bad, "BackoffInitial", &cfg.BackoffInitial, DefaultBackoffInitial)
	orDefault(bad, "BackoffMax", &cfg.BackoffMax, DefaultBackoffMax)
	if cfg.BackoffMax < cfg.BackoffInitial {
		bad("BackoffMax", "%s is shorter than BackoffInitial (%s)", cfg.BackoffMax, cfg.BackoffInitial)
	}
	orDefault(bad, "MaxAttempts", &cfg.MaxAttempts, DefaultMaxAttempts)
	orDefault(bad, "Burst", &cfg.Burst, DefaultBurst)
	orDefault(bad, "MaxBodyBytes", &cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	cfg.UserAgent = cmp.Or(cfg.UserAgent, DefaultUserAgent)
	cfg.RateLimit = cmp.Or(cfg.RateLimit, DefaultRateLimit)
	cfg.BookingDateLayout = cmp.Or(cfg.BookingDateLayout, DefaultBookingDateLayout)
	if cfg.DraftUpdate = cmp.Or(strings.ToLower(cfg.DraftUpdate), DefaultDraftUpdate); cfg.DraftUpdate != DraftUpdateRepost && cfg.DraftUpdate != DraftUpdatePut {
		bad("DraftUpdate", "%q must be %s or %s", cfg.DraftUpdate, DraftUpdateRepost, DraftUpdatePut)
	}
	if cfg.StatusMethod = cmp.Or(strings.ToUpper(cfg.StatusMethod), DefaultStatusMethod); cfg.StatusMethod != http.MethodPut && cfg.StatusMethod != http.MethodPost {
		bad("StatusMethod", "%q must be PUT or POST", cfg.StatusMethod)
	}
	if cfg.StatusPath = cmp.Or(cfg.StatusPath, DefaultStatusPath); cfg.StatusPath != StatusPathAuto && !slices.Contains(statusForms, cfg.StatusPath) {
		bad("StatusPath", "%q must be one of %s, %s", cfg.StatusPath, strings.Join(statusForms, ", "), StatusPathAuto)
	}
	return cfg, strings.TrimRight(cfg.BaseURL, "/") + APIRoot, errors.Join(errs...)
}

// orDefault refuses a negative *v through bad, and makes a zero (or a
// refused negative) one def.
func orDefault[T int | int64 | time.Duration](bad func(field, format string, args ...any), name string, v *T, def T) {
	if *v < 0 {
		bad(name, "%v must not be negative; 0 means the default, %v", *v, def)
	}
	*v = cmp.Or(max(*v, 0), def)
}

// ConfigError is New's error for an invalid field of Config, named as the
// struct does ("DraftUpdate"), for a caller to name in its own words.
type ConfigError struct {
	Field string
	Err   error // what is wrong with the value
}

// Error returns "Field: what is wrong".
func (e *ConfigError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns what is wrong.
func (e *ConfigError) Unwrap() error { return e.Err }

func configError(field, format string, args ...any) *ConfigError {
	return &ConfigError{Field: field, Err: fmt.Errorf(format, args...)}
}

// defaultHTTPClient is http.DefaultTransport's clone, keeping at most idle
// idle connections, in a client that returns redirects instead of
// following them: a redirected API call is misconfigured, and following
// would resend the token.
func defaultHTTPClient(idle int) *http.Client {
	idle = cmp.Or(max(idle, 0), 16)
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
	select {
	case <-done:
		return false
	default:
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
