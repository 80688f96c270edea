package sync

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/redact"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// Defaults of Config.
const (
	DefaultSchedule        = "@every 1m"
	DefaultConcurrency     = 4
	DefaultPassTimeout     = 10 * time.Minute
	DefaultRetryBackoffMin = time.Minute
	DefaultRetryBackoffMax = time.Hour
	DefaultMaxConflicts    = 3
	DefaultWatchSubmitted  = 30 * 24 * time.Hour
	DefaultMaxNewPerPass   = 100
	// MinScheduleInterval is the shortest time between two passes a
	// schedule may ask for: cron counts whole seconds (it would round a
	// shorter interval up without a word), and passes never overlap, so a
	// shorter one could not be kept anyway. An idle pass costs one
	// database round trip and one list call.
	MinScheduleInterval = time.Second
	DefaultQuoteType    = "Estimate"
)

// Config tunes the reconciler. The zero value of each field means its
// default; DefaultConfig returns them spelled out.
type Config struct {
	// Insurer names the insurer whose requests the engine works on (its
	// events and log lines carry it). Default shopdb.DefaultInsurer.
	Insurer string
	// Schedule is a robfig/cron spec for passes: five fields
	// ("*/5 * * * *") or a descriptor ("@every 1m"). Default "@every 1m".
	Schedule string
	// Location is the time zone the schedule is read in. Default time.Local.
	Location *time.Location
	// Concurrency bounds how many requests a pass works on at once.
	// Default 4.
	Concurrency int
	// PassTimeout bounds one pass; what is unfinished is left for the next
	// one. Default 10m.
	PassTimeout time.Duration
	// RetryBackoffMin and RetryBackoffMax bound the wait before a request
	// whose remote call failed temporarily, or a failed delivery, is tried
	// again; the wait doubles with every consecutive failure, ±20% (see
	// remote.Backoff). Defaults 1m and 1h.
	RetryBackoffMin time.Duration
	RetryBackoffMax time.Duration
	// MaxConflicts is how many consecutive 409 answers to an accept, while
	// the request stays pending, turn into a rejection (the job number is
	// taken on the remote). Default 3.
	MaxConflicts int
	// WatchSubmitted is how long after submission a job's lines are still
	// watched for changes that need a supplement. Default 720h (30 days);
	// negative: not watched.
	WatchSubmitted time.Duration
	// MaxNewPerPass bounds how many requests quotesync has not reserved yet
	// one pass takes on (soonest expiry first); the rest wait for the next
	// pass, so that a backlog is worked in slices and never outruns
	// PassTimeout. Default 100; negative: no bound.
	MaxNewPerPass int
	// Quote shapes the quote built from the shop's lines.
	Quote QuoteConfig
	// Secrets are redacted from every text the engine logs or writes to
	// quotesync's tables, the whole text before it is cut (Open gives
	// each engine the daemon's set). nil: none is.
	Secrets *redact.Secrets
}

// QuoteConfig shapes the quote built from a job's lines.
type QuoteConfig struct {
	// Type is the quote type, also its quoteId in status paths.
	// Default "Estimate".
	Type string
	// Rates are sent with every quote, keyed by work type. Default none.
	Rates map[string]decimal.Decimal
	// OmitReferenceID leaves referenceId out of the quote body (the seed
	// shows both forms). Default false: referenceId is the job number.
	OmitReferenceID bool
}

// DefaultConfig returns a Config with every default filled in.
func DefaultConfig() Config {
	return Config{
		Schedule:        DefaultSchedule,
		Location:        time.Local,
		Concurrency:     DefaultConcurrency,
		PassTimeout:     DefaultPassTimeout,
		RetryBackoffMin: DefaultRetryBackoffMin,
		RetryBackoffMax: DefaultRetryBackoffMax,
		MaxConflicts:    DefaultMaxConflicts,
		WatchSubmitted:  DefaultWatchSubmitted,
		MaxNewPerPass:   DefaultMaxNewPerPass,
		Quote:           QuoteConfig{Type: DefaultQuoteType},
	}
}

// retryBackoff is the policy of a request's next attempt and a failed
// delivery's next try.
func (c Config) retryBackoff() remote.Backoff {
	return remote.Backoff{Initial: c.RetryBackoffMin, Max: c.RetryBackoffMax}
}

// withDefaults fills zero tunables with their defaults (DefaultConfig's),
// one by one as shopdb's and remote's do: a field whose zero means
// something (a false flag, an empty map) is never overwritten by accident.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	c.Insurer = cmp.Or(c.Insurer, shopdb.DefaultInsurer)
	c.Schedule = cmp.Or(c.Schedule, d.Schedule)
	c.Location = cmp.Or(c.Location, d.Location)
	c.Concurrency = cmp.Or(c.Concurrency, d.Concurrency)
	c.PassTimeout = cmp.Or(c.PassTimeout, d.PassTimeout)
	c.RetryBackoffMin = cmp.Or(c.RetryBackoffMin, d.RetryBackoffMin)
	c.RetryBackoffMax = cmp.Or(c.RetryBackoffMax, d.RetryBackoffMax)
	c.MaxConflicts = cmp.Or(c.MaxConflicts, d.MaxConflicts)
	c.WatchSubmitted = cmp.Or(c.WatchSubmitted, d.WatchSubmitted)
	c.MaxNewPerPass = cmp.Or(c.MaxNewPerPass, d.MaxNewPerPass)
	c.Quote.Type = cmp.Or(c.Quote.Type, d.Quote.Type)
	return c
}

// cronParser accepts five-field specs and descriptors such as "@every 1m".
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule parses a schedule as Config.Schedule takes it: five cron
// fields ("*/5 * * * *") or a descriptor ("@every 1m", "@hourly").
func ParseSchedule(spec string) (s cron.Schedule, err error) {
	// robfig/cron v3.0.1 slices out of range on a "TZ=" or "CRON_TZ="
	// prefix with nothing after it; refuse it first, and never let the
	// parser's panic take the daemon down.
	if t := strings.TrimSpace(spec); (strings.HasPrefix(t, "TZ=") || strings.HasPrefix(t, "CRON_TZ=")) && !strings.Contains(t, " ") {
		return nil, errors.New("a time zone prefix without a schedule after it")
	}
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("unparsable: %v", r)
		}
	}()
	return cronParser.Parse(spec)
}

// CheckSchedule refuses a schedule that is not a cron spec, an interval
// that is zero, negative, shorter than MinScheduleInterval or not a whole
// number of seconds (cron would quietly round "@every 1ns" up to 1s and
// "@every 1500ms" down), and one that never fires (such as the 30th of
// February: cron then sleeps forever while health looks fine). Its errors
// name key, where the schedule is configured (sync.schedule,
// remotes[1].schedule).
func CheckSchedule(key, spec string, loc *time.Location) error {
	s, err := ParseSchedule(spec)
	if err != nil {
		return fmt.Errorf("%s: %q is not a cron spec (%v); use five fields such as \"*/5 * * * *\" or \"@every 1m\"", key, spec, err)
	}
	if d, ok := everyInterval(spec); ok {
		switch {
		case d < MinScheduleInterval:
			return fmt.Errorf("%s: %q asks for a pass every %s; an interval must be at least %s, e.g. \"@every 1m\"", key, spec, d, MinScheduleInterval)
		case d%time.Second != 0:
			return fmt.Errorf("%s: %q is not a whole number of seconds, which is all cron counts; write e.g. \"@every %s\"", key, spec, d.Round(time.Second))
		}
	}
	loc = cmp.Or(loc, time.Local)
	if s.Next(time.Now().In(loc)).IsZero() {
		return fmt.Errorf("%s: %q never fires (no such date within five years); use a date that exists, e.g. \"0 9 * * 1-5\"", key, spec)
	}
	return nil
}

// everyInterval returns the interval of an "@every" spec as written, before
// cron rounds it, past an optional "TZ=zone " or "CRON_TZ=zone " prefix.
func everyInterval(spec string) (time.Duration, bool) {
	spec = strings.TrimSpace(spec)
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		_, spec, _ = strings.Cut(spec, " ")
		spec = strings.TrimSpace(spec)
	}
	rest, ok := strings.CutPrefix(spec, "@every ")
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(strings.TrimSpace(rest))
	return d, err == nil
}

// NextRuns returns the next n times the schedule of c fires after t (fewer
// when it stops firing); c must be valid.
func (c Config) NextRuns(t time.Time, n int) []time.Time {
	c = c.withDefaults()
	s, err := ParseSchedule(c.Schedule)
	if err != nil {
		return nil
	}
	var out []time.Time
	t = t.In(c.Location)
	for range n {
		t = s.Next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t)
	}
	return out
}

// Validate checks the configuration. Errors name the key as it is spelled
// in the YAML file ("sync.schedule", "quote.rates.Parts") and say how to
// fix it.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	if err := CheckSchedule("sync.schedule", c.Schedule, c.Location); err != nil {
		errs = append(errs, err)
	}
	if err := store.CheckInsurerName(c.Insurer); err != nil {
		errs = append(errs, fmt.Errorf("insurer: %w", err))
	}
	if c.Concurrency < 1 || c.Concurrency > 256 {
		errs = append(errs, fmt.Errorf("sync.concurrency: %d is out of range; use 1 to 256", c.Concurrency))
	}
	if c.PassTimeout < time.Second {
		errs = append(errs, fmt.Errorf("sync.pass_timeout: %s is too short; use at least 1s", c.PassTimeout))
	}
	if c.RetryBackoffMin < 0 || c.RetryBackoffMax < c.RetryBackoffMin {
		errs = append(errs, fmt.Errorf("sync.retry_backoff_max: %s must be at least sync.retry_backoff_min (%s)", c.RetryBackoffMax, c.RetryBackoffMin))
	}
	if c.MaxConflicts < 1 {
		errs = append(errs, fmt.Errorf("sync.max_conflicts: %d must be at least 1", c.MaxConflicts))
	}
	types := slices.Sorted(maps.Keys(c.Quote.Rates))
	for _, t := range types {
		if t == "" {
			errs = append(errs, errors.New("quote.rates: a rate has an empty work type; name the work type, e.g. RepairLabour: 95.50"))
		} else if c.Quote.Rates[t].IsNegative() {
			errs = append(errs, fmt.Errorf("quote.rates.%s: %s is negative; rates are positive amounts", t, c.Quote.Rates[t]))
		}
	}
	return errors.Join(errs...)
}
