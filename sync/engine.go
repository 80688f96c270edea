package sync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	gosync "sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/jmoiron/sqlx"
	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// Remote is the integration service as the engine uses it;
// *remote.Client implements it.
type Remote interface {
	ListRequests(ctx context.Context) ([]remote.Request, error)
	Accept(ctx context.Context, requestID, referenceID string, bookingDate time.Time) (remote.Job, error)
	CreateQuote(ctx context.Context, jobID string, q remote.Quote) (remote.Quote, error)
	UpdateDraft(ctx context.Context, jobID string, q remote.Quote) (remote.Quote, error)
	SetStatus(ctx context.Context, jobID, quoteType, status string) (remote.Quote, error)
	// StatusForm returns the status change form in use ("POST
	// /jobs/{jobId}/quotes/status/{status}"); ok is false while
	// remote.status_path auto has not found one.
	StatusForm() (form string, ok bool)
	// UseStatusForm makes auto mode use form from now on (one that an
	// earlier run found); a form the client does not know is an error.
	UseStatusForm(form string) error
}

// Shop is the integrator's mapping of the shop's tables as the engine
// reads it; *shopdb.DB implements it. Jobs' statements run in the
// transaction of quotesync's store (Store.InTx), on its SQL.
type Shop interface {
	Jobs(tx *sqlx.Tx, nr shopdb.NewRequest) *shopdb.Jobs
	JobStates(ctx context.Context, jobs []string) (map[string]shopdb.JobState, map[string]error, error)
	Lines(ctx context.Context, jobs []string) (map[string]shopdb.JobLines, error)
	EachLines(ctx context.Context, jobs []string, f func(job string, jl shopdb.JobLines)) error
	QuoteFields(ctx context.Context, jobs []string) (map[string]map[string]string, map[string]error, error)
	HasShopChanged() bool
	Fingerprint(ctx context.Context, state string) (shopdb.Fingerprint, error)
}

// Store is quotesync's own tables as the engine reads and writes them;
// *store.Store implements it. Its writes of a request's state (Insert,
// Update, a Tx's, Move, UpdateMarkers, RecordOnce) are the executor's
// alone (exec.go).
type Store interface {
	OpenRequests(ctx context.Context, q store.OpenQuery) ([]store.Request, error)
	Request(ctx context.Context, requestID string) (store.Request, error)
	InTx(ctx context.Context, requestID string, f func(ctx context.Context, tx *store.Tx) error) error
	ReadTx(ctx context.Context, requestID string, f func(ctx context.Context, tx *store.Tx) error) error
	Insert(ctx context.Context, r store.Request, ev store.Event) (store.Request, error)
	Update(ctx context.Context, cur, next store.Request, ev store.Event) (store.Request, error)
	Move(ctx context.Context, rows []store.Request, to string, evs []store.Event, rest *store.Rekey) ([]store.Request, store.Adopted, error)
	RecordOnce(ctx context.Context, ev store.Event) (bool, error)
	JobHolder(ctx context.Context, job string) (store.Request, error)
	Setting(ctx context.Context, name string) (string, bool, error)
	PutSetting(ctx context.Context, name, value string) error
	StateFingerprint() string
	UpdateMarkers(ctx context.Context, us []store.MarkerUpdate) (int, error)
}

// Errors a pass returns that callers branch on.
var (
	// ErrUnauthorized: the pass stopped because the remote refused the
	// token.
	ErrUnauthorized = errors.New("the remote refused the token")
	// ErrInterrupted: the caller cancelled the pass (shutdown); what it did
	// is recorded and the next pass takes over.
	ErrInterrupted = errors.New("pass interrupted")
)

// persistTimeout bounds a state write that records the outcome of a remote
// call; it runs even when the pass is being cancelled, so that what the
// remote did is never forgotten.
const persistTimeout = 15 * time.Second

// settingStatusForm is the settings key of the status form auto mode
// found, before insurers had names; an insurer's is StatusFormKey.
const settingStatusForm = "remote.status_form"

// Engine runs passes. It is safe to call Pass and Plan from one goroutine
// at a time; Run makes sure passes never overlap.
type Engine struct {
	cfg    Config
	remote Remote
	shop   Shop
	store  Store
	log    *zap.Logger
	obs    observers

	// Now is the engine's clock. Default time.Now.
	Now func() time.Time
	// Rand is the engine's source of chance: the spread of a request's
	// backoff, a number in [0, 1). Default math/rand/v2's Float64. The
	// decisions take both as inputs, so that they stay pure.
	Rand func() float64

	passStart atomic.Int64 // unix nanoseconds of the running pass's start, 0 when idle
	// heldExamined: a successful pass examined every held job again since
	// this engine was built (a restart or a reload builds a new one), so
	// that a hold the new configuration lifts is lifted; until then every
	// pass does.
	heldExamined atomic.Bool
	formLoaded   atomic.Bool  // the status form found by an earlier run was loaded
	failStreak   atomic.Int64 // consecutive failed passes

	mu       gosync.Mutex
	reported map[string]bool // the pending list's bad entries the last listing reported (see listPending)
	cache    *stateCache     // what the last pass read (see cache.go)
	dirty    bool            // quotesync's state changed since the cache was read
	// lastJobs are the jobs whose states the last pass asked for, joined
	// by NUL, without shop_changed: the next reads them ahead.
	lastJobs string
	// aheadStarted, aheadPasses and aheadAfter count the passes that
	// started reading states ahead, those that used them and the jobs
	// they read after (for tests).
	aheadStarted, aheadPasses, aheadAfter int

	outbox *Outbox // what events queue for delivery; nil: nothing (see Open)
}

// New returns an engine of the service rem, the shop's mapping shop and
// quotesync's store st. cfg is validated; zero fields take their
// defaults. Events go to a LogObserver on log, then to obs in order.
func New(cfg Config, rem Remote, shop Shop, st Store, log *zap.Logger, obs ...Observer) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("sync config: %w", err)
	}
	if rem == nil || shop == nil || st == nil || log == nil {
		return nil, errors.New("new engine: remote, shop, store and logger are required")
	}
	return &Engine{
		cfg:      cfg.withDefaults(),
		remote:   rem,
		shop:     shop,
		store:    st,
		log:      log,
		obs:      append(observers{NewLogObserver(log, cfg.Secrets)}, obs...),
		Now:      time.Now,
		Rand:     rand.Float64,
		reported: make(map[string]bool),
	}, nil
}

// Config returns the engine's configuration with defaults filled in.
func (e *Engine) Config() Config { return e.cfg }

// Busy reports when the running pass (or plan) started; ok is false when
// none runs. The daemon's watchdog uses it to tell a long pass from a stuck
// one.
func (e *Engine) Busy() (since time.Time, ok bool) {
	n := e.passStart.Load()
	if n == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, n), true
}

// emit hands ev to the observers, stamped with the time and the
// engine's insurer.
func (e *Engine) emit(ev Event) {
	ev.Insurer = cmp.Or(ev.Insurer, e.cfg.Insurer)
	e.emitDaemon(ev)
}

// emitDaemon hands an event of the daemon as a whole (the lock, shared
// by every engine) to the observers, stamped with the time only.
func (e *Engine) emitDaemon(ev Event) {
	if ev.At.IsZero() {
		ev.At = e.Now()
	}
	e.obs.Observe(ev)
}

// Insurer is the name of the insurer whose requests e works on.
func (e *Engine) Insurer() string { return e.cfg.Insurer }

// Summary counts what one pass did.
type Summary struct {
	Pending        int // requests the remote listed as pending
	Tracked        int // rows in quotesync's state the pass read
	Reserved       int // job numbers reserved
	Accepted       int // requests accepted (confirmed or inferred)
	AcceptUnknown  int // requests whose accept's outcome is unknown
	TakenElsewhere int // requests someone else accepted
	Drafted        int // first Draft pushes
	Redrafted      int // Draft re-pushes after a change
	Submitted      int // quotes submitted
	Rejected       int // requests rejected
	Gone           int // requests gone
	Waiting        int // requests waiting for a shop job
	Held           int // jobs held because their data (or the configuration) does not allow a push
	Supplements    int // submitted jobs whose lines changed
	Retrying       int // requests whose step failed for now
	// Later counts the new requests left for the next pass: a backlog is
	// worked in slices (Config.MaxNewPerPass), and no step starts once the
	// pass has used most of its time.
	Later    int
	Duration time.Duration
	// Interrupted: the pass was cancelled before its end (a shutdown, or
	// a reload that would not wait for it), whatever else failed in it.
	Interrupted bool
}

// add adds the counts (every int field) of o to s; the duration is the longer one (the
// passes of several insurers run at once).
func (s *Summary) add(o Summary) {
	sv, ov := reflect.ValueOf(s).Elem(), reflect.ValueOf(o)
	for i := range sv.NumField() {
		if f := sv.Field(i); f.Kind() == reflect.Int {
			f.SetInt(f.Int() + ov.Field(i).Int())
		}
	}
	s.Duration = max(s.Duration, o.Duration)
	s.Interrupted = s.Interrupted || o.Interrupted
}

// Changed reports whether the pass changed any state.
func (s Summary) Changed() bool {
	return s.Reserved+s.Accepted+s.AcceptUnknown+s.TakenElsewhere+s.Drafted+s.Redrafted+s.Submitted+
		s.Rejected+s.Gone+s.Supplements > 0
}

// summaryCounts are the counts of a Summary each event kind adds one to.
var summaryCounts = map[EventKind]func(*Summary) *int{
	EventReserved:       func(s *Summary) *int { return &s.Reserved },
	EventAccepted:       func(s *Summary) *int { return &s.Accepted },
	EventAcceptUnknown:  func(s *Summary) *int { return &s.AcceptUnknown },
	EventTakenElsewhere: func(s *Summary) *int { return &s.TakenElsewhere },
	EventDrafted:        func(s *Summary) *int { return &s.Drafted },
	EventRedrafted:      func(s *Summary) *int { return &s.Redrafted },
	EventSubmitted:      func(s *Summary) *int { return &s.Submitted },
	EventRejected:       func(s *Summary) *int { return &s.Rejected },
	EventGone:           func(s *Summary) *int { return &s.Gone },
	EventSupplement:     func(s *Summary) *int { return &s.Supplements },
	EventRetrying:       func(s *Summary) *int { return &s.Retrying },
	EventReserveFailed:  func(s *Summary) *int { return &s.Retrying },
}

// count adds ev to the summary.
func (s *Summary) count(ev Event) {
	if c := summaryCounts[ev.Kind]; c != nil {
		*c(s)++
	}
}

// Plan is what a pass would do, computed from real reads with no write
// anywhere (see Engine.Plan).
type Plan struct {
	Pending int      `json:"pending"`
	Tracked int      `json:"tracked"`
	Actions []Action `json:"actions"`
	// Insurers is each insurer's part, with several insurers (Daemon.Plan):
	// its counts, and why its plan could not be computed.
	Insurers []InsurerPlan `json:"insurers,omitempty"`
}

// InsurerPlan is one insurer's part of a Plan.
type InsurerPlan struct {
	Insurer string `json:"insurer"`
	Pending int    `json:"pending"`
	Tracked int    `json:"tracked"`
	// Error says why the insurer's plan is missing or incomplete; the
	// actions computed before it are in the Plan's Actions.
	Error string `json:"error,omitempty"`
}

// Action is one step a pass would take.
type Action struct {
	Insurer string      `json:"insurer"`
	Request string      `json:"request"`
	Claim   string      `json:"claim,omitempty"`
	Job     string      `json:"job,omitempty"`
	Phase   store.Phase `json:"phase,omitempty"` // the phase now; "" for a new request
	Do      string      `json:"do"`              // one of the Do… constants
	Why     string      `json:"why"`
	Items   int         `json:"items,omitempty"` // quote items, for pushes
}

// What an Action does.
const (
	DoReserve        = "reserve job and accept"
	DoCreateJob      = "create job and accept"
	DoAccept         = "accept"
	DoWait           = "wait for a shop job"
	DoConfirm        = "confirm the accept"
	DoMarkGone       = "mark gone"
	DoPushDraft      = "push draft"
	DoSubmit         = "submit"
	DoHold           = "hold"
	DoFlagSupplement = "flag supplement needed"
	DoSkip           = "skip"
)

// Pass runs one pass: list, accept, push, submit. It returns what it did;
// the error is non-nil when the pass as a whole failed (the pending list or
// the state could not be read, or the token was refused). Failures of single
// requests are recorded on their rows and counted in the Summary instead.
func (e *Engine) Pass(ctx context.Context) (Summary, error) {
	p, err := e.pass(ctx, passKeep)
	return p.summary, err
}

// Plan computes what a pass would do now, from real reads of the remote's
// pending list, quotesync's state and the shop's lines, without writing
// anywhere: no remote write, no shop statement that writes, no state change.
// It is a pass whose plans are printed as Actions instead of performed.
// On a database where quotesync's tables do not exist yet it plans as if
// they were empty.
func (e *Engine) Plan(ctx context.Context) (Plan, error) {
	p, err := e.pass(ctx, passDry)
	return Plan{Pending: p.summary.Pending, Tracked: p.summary.Tracked, Actions: p.actions}, err
}
