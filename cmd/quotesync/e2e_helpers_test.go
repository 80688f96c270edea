package main

// The end-to-end harness: per test (or crash trial) a fresh sample-shop
// database, an emulator behind httptest, a YAML file pointing the real
// binary at both, helpers to run `once`, start and kill `run`, seed
// requests and play the shop, and the invariants checked from the
// emulator's state and history, the shop's tables and quotesync's state.

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	gosync "sync"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/shopspring/decimal"
	"go.yaml.in/yaml/v3"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// The token of the test emulators (not a secret) and the variables the
// binary reads its secrets from.
const (
	e2eToken       = "e2e-token-3b7f1d"
	e2eTokenEnv    = "QUOTESYNC_E2E_TOKEN"
	e2ePasswordEnv = "QUOTESYNC_E2E_DB_PASSWORD"
)

// e2eRates are the quote.rates of every test config, as written in YAML;
// the remote must hold them with exactly this text.
var e2eRates = map[string]string{"RepairLabour": "95.50", "RefinishLabour": "88.0000"}

// e2eOptions tunes one environment; zero fields take the defaults noted.
type e2eOptions struct {
	Schedule      string        // "@every 1s"
	Concurrency   int           // 4
	DraftUpdate   string        // "" (repost)
	RemoteTimeout time.Duration // 10s
	MaxAttempts   int           // 4
	DBAddr        string        // "" = the test server (fault tests put a proxy here)
	EmuSeed       uint64        // 1
	LogLevel      string        // "info"
	// SlowSQL makes find_job (inside the reserve transaction) and
	// estimate_state take longer, so that a killed session is more often
	// caught mid-statement.
	SlowSQL bool
	// NoShopChanged leaves shop.queries.shop_changed out of the mapping.
	NoShopChanged bool
	MaxNewPerPass int // 0 = the default
	// Mode is the emulator's mode: "" (emulator.ModeSpec, a static token
	// from e2eTokenEnv) or emulator.ModeDocumented (OAuth2 client
	// credentials at the emulator's token endpoint, the client secret from
	// e2eTokenEnv, or from SecretFile when set).
	Mode          string
	TokenTTL      time.Duration     // documented mode: the tokens' lifetime (default 1m)
	SecretFile    string            // documented mode: remote.token.oauth2.client_secret_file
	TokenURL      string            // documented mode: token_url when not the emulator's
	StatusPath    string            // remote.status_path; "" = the default
	StatusMethod  string            // remote.status_method; "" = the default
	NoRedirectURI bool              // documented mode: no endpoint_params
	WorkTypes     map[string]string // more shop.work_types (or other types for the sample's codes)
	ReleaseJob    bool              // shop.queries.release_job: the sample's
	QuoteFields   string            // shop.queries.quote_fields; "" = none
	// Server is the database server: nil the shared test server, else
	// one of the tests' own (another sql_mode, say).
	Server *shopdbtest.Server
	// Token is the spec mode's bearer token and the documented mode's
	// client secret, the emulator's and the binary's; "" = e2eToken.
	Token string
}

// e2eClientID is the OAuth2 client id of the documented-mode emulators.
const e2eClientID = "e2e-workshop"

// e2eRedirectURI is the redirect_uri the documented-mode config sends.
const e2eRedirectURI = "https://workshop.example/quotesync/callback"

// e2eModes are the emulator's modes, for tests run in both.
var e2eModes = []string{emulator.ModeSpec, emulator.ModeDocumented}

// e2eEnv is one isolated world for the real binary.
type e2eEnv struct {
	tb   testing.TB
	opts e2eOptions
	DB   *shopdbtest.Database
	Shop *sampleshop.Shop
	Emu  *emulator.Emulator
	Srv  *httptest.Server
	Dir  string
	Conf string // the YAML file
	bin  string
	bg   context.Context
	sql  *sqlx.DB // the test's own statements: checks (default DB.SQL)
}

// newE2E builds a fresh environment; everything is torn down in Cleanup.
func newE2E(tb testing.TB, opts e2eOptions) *e2eEnv {
	tb.Helper()
	if opts.Schedule == "" {
		opts.Schedule = "@every 1s"
	}
	if opts.Concurrency == 0 {
		opts.Concurrency = 4
	}
	if opts.RemoteTimeout == 0 {
		opts.RemoteTimeout = 10 * time.Second
	}
	if opts.MaxAttempts == 0 {
		opts.MaxAttempts = 4
	}
	if opts.EmuSeed == 0 {
		opts.EmuSeed = 1
	}
	if opts.LogLevel == "" {
		opts.LogLevel = "info"
	}
	if opts.TokenTTL == 0 {
		opts.TokenTTL = time.Minute
	}
	if opts.Token == "" {
		opts.Token = e2eToken
	}
	e := &e2eEnv{tb: tb, opts: opts, bin: quotesyncBinary(tb), Dir: tb.TempDir()}
	var cancel context.CancelFunc
	e.bg, cancel = context.WithTimeout(context.Background(), 10*time.Minute)
	tb.Cleanup(cancel)
	if opts.Server != nil {
		e.DB = opts.Server.NewSampleShop(tb)
	} else {
		e.DB = shopdbtest.NewSampleShop(tb)
	}
	e.sql = e.DB.SQL
	e.Shop = e.DB.Shop()
	e.Emu, e.Srv = mustEmulator(tb, emulator.Options{Token: opts.Token, Seed: opts.EmuSeed, Mode: opts.Mode,
		ClientID: e2eClientID, TokenTTL: opts.TokenTTL})
	e.Conf = filepath.Join(e.Dir, "config.yaml")
	e.writeConfig()
	return e
}

// mustEmulator serves a new emulator over real HTTP until the test ends;
// a test of several insurers starts one per insurer, each with its own
// state.
func mustEmulator(tb testing.TB, opts emulator.Options) (*emulator.Emulator, *httptest.Server) {
	tb.Helper()
	emu, err := emulator.New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(emu)
	tb.Cleanup(srv.Close)
	return emu, srv
}

// writeConfig writes the YAML file from e.opts and the sample mapping.
func (e *e2eEnv) writeConfig() {
	e.tb.Helper()
	m := sampleshop.Mapping()
	dbc := e.DB.Config()
	addr := dbc.Addr
	if e.opts.DBAddr != "" {
		addr = e.opts.DBAddr
	}
	if e.opts.SlowSQL {
		m.Queries.FindJob += " AND SLEEP(0.1) = 0"
		m.Queries.EstimateState += "\nHAVING SLEEP(0.02) = 0"
	}
	shop := map[string]any{
		"addr": addr, "user": dbc.User, "database": dbc.Database,
		"lock_heartbeat": "200ms", "lock_session_timeout": "2s", "query_timeout": "10s",
		"params": m.Params, "work_types": m.WorkTypes,
		"queries": map[string]any{
			"find_job": m.Queries.FindJob, "create_job": m.Queries.CreateJob,
			"booking_date": m.Queries.BookingDate, "line_items": m.Queries.LineItems,
			"estimate_state": m.Queries.EstimateState,
		},
	}
	if e.opts.ReleaseJob {
		shop["queries"].(map[string]any)["release_job"] = m.Queries.ReleaseJob
	}
	if e.opts.QuoteFields != "" {
		shop["queries"].(map[string]any)["quote_fields"] = e.opts.QuoteFields
	}
	if !e.opts.NoShopChanged {
		shop["queries"].(map[string]any)["shop_changed"] = m.Queries.ShopChanged
	}
	if dbc.Password != "" {
		shop["password_env"] = e2ePasswordEnv
	}
	rem := map[string]any{
		"base_url": e.Srv.URL, "token": map[string]any{"env": e2eTokenEnv},
		"timeout": e.opts.RemoteTimeout.String(), "max_attempts": e.opts.MaxAttempts,
		"backoff_initial": "5ms", "backoff_max": "100ms", "rate_limit": -1,
	}
	if e.opts.DraftUpdate != "" {
		rem["draft_update"] = e.opts.DraftUpdate
	}
	if e.opts.StatusPath != "" {
		rem["status_path"] = e.opts.StatusPath
	}
	if e.opts.StatusMethod != "" {
		rem["status_method"] = e.opts.StatusMethod
	}
	for code, typ := range e.opts.WorkTypes {
		m.WorkTypes[code] = typ
	}
	if e.opts.Mode == emulator.ModeDocumented {
		o := map[string]any{"token_url": e.Srv.URL + emulator.TokenPath, "client_id": e2eClientID,
			"client_secret_env": e2eTokenEnv, "endpoint_params": map[string]string{"redirect_uri": e2eRedirectURI}}
		if e.opts.SecretFile != "" {
			delete(o, "client_secret_env")
			o["client_secret_file"] = e.opts.SecretFile
		}
		if e.opts.TokenURL != "" {
			o["token_url"] = e.opts.TokenURL
		}
		if e.opts.NoRedirectURI {
			delete(o, "endpoint_params")
		}
		rem["token"] = map[string]any{"oauth2": o}
	}
	doc := map[string]any{
		"remote": rem,
		"shop":   shop,
		"sync": map[string]any{
			"schedule": e.opts.Schedule, "time_zone": "UTC", "concurrency": e.opts.Concurrency,
			"pass_timeout": "60s", "retry_backoff_min": "20ms", "retry_backoff_max": "200ms",
			"max_new_per_pass": e.opts.MaxNewPerPass,
		},
		"quote": map[string]any{"rates": e2eRates},
		"log":   map[string]any{"level": e.opts.LogLevel, "format": "json"},
	}
	data, err := yaml.Marshal(doc)
	if err != nil {
		e.tb.Fatal(err)
	}
	if err := os.WriteFile(e.Conf, data, 0o600); err != nil {
		e.tb.Fatal(err)
	}
}

// environ is the binary's environment: ours plus its secrets.
func (e *e2eEnv) environ() []string {
	env := append(os.Environ(), e2eTokenEnv+"="+e.opts.Token)
	if p := e.DB.Config().Password; p != "" {
		env = append(env, e2ePasswordEnv+"="+p)
	}
	return env
}

// e2eBuffer is a bytes.Buffer safe for a writing process and a reader.
type e2eBuffer struct {
	mu  gosync.Mutex
	buf bytes.Buffer
}

func (b *e2eBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *e2eBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// e2eProc is one running quotesync process.
type e2eProc struct {
	cmd    *exec.Cmd
	out    e2eBuffer // stdout and stderr together
	done   chan struct{}
	code   int // exit code; -1 when killed by a signal
	killed bool
}

// start starts the binary with args followed by --config.
func (e *e2eEnv) start(args ...string) *e2eProc {
	e.tb.Helper()
	p := &e2eProc{done: make(chan struct{})}
	p.cmd = exec.Command(e.bin, append(args, "--config", e.Conf)...)
	p.cmd.Env = e.environ()
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		e.tb.Fatalf("start quotesync %v: %v", args, err)
	}
	go func() {
		err := p.cmd.Wait()
		p.code = 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.code = ee.ExitCode()
		}
		close(p.done)
	}()
	e.tb.Cleanup(func() { p.kill() })
	return p
}

// exited reports whether the process has ended.
func (p *e2eProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL (when still running) and waits for the process.
func (p *e2eProc) kill() {
	if !p.exited() {
		p.killed = true
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-p.done
}

// stop sends SIGTERM and waits up to timeout; it reports the exit code
// (SIGKILL and -1 when the process did not stop in time).
func (p *e2eProc) stop(timeout time.Duration) int {
	if !p.exited() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-p.done:
		return p.code
	case <-time.After(timeout):
		p.kill()
		return -1
	}
}

// wait waits for the process to end on its own, up to timeout.
func (p *e2eProc) wait(timeout time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// e2eResult is the outcome of one finished run of the binary.
type e2eResult struct {
	Code   int
	Output string
}

// once runs `quotesync once` with extra args to the end (60s at most).
func (e *e2eEnv) once(args ...string) e2eResult {
	e.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.bin, append(append([]string{"once"}, args...), "--config", e.Conf)...)
	cmd.Env = e.environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := e2eResult{Output: stdout.String() + stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	case err != nil:
		e.tb.Fatalf("run quotesync once: %v", err)
	}
	if strings.Contains(res.Output, e.opts.Token) {
		e.tb.Errorf("quotesync once printed the token:\n%s", res.Output)
	}
	return res
}

// e2eLockBusy reports whether a failed run failed only because the lock of a
// process just killed is not yet freed by the server.
func e2eLockBusy(out string) bool {
	return strings.Contains(out, "holds the lock")
}

// mustOnce runs one pass that must succeed (a lock still held by a killed
// process is waited out) and returns the remote calls it made.
func (e *e2eEnv) mustOnce() map[string]int {
	e.tb.Helper()
	for try := 0; ; try++ {
		before := e.Emu.Calls()
		res := e.once()
		if res.Code == 0 {
			return e2eCallsDiff(before, e.Emu.Calls())
		}
		if !e2eLockBusy(res.Output) || try == 50 {
			e.tb.Fatalf("quotesync once: exit %d\n%s", res.Code, res.Output)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// e2eCallsDiff returns the calls made between two Calls() snapshots.
func e2eCallsDiff(before, after map[string]int) map[string]int {
	d := make(map[string]int)
	for k, v := range after {
		if n := v - before[k]; n != 0 {
			d[k] = n
		}
	}
	return d
}

// e2eWrites counts the calls of a diff other than the pending list.
func e2eWrites(d map[string]int) int {
	n := 0
	for k, v := range d {
		if k != emulator.RouteListRequests {
			n += v
		}
	}
	return n
}

// e2eFmtCalls prints a calls diff in a stable order.
func e2eFmtCalls(d map[string]int) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(d)) {
		fmt.Fprintf(&b, "%s=%d ", k, d[k])
	}
	return strings.TrimSpace(b.String())
}

// seed adds one pending request for claim (with a vehicle registration for
// create_job's :registration) and returns its id.
func (e *e2eEnv) seed(claim, registration string) string {
	sr := emulator.SeedRequest{ClaimNumber: claim}
	if registration != "" {
		sr.Vehicle = []byte(fmt.Sprintf(`{"registration":%q,"make":"Toyota"}`, registration))
	}
	return e.Emu.AddRequests(sr)[0]
}

// ctx is the context of the test's own statements: it ends with the
// test, or after ten minutes should the database hang.
func (e *e2eEnv) ctx() context.Context { return e.bg }

// createJob plays the front desk: a job with a DRAFT estimate for claim.
func (e *e2eEnv) createJob(claim string) string {
	e.tb.Helper()
	job, err := e.Shop.CreateJob(e.ctx(), claim, "")
	if err != nil {
		e.tb.Fatal(err)
	}
	return job
}

// addLine plays the estimator: one more line on job. n varies the content.
func (e *e2eEnv) addLine(job string, n int) sampleshop.Line {
	e.tb.Helper()
	l, err := e.Shop.AddLine(e.ctx(), job, e2eLine(n))
	if err != nil {
		e.tb.Fatal(err)
	}
	return l
}

// e2eLine is a realistic line whose content depends on n: every operation
// code, four-decimal prices, totals given or left to the reader.
func e2eLine(n int) sampleshop.Line {
	codes := []string{"R&R", "RPR", "PNT", "MECH", "PART", "SUNDRY"}
	l := sampleshop.Line{
		Code:        codes[n%len(codes)],
		Description: fmt.Sprintf("Line %d: panel work", n),
		Qty:         e2eDec(fmt.Sprintf("%d.%03d", 1+n%3, (n*125)%1000)),
		UnitPrice:   e2eNullDec(fmt.Sprintf("%d.%04d", 40+n%90, (n*37)%10000)),
	}
	if l.Code == "PART" {
		l.PartNo = fmt.Sprintf("PN-%05d", n)
		l.Markup = e2eNullDec(fmt.Sprintf("%d.%02d", n%40, n%100)) // markup, metadata, on the report
		l.Supplier = fmt.Sprintf("Supplier %d", n%3)
		l.OnReport = sql.NullBool{Bool: true, Valid: true}
	}
	if n%5 == 1 {
		l.OnReport = sql.NullBool{Bool: false, Valid: true}
	}
	switch n % 4 {
	case 0: // the shop's own total, with a discount: it must be sent as is
		l.LineTotal = e2eNullDec(l.Qty.Mul(l.UnitPrice.Decimal).Mul(e2eDec("0.9")).Round(2).StringFixed(2))
	case 2:
		l.LineTotal = e2eNullDec(l.Qty.Mul(l.UnitPrice.Decimal).Round(2).StringFixed(2))
	}
	return l
}

func e2eDec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func e2eNullDec(s string) decimal.NullDecimal {
	return decimal.NewNullDecimal(decimal.RequireFromString(s))
}

// e2eTail returns the last n lines of s.
func e2eTail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
