package statuspage

import (
	"bytes"
	"cmp"
	"context"
	"embed" // the style sheet and the templates
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	gosync "sync"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/webauth"
	"github.com/quotesync/quotesync/shopdb/store"
)

// Defaults of Options.
const (
	// DefaultRefresh is how often the browser reloads a page.
	DefaultRefresh = 30 * time.Second
	// DefaultCacheFor is how long a read is shown again instead of read
	// anew: however many browsers look, the database sees one read of a
	// page per this interval.
	DefaultCacheFor = 2 * time.Second
	// DefaultReadTimeout bounds the reads of one page, the wait for the
	// read in progress included.
	DefaultReadTimeout = 5 * time.Second
	// maxCached caps the pages kept.
	maxCached = 64
)

// Options configure the page.
type Options struct {
	// Store returns quotesync's store to read (the daemon's current
	// one); nil while there is none yet.
	Store func() *store.Store
	// Insurers returns the names of the configured insurers, in order
	// (the daemon's current configuration). Nil: none is known, and the
	// page names the insurers when it shows several.
	Insurers func() []string
	// Enabled says whether the page is on (metrics.status_page); nil:
	// always. Off, every page answers 404 saying so.
	Enabled func() bool
	// Location is the time zone times are shown in. Default UTC.
	Location *time.Location
	// Refresh is the browser's reload interval. Default DefaultRefresh.
	Refresh time.Duration
	// PageSize is how many requests a page lists. Default DefaultPageSize.
	PageSize int
	// CacheFor, ReadTimeout: see the defaults of the same names.
	CacheFor, ReadTimeout time.Duration
	// Health, when set, says at the top of every page whether the daemon
	// works: ok, its verdict in words (as /healthz gives it) and when the
	// last pass succeeded (zero: none yet). It must not block.
	Health func() (ok bool, words string, lastSuccess time.Time)
	// Version is shown at the foot of the page.
	Version string
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// css is the pages' style sheet.
//
//go:embed style.css
var css string

// Handler serves the status page under /status.
type Handler struct {
	o    Options
	tmpl map[string]*template.Template
	mux  *http.ServeMux

	read  chan struct{} // one read of the database at a time
	mu    gosync.Mutex  // guards cache
	cache map[string]cached
}

type cached struct {
	at   time.Time
	data any
}

// New returns the page's handler; it serves GET /status (the list,
// ?need=person for what needs a person, ?insurer=NAME for one insurer's,
// &page=N), GET /status/requests/{insurer}/{id} (one request and its
// timeline; /status/requests/{id} names the request of the one insurer
// that tracks the id, or lets a person choose) and GET /status/find?q=
// (a request id or job number).
func New(o Options) *Handler {
	o.Location = cmp.Or(o.Location, time.UTC)
	o.Refresh = cmp.Or(max(o.Refresh, 0), DefaultRefresh)
	o.PageSize = cmp.Or(max(o.PageSize, 0), DefaultPageSize)
	o.CacheFor = cmp.Or(max(o.CacheFor, 0), DefaultCacheFor)
	o.ReadTimeout = cmp.Or(max(o.ReadTimeout, 0), DefaultReadTimeout)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Insurers == nil {
		o.Insurers = func() []string { return nil }
	}
	h := &Handler{o: o, read: make(chan struct{}, 1), cache: map[string]cached{}}
	h.tmpl = h.parse()
	h.mux = http.NewServeMux()
	h.mux.HandleFunc("GET /status", h.list)
	h.mux.HandleFunc("GET /status/requests/{id}", h.request)
	h.mux.HandleFunc("GET /status/requests/{insurer}/{id}", h.request)
	h.mux.HandleFunc("GET /status/find", h.find)
	h.mux.HandleFunc("/status/", func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, http.StatusNotFound, "Not found", "There is no such page; the list of requests is at /status.")
	})
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.o.Enabled != nil && !h.o.Enabled() {
		http.Error(w, "the status page is off (metrics.status_page: false)", http.StatusNotFound)
		return
	}
	webauth.PageHeaders(w.Header())
	h.mux.ServeHTTP(w, r)
}

// view is what the layout renders.
type view struct {
	Title          string
	Now            time.Time
	RefreshSeconds int
	CSS            template.CSS // the style sheet, ours: trusted
	Version        string
	Health         *health // nil: not known
	User           string  // who logged in (a logout button); "" none

	List    List
	Story   Story
	Query   string
	Found   []Story
	Message string
}

// health is the daemon's verdict shown at the top.
type health struct {
	OK          bool
	Words       string
	LastSuccess time.Time
}

// view is the frame of a page answering r (nil in tests: no user).
func (h *Handler) view(r *http.Request, title string) view {
	v := view{Title: title, Now: h.o.Now(), RefreshSeconds: int(h.o.Refresh / time.Second), CSS: template.CSS(css), Version: h.o.Version}
	if r != nil {
		v.User = webauth.User(r.Context())
	}
	if h.o.Health != nil {
		ok, words, last := h.o.Health()
		v.Health = &health{OK: ok, Words: words, LastSuccess: last}
	}
	return v
}

// insurerParam is r's ?insurer=, checked; ok is false when it answered
// the request with an error page.
func (h *Handler) insurerParam(w http.ResponseWriter, r *http.Request) (name string, ok bool) {
	name = r.URL.Query().Get("insurer")
	if name != "" && store.CheckInsurerName(name) != nil {
		h.fail(w, r, http.StatusBadRequest, "Bad insurer name",
			fmt.Sprintf("insurer=%q is not an insurer name: the list shows each insurer's link.", name))
		return "", false
	}
	return name, true
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := Filter{PersonOnly: q.Get("need") == "person", Size: h.o.PageSize, Configured: h.o.Insurers()}
	var err error
	f.Page, err = strconv.Atoi(q.Get("page"))
	if q.Get("page") != "" && (err != nil || f.Page < 1) {
		h.fail(w, r, http.StatusBadRequest, "Bad page number", fmt.Sprintf("page=%q is not a page number; pages count from 1.", q.Get("page")))
		return
	}
	var ok bool
	if f.Insurer, ok = h.insurerParam(w, r); !ok {
		return
	}
	key := fmt.Sprintf("list %t %d %s %s", f.PersonOnly, f.Page, f.Insurer, strings.Join(f.Configured, ","))
	data, err := h.load(r.Context(), key, func(ctx context.Context, db *store.Store) (any, error) {
		return LoadFiltered(ctx, db, f)
	})
	if err != nil {
		h.failRead(w, r, err)
		return
	}
	v := h.view(r, "Quote requests")
	if f.PersonOnly {
		v.Title = "Needs a person"
	}
	if f.Insurer != "" {
		v.Title += " · " + f.Insurer
	}
	v.List = data.(List)
	h.renderCode(w, http.StatusOK, "list", v)
}

// request answers /status/requests/{insurer}/{id}, and
// /status/requests/{id} (?insurer=NAME): the request of the one insurer
// that tracks the id (with one configured, its own), else a choice.
func (h *Handler) request(w http.ResponseWriter, r *http.Request) {
	id, ins := r.PathValue("id"), r.PathValue("insurer")
	if ins == "" {
		var ok bool
		if ins, ok = h.insurerParam(w, r); !ok {
			return
		}
	} else if store.CheckInsurerName(ins) != nil {
		h.fail(w, r, http.StatusNotFound, "Not found", "There is no insurer "+ins+"; the list of requests is at /status.")
		return
	}
	configured := h.o.Insurers()
	key := "request " + ins + " " + id + " " + strings.Join(configured, ",")
	data, err := h.load(r.Context(), key, func(ctx context.Context, db *store.Store) (any, error) {
		if ins != "" {
			return LoadStory(ctx, db, store.RequestKey{Insurer: ins, RequestID: id}, configured, DefaultTimelineLimit)
		}
		st, err := FindStories(ctx, db, Lookup{Arg: id, IDOnly: true, Configured: configured})
		if err != nil {
			return nil, err
		}
		return st[0], nil
	})
	var amb *AmbiguousError
	switch {
	case errors.As(err, &amb):
		h.renderFound(w, r, "Request "+id, id, found{stories: storiesOf(amb.Matches), ambiguous: true})
		return
	case errors.Is(err, store.ErrNotFound), errors.Is(err, ErrNotFound):
		of := ""
		if ins != "" {
			of = " of insurer " + ins
		}
		h.fail(w, r, http.StatusNotFound, "Request "+id+" is not tracked",
			"quotesync does not track a request "+id+of+". Find looks up request ids and job numbers.")
		return
	case err != nil:
		h.failRead(w, r, err)
		return
	}
	st := data.(Story)
	v := h.view(r, "Request "+id)
	if st.Named {
		v.Title += " · " + st.Insurer
	}
	v.Story = st
	h.renderCode(w, http.StatusOK, "request", v)
}

func storiesOf(rs []Request) []Story {
	out := make([]Story, len(rs))
	for i, r := range rs {
		out[i] = Story{Request: r}
	}
	return out
}

func (h *Handler) find(w http.ResponseWriter, r *http.Request) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		http.Redirect(w, r, "/status", http.StatusSeeOther)
		return
	}
	if len(q) > 64 {
		h.fail(w, r, http.StatusBadRequest, "Too long", "Request ids and job numbers have 64 characters at most.")
		return
	}
	configured := h.o.Insurers()
	data, err := h.load(r.Context(), "find "+strings.Join(configured, ",")+" "+q, func(ctx context.Context, db *store.Store) (any, error) {
		st, err := FindStories(ctx, db, Lookup{Arg: q, Configured: configured, Limit: 1})
		var amb *AmbiguousError
		switch {
		case errors.Is(err, ErrNotFound):
			return found{}, nil
		case errors.As(err, &amb):
			return found{stories: storiesOf(amb.Matches), ambiguous: true}, nil
		}
		return found{stories: st}, err
	})
	if err != nil {
		h.failRead(w, r, err)
		return
	}
	f := data.(found)
	if len(f.stories) == 1 {
		http.Redirect(w, r, f.stories[0].URL(), http.StatusSeeOther)
		return
	}
	h.renderFound(w, r, "Find "+q, q, f)
}

// renderFound shows what a find for q found, asking a person to choose
// when it is several insurers' requests with the id q.
func (h *Handler) renderFound(w http.ResponseWriter, r *http.Request, title, q string, f found) {
	v := h.view(r, title)
	v.Query, v.Found = q, f.stories
	if f.ambiguous {
		v.Message = "Several insurers' services sent a request " + q + ": choose one."
	}
	h.renderCode(w, http.StatusOK, "find", v)
}

// load returns the data under key: read again by fn when older than
// CacheFor, one read at a time.
func (h *Handler) load(ctx context.Context, key string, fn func(context.Context, *store.Store) (any, error)) (any, error) {
	if d, ok := h.cached(key); ok {
		return d, nil
	}
	ctx, cancel := context.WithTimeout(ctx, h.o.ReadTimeout)
	defer cancel()
	select {
	case h.read <- struct{}{}:
		defer func() { <-h.read }()
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for the read in progress: %w", ctx.Err())
	}
	if d, ok := h.cached(key); ok { // read by the one we waited for
		return d, nil
	}
	var db *store.Store
	if h.o.Store != nil {
		db = h.o.Store()
	}
	if db == nil {
		return nil, errNotReady
	}
	d, err := fn(ctx, db)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.cache) >= maxCached {
		clear(h.cache)
	}
	h.cache[key] = cached{at: h.o.Now(), data: d}
	return d, nil
}

func (h *Handler) cached(key string) (any, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.cache[key]
	if !ok || h.o.Now().Sub(c.at) >= h.o.CacheFor {
		return nil, false
	}
	return c.data, true
}

// found is what find found: ambiguous when the stories are several
// insurers' requests with the id asked for.
type found struct {
	stories   []Story
	ambiguous bool
}

var errNotReady = errors.New("the daemon has not connected to the database yet")

func (h *Handler) failRead(w http.ResponseWriter, r *http.Request, err error) {
	h.fail(w, r, http.StatusServiceUnavailable, "The state could not be read",
		"quotesync's state could not be read from the database: "+err.Error()+". The page tries again at its next refresh.")
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, code int, title, msg string) {
	v := h.view(r, title)
	v.Message = msg
	h.renderCode(w, code, "error", v)
}

// when is a time in the page's zone, with how long ago (or how far
// ahead) it is; "-" for none.
func (h *Handler) when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	s := t.In(h.o.Location).Format("2006-01-02 15:04:05 MST")
	d := h.o.Now().Sub(t)
	if d < 0 {
		return s + " (in " + Span(-d) + ")"
	}
	return s + " (" + Span(d) + " ago)"
}

// Span is a duration as people say it: 45s, 12m, 3h, 5d.
func Span(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

// pageURL is the list's address for page of everything or of what needs
// a person, of every insurer's requests or of insurer's.
func pageURL(insurer string, person bool, page int) string {
	v := url.Values{}
	if insurer != "" {
		v.Set("insurer", insurer)
	}
	if person {
		v.Set("need", "person")
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	if len(v) == 0 {
		return "/status"
	}
	return "/status?" + v.Encode()
}

// The pages are html/template templates, so every value is escaped for
// the context it lands in (text, attribute, URL) without a call site
// having to remember. a-h/templ was weighed: it escapes as well and
// keeps the binary smaller (no run-time method lookup), but it adds a
// code generator to the build and generated files to review, and a
// reviewer trusts the standard library's escaper more than a newer one.

//go:embed templates
var templates embed.FS

// pageNames are the pages a template set is parsed for, each with the
// layout around its "content".
var pageNames = []string{"list", "request", "find", "error"}

// parse returns the pages' templates, by name, with h's functions.
func (h *Handler) parse() map[string]*template.Template {
	funcs := template.FuncMap{
		"when":    h.when,
		"clock":   func(t time.Time) string { return t.In(h.o.Location).Format("15:04:05 MST") },
		"iso":     func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"short":   short,
		"add":     func(a, b int) int { return a + b },
		"sub":     func(a, b int) int { return a - b },
		"pageURL": pageURL,
	}
	out := make(map[string]*template.Template, len(pageNames))
	for _, name := range pageNames {
		// Must: the templates are embedded, and TestRenderGolden parses them.
		out[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templates,
			"templates/layout.html", "templates/"+name+".html"))
	}
	return out
}

// renderCode answers with code and the page name shows for v. The page
// is written to a buffer first, so a template error answers 500 instead
// of half a page.
func (h *Handler) renderCode(w http.ResponseWriter, code int, name string, v view) {
	var buf bytes.Buffer
	if err := h.tmpl[name].ExecuteTemplate(&buf, "layout", v); err != nil {
		http.Error(w, "render the status page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}
