package sync_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	gosync "sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

const testToken = "engine-test-token-7f3a9c"

// rig is the daemon assembled by qsync.Open, as the command assembles it,
// on its real parts: a sample shop on the real MariaDB, the emulator over
// real HTTP and the real remote client.
type rig struct {
	t      *testing.T
	ctx    context.Context
	d      *shopdbtest.Database
	db     *shopdb.DB   // the shop's mapping
	st     *store.Store // quotesync's store
	shop   *sampleshop.Shop
	emu    *emulator.Emulator
	url    string
	client *remote.Client
	engine *qsync.Engine
	outbox *qsync.Outbox
	logs   *observer.ObservedLogs
	log    *zap.Logger // writes to logs
	events *recorder   // every event the engine emitted
	clock  *clock
	set    qsync.Settings // what the daemon was opened with
}

// recorder is an observer that keeps every event.
type recorder struct {
	mu  gosync.Mutex
	evs []qsync.Event
}

func (rc *recorder) Observe(ev qsync.Event) {
	rc.mu.Lock()
	rc.evs = append(rc.evs, ev)
	rc.mu.Unlock()
}

// of returns the events of one kind, oldest first.
func (rc *recorder) of(kind qsync.EventKind) []qsync.Event {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []qsync.Event
	for _, ev := range rc.evs {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// engineLog is the rig's logger, for another engine whose lines the test
// reads from the same logs.
func (r *rig) engineLog() *zap.Logger { return r.log }

// rigOptions change the rig's parts before they are built.
type rigOptions struct {
	sync   func(*qsync.Config)
	remote func(*remote.Config)
	shop   func(*shopdb.Config)
	token  string           // the client's token; default testToken
	emuNow func() time.Time // the emulator's clock; default time.Now
	// documented runs the emulator in its documented mode, the client
	// taking OAuth2 client-credentials tokens from its token endpoint.
	documented bool
}

func newRig(t *testing.T, o rigOptions) *rig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	r := &rig{t: t, ctx: ctx, clock: &clock{t: time.Now()}, events: &recorder{}}
	r.d = shopdbtest.NewSampleShop(t)
	cfg := r.d.Config()
	if o.shop != nil {
		o.shop(&cfg)
	}
	r.shop = r.d.Shop()

	var err error
	mode := emulator.ModeSpec
	if o.documented {
		mode = emulator.ModeDocumented
	}
	r.emu, err = emulator.New(emulator.Options{Token: testToken, Seed: 1, Now: o.emuNow, Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r.emu)
	t.Cleanup(srv.Close)
	r.url = srv.URL

	rc := remote.Config{BaseURL: srv.URL, RateLimit: -1, MaxAttempts: 2, Timeout: 5 * time.Second,
		BackoffInitial: time.Millisecond, BackoffMax: 20 * time.Millisecond}
	if o.remote != nil {
		o.remote(&rc)
	}
	token := testToken
	if o.token != "" {
		token = o.token
	}
	sc := qsync.DefaultConfig()
	sc.RetryBackoffMin, sc.RetryBackoffMax = time.Minute, 10*time.Minute
	sc.Quote.Rates = map[string]decimal.Decimal{"RemoveReplaceLabour": decimal.RequireFromString("95.50")}
	if o.sync != nil {
		o.sync(&sc)
	}
	core, logs := observer.New(zap.DebugLevel)
	r.logs, r.log = logs, zap.New(core)
	tokens := remote.StaticToken(token)
	if o.documented {
		tokens = remote.ClientCredentials(remote.ClientCredentialsConfig{TokenURL: srv.URL + emulator.TokenPath,
			ClientID: emulator.DefaultClientID, ClientSecret: token,
			EndpointParams: url.Values{"redirect_uri": {"https://workshop.example/callback"}}})
	}
	r.set = qsync.Settings{Insurers: []qsync.Insurer{{Name: qsync.DefaultInsurer, Remote: rc, Tokens: tokens}}, Shop: cfg, Sync: sc}
	r.open()
	return r
}

// open assembles the daemon from r.set, as a start (or a reload) does.
func (r *rig) open() {
	r.t.Helper()
	qd, err := qsync.Open(r.ctx, r.set, qsync.OpenOptions{Migrate: true, Log: r.log, Observers: []qsync.Observer{r.events}})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { qd.Close() })
	r.db, r.st, r.client, r.engine, r.outbox = qd.Shop, qd.Store, qd.Remote, qd.Engine, qd.Outbox
	r.engine.Now = r.clock.Now
}

// restart assembles the daemon again, with edit's changes to the
// settings, as a restart or a reload of the configuration does.
func (r *rig) restart(edit func(*qsync.Settings)) {
	r.t.Helper()
	if edit != nil {
		edit(&r.set)
	}
	r.open()
}

// pass runs one pass and fails the test when it fails.
func (r *rig) pass() qsync.Summary {
	r.t.Helper()
	s, err := r.engine.Pass(r.ctx)
	if err != nil {
		r.t.Fatalf("pass: %v", err)
	}
	return s
}

// seed adds pending requests to the emulator for the given claims.
func (r *rig) seed(claims ...string) []string {
	r.t.Helper()
	reqs := make([]emulator.SeedRequest, len(claims))
	for i, c := range claims {
		reqs[i] = emulator.SeedRequest{ClaimNumber: c, Vehicle: json.RawMessage(`{"registration":"AB12 CDE"}`)}
	}
	return r.emu.AddRequests(reqs...)
}

// row reads quotesync's state row of a request.
func (r *rig) row(id string) store.Request {
	r.t.Helper()
	row, err := r.st.Request(r.ctx, id)
	if err != nil {
		r.t.Fatalf("read state row %s: %v", id, err)
	}
	return row
}

// writes returns the remote calls other than listing made since before.
func (r *rig) writes(before map[string]int) map[string]int {
	out := map[string]int{}
	for route, n := range r.emu.Calls() {
		if route == emulator.RouteListRequests {
			continue
		}
		if d := n - before[route]; d > 0 {
			out[route] = d
		}
	}
	return out
}

// seen counts the events of a kind the engine emitted.
func (r *rig) seen(kind qsync.EventKind) int { return len(r.events.of(kind)) }

// remoteQuote returns the emulator's quote of a job.
func (r *rig) remoteQuote(job string) (emulator.QuoteState, bool) {
	r.t.Helper()
	j, ok := r.emu.State().Job(job)
	if !ok {
		return emulator.QuoteState{}, false
	}
	return j.Quote("Estimate")
}

// wireItem is a quote item as the emulator stored it; numbers stay text.
type wireItem struct {
	ID          json.Number `json:"id"`
	Order       int         `json:"order"`
	Type        string      `json:"type"`
	Description string      `json:"description"`
	Quantity    json.Number `json:"quantity"`
	Price       json.Number `json:"price"`
	Total       json.Number `json:"total"`
	PartNumber  string      `json:"partNumber"`
}

// assertRemoteHoldsShopLines checks that the remote quote of job holds
// exactly the shop's live lines: ids, order, work types, amounts.
func (r *rig) assertRemoteHoldsShopLines(job string) {
	r.t.Helper()
	q, ok := r.remoteQuote(job)
	if !ok {
		r.t.Fatalf("the remote has no quote for job %s", job)
	}
	var body struct {
		Items []wireItem `json:"items"`
	}
	if err := json.Unmarshal(q.Body, &body); err != nil {
		r.t.Fatalf("decode the remote quote of %s: %v", job, err)
	}
	lines, err := r.shop.Lines(r.ctx, job)
	if err != nil {
		r.t.Fatal(err)
	}
	if len(body.Items) != len(lines) {
		r.t.Fatalf("job %s: remote has %d items, shop has %d lines", job, len(body.Items), len(lines))
	}
	wt := sampleshop.WorkTypes()
	for i, l := range lines {
		it := body.Items[i]
		total := l.Qty.Mul(l.UnitPrice.Decimal).Round(2)
		if l.LineTotal.Valid {
			total = l.LineTotal.Decimal
		}
		checks := []struct {
			what      string
			got, want string
		}{
			{"id", it.ID.String(), decimal.NewFromInt(l.LineID).String()},
			{"type", it.Type, wt[l.Code]},
			{"description", it.Description, l.Description},
			{"part number", it.PartNumber, l.PartNo},
		}
		for _, c := range checks {
			if c.got != c.want {
				r.t.Errorf("job %s item %d %s = %q, want %q", job, i, c.what, c.got, c.want)
			}
		}
		nums := []struct {
			what string
			got  json.Number
			want decimal.Decimal
		}{{"quantity", it.Quantity, l.Qty}, {"price", it.Price, l.UnitPrice.Decimal}, {"total", it.Total, total}}
		for _, n := range nums {
			got, err := decimal.NewFromString(n.got.String())
			if err != nil || !got.Equal(n.want) {
				r.t.Errorf("job %s item %d %s = %s, want %s", job, i, n.what, n.got, n.want)
			}
		}
	}
}

// clock is the engine's clock; tests move it to run out backoffs.
type clock struct {
	mu gosync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
