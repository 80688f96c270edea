package emulator

import (
	"cmp"
	"crypto/subtle"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/renameio/v2"
)

const (
	// DefaultMaxBodyBytes caps a request body; larger bodies get 413.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultRequestTTL is the expiry of a seeded request that names none.
	DefaultRequestTTL = 72 * time.Hour
	// DefaultMaxHang bounds a "land_then_hang" fault without Latency.
	DefaultMaxHang = 5 * time.Minute
	// APIPrefix is the root of the integration API.
	APIPrefix = "/integrations/repairer"
	// AdminPrefix is the root of the admin API.
	AdminPrefix = "/_emulator/"
)

// ErrNoToken is returned by New when Options.Token is empty.
var ErrNoToken = errors.New("emulator: Options.Token is required")

// Options configures an Emulator.
type Options struct {
	// Token is the bearer token every API call must carry. Required.
	Token string
	// Now is the clock used for expiry and history; nil means time.Now.
	Now func() time.Time
	// StatePath, when set, is a JSON file the state is loaded from at New
	// (when it exists) and saved to atomically after every change.
	StatePath string
	// Seed seeds the random source used by fault probabilities and random
	// requests; 0 means a seed from the clock. Set it for reproducible tests.
	Seed uint64
	// MaxBodyBytes caps request bodies; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// AllowRemoteAdmin lets non-loopback peers use the admin API. The admin
	// API has no authentication: leave it false unless the listener is
	// reachable only by people you trust.
	AllowRemoteAdmin bool
	// Mode is ModeSpec or ModeDocumented; "" means ModeSpec.
	Mode string
	// ClientID is the OAuth2 client id of ModeDocumented, whose client
	// secret is Token; "" means DefaultClientID.
	ClientID string
	// TokenTTL is the lifetime of the access tokens of ModeDocumented; 0
	// means DefaultTokenTTL.
	TokenTTL time.Duration
}

// Emulator is an in-memory implementation of the Repairer Quotation
// Integration Service. It is safe for concurrent use.
type Emulator struct {
	opts   Options
	now    func() time.Time
	routes []route // the routing table; read-only after New

	mu         sync.Mutex // guards everything below
	st         *store
	calls      map[string]int
	faults     []*FaultInfo
	nextF      int
	rng        *rand.Rand
	tokens     map[string]time.Time // ModeDocumented: access token → expiry
	tokenCalls int                  // calls of the token endpoint
	issued     []string             // every access token issued (IssuedTokens)
	echoes     int                  // "echo" answers given: the form each one quotes first
}

// New returns an emulator with no requests, or with the state in
// opts.StatePath when that file exists.
func New(opts Options) (*Emulator, error) {
	if opts.Token == "" {
		return nil, ErrNoToken
	}
	opts.MaxBodyBytes = cmp.Or(max(opts.MaxBodyBytes, 0), DefaultMaxBodyBytes)
	opts.Mode = cmp.Or(opts.Mode, ModeSpec)
	if opts.Mode != ModeSpec && opts.Mode != ModeDocumented {
		return nil, fmt.Errorf("%w, got %q", ErrMode, opts.Mode)
	}
	opts.ClientID = cmp.Or(opts.ClientID, DefaultClientID)
	opts.TokenTTL = cmp.Or(max(opts.TokenTTL, 0), DefaultTokenTTL)
	e := &Emulator{opts: opts, now: opts.Now, routes: routeTable(opts.Mode)}
	if e.now == nil {
		e.now = time.Now
	}
	e.resetLocked()
	e.SetSeed(opts.Seed)
	st, err := loadStore(opts.StatePath)
	if err != nil {
		return nil, fmt.Errorf("load emulator state %s: %w", opts.StatePath, err)
	}
	e.st = st
	return e, nil
}

// SetSeed reseeds the random source of fault probabilities and random
// requests; 0 seeds from the clock.
func (e *Emulator) SetSeed(seed uint64) {
	seed = cmp.Or(seed, uint64(time.Now().UnixNano()))
	e.mu.Lock()
	e.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	e.mu.Unlock()
}

// ServeHTTP serves the integration API under APIPrefix and the admin API
// under AdminPrefix.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	switch {
	case strings.HasPrefix(path, AdminPrefix) || path == strings.TrimSuffix(AdminPrefix, "/"):
		if aerr := e.admin(w, r); aerr != nil {
			writeError(w, aerr, false) // JSON in every mode
		}
	case strings.HasPrefix(path, APIPrefix+"/"):
		e.serveAPI(w, r, strings.TrimPrefix(path, APIPrefix))
	case path == TokenPath && e.documented():
		e.serveToken(w, r)
	default:
		e.writeError(w, newError(http.StatusNotFound, CodeRouteNotFound,
			"no route %s %s: the API is under %s", r.Method, path, APIPrefix))
	}
}

// serveAPI serves one call of the integration API; rel is the escaped path
// below APIPrefix.
func (e *Emulator) serveAPI(w http.ResponseWriter, r *http.Request, rel string) {
	rt, allowed := matchRoute(e.routes, r, rel)
	if e.documented() {
		allowed = nil // every form the documentation does not show is a 404
	}
	if rt != nil {
		e.mu.Lock()
		e.calls[rt.name]++
		e.mu.Unlock()
	}
	if !e.authorized(r) {
		e.writeError(w, newError(http.StatusUnauthorized, CodeUnauthorized,
			"missing or invalid bearer token in the Authorization header"))
		return
	}
	if rt == nil {
		if len(allowed) > 0 {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			e.writeError(w, newError(http.StatusMethodNotAllowed, CodeMethodNotAllowed,
				"method %s not allowed on %s; allowed: %s", r.Method, rel, strings.Join(allowed, ", ")))
			return
		}
		e.writeError(w, newError(http.StatusNotFound, CodeRouteNotFound, "no route %s %s%s", r.Method, APIPrefix, rel))
		return
	}
	e.serveFaulted(w, r, rt.name, func(w http.ResponseWriter) { rt.handle(e, w, r) })
}

// authorized reports whether r carries "Authorization: Bearer <Token>"
// (ModeSpec) or a token of the token endpoint that has not expired
// (ModeDocumented).
func (e *Emulator) authorized(r *http.Request) bool {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	if e.documented() {
		e.mu.Lock()
		defer e.mu.Unlock()
		exp, ok := e.tokens[strings.TrimSpace(tok)]
		return ok && e.now().Before(exp)
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(e.opts.Token)) == 1
}

// Calls returns how many API calls each route has received since New or
// Reset, whatever their outcome (401 and injected faults included). Keys
// are the route names of Routes; admin calls are not counted.
func (e *Emulator) Calls() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.calls)
}

// State returns a deep copy of the requests, jobs, quotes and history.
func (e *Emulator) State() State {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.st.snapshot(e.now())
}

// Reset forgets every request, job, quote, history entry, call count,
// fault and access token, as if the emulator were new (a StatePath file is
// overwritten with the empty state).
func (e *Emulator) Reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.resetLocked()
	_ = e.commitLocked()
}

func (e *Emulator) resetLocked() {
	e.st, e.calls, e.faults = newStore(), make(map[string]int), nil
	e.tokens, e.tokenCalls, e.issued, e.echoes = make(map[string]time.Time), 0, nil, 0
}

// commitLocked writes the state to StatePath, if set, after a change (e.mu
// is held: writes land in the order of the changes). A failed write is the
// 500 the package documents; the change stays applied in memory and the
// next change writes the whole state again.
func (e *Emulator) commitLocked() *apiError {
	if e.opts.StatePath == "" {
		return nil
	}
	data, err := marshalIndent(persistedState{Format: stateFormat, State: e.st.snapshot(e.now())}, "  ")
	if err == nil {
		// renameio: a crash leaves the old state or the new, never half.
		err = renameio.WriteFile(e.opts.StatePath, data, 0o600)
	}
	if err != nil {
		return newError(http.StatusInternalServerError, CodeStateSaveFailed,
			"change applied in memory but not saved: save emulator state: %v", err)
	}
	return nil
}
