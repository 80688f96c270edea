package main

// The first hour at a shop quotesync has never seen, with the real
// binary: init --yes writes the mapping of a schema unlike the sample
// shop's (the final value and the work types given as an integrator
// would), check passes on it, preview shows a job's rows item by item, and
// one pass against the emulator (in both its modes) accepts a request onto
// the existing job found by its claim and pushes that Draft.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/discover/testshops"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// initWorld is a shop schema in a fresh database, and the binary.
type initWorld struct {
	t    *testing.T
	bin  string
	shop testshops.Shop
	db   *shopdbtest.Database
	dir  string
	conf string
	env  []string
}

// newInitWorld builds the shop on srv (nil: the shared test server).
func newInitWorld(t *testing.T, srv *shopdbtest.Server, shop testshops.Shop) *initWorld {
	t.Helper()
	w := &initWorld{t: t, bin: quotesyncBinary(t), shop: shop, dir: t.TempDir()}
	if srv != nil {
		w.db = srv.NewDatabase(t)
	} else {
		w.db = shopdbtest.NewDatabase(t)
	}
	if err := shop.Apply(context.Background(), w.db.SQL); err != nil {
		t.Fatal(err)
	}
	w.conf = filepath.Join(w.dir, "quotesync.yaml")
	w.env = append(os.Environ(), "QUOTESYNC_DB_PASSWORD="+w.db.Config().Password, "CREDENTIALS_DIRECTORY="+w.dir)
	if err := os.WriteFile(filepath.Join(w.dir, "token"), []byte(cliToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return w
}

// dsn is the database as --dsn takes it: no password.
func (w *initWorld) dsn() string {
	c := w.db.Config()
	m := mysql.NewConfig()
	m.User, m.Net, m.Addr, m.DBName = c.User, "tcp", c.Addr, c.Database
	return m.FormatDSN()
}

func (w *initWorld) run(args ...string) cliResult {
	w.t.Helper()
	r := cliRun(w.t, w.env, w.bin, args...)
	if p := w.db.Config().Password; len(p) >= 8 && strings.Contains(r.Stdout+r.Stderr, p) {
		w.t.Errorf("quotesync %s printed the database password", strings.Join(args, " "))
	}
	return r
}

// initYes runs init --yes with the integrator's answers as flags.
func (w *initWorld) initYes() string {
	w.t.Helper()
	args := []string{"init", "--dsn", w.dsn(), "--output", w.conf, "--yes", "--final", strings.Join(w.shop.Final, ",")}
	for code, typ := range w.shop.WorkTypes {
		args = append(args, "--work-type", code+"="+typ)
	}
	r := w.run(args...)
	if r.Code != exitOK {
		w.t.Fatalf("init: %s", r)
	}
	text, err := os.ReadFile(w.conf)
	if err != nil {
		w.t.Fatal(err)
	}
	return string(text)
}

// pointAt edits the file as an integrator would: the service's address
// and where its token comes from replace init's placeholders.
func (w *initWorld) pointAt(text string, srv *httptest.Server, mode string) string {
	w.t.Helper()
	placeholder := "  base_url: https://api.insurer.example\n  token:\n    file: ${CREDENTIALS_DIRECTORY}/token\n"
	if !strings.Contains(text, placeholder) {
		w.t.Fatalf("init wrote no remote placeholder to edit:\n%s", text)
	}
	remote := fmt.Sprintf("  base_url: %s\n  token:\n    file: ${CREDENTIALS_DIRECTORY}/token\n", srv.URL)
	if mode == emulator.ModeDocumented {
		remote = fmt.Sprintf("  base_url: %s\n  token:\n    oauth2:\n      token_url: %s%s\n      client_id: %s\n"+
			"      client_secret_file: ${CREDENTIALS_DIRECTORY}/token\n      endpoint_params: {redirect_uri: %q}\n",
			srv.URL, srv.URL, emulator.TokenPath, emulator.DefaultClientID, "https://workshop.example/callback")
	}
	text = strings.Replace(text, placeholder, remote, 1)
	if err := os.WriteFile(w.conf, []byte(text), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return text
}

// shopRow is one live line as the schema's own query reads it.
type shopRow struct {
	id, no, code, desc string
	qty, price, total  decimal.Decimal
	hasTotal           bool
}

func (w *initWorld) rows() []shopRow {
	w.t.Helper()
	rs, err := w.db.SQL.QueryContext(context.Background(), w.shop.Rows, w.shop.Job)
	if err != nil {
		w.t.Fatal(err)
	}
	defer rs.Close()
	var out []shopRow
	for rs.Next() {
		var r shopRow
		var qty, price string
		var total sql.NullString
		if err := rs.Scan(&r.id, &r.no, &r.code, &r.desc, &qty, &price, &total); err != nil {
			w.t.Fatal(err)
		}
		r.qty, r.price = decimal.RequireFromString(qty), decimal.RequireFromString(price)
		if total.Valid {
			r.total, r.hasTotal = decimal.RequireFromString(total.String), true
		} else {
			r.total = r.qty.Mul(r.price).Round(2)
		}
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		w.t.Fatal(err)
	}
	return out
}

// previewItem is an item of preview --json.
type previewItem struct {
	ID          string          `json:"id"`
	Order       int             `json:"order"`
	Type        string          `json:"type"`
	Description string          `json:"description"`
	Quantity    decimal.Decimal `json:"quantity"`
	Price       decimal.Decimal `json:"price"`
	Total       decimal.Decimal `json:"total"`
}

type previewQuote struct {
	Type        string        `json:"type"`
	Status      string        `json:"status"`
	ReferenceID string        `json:"referenceId"`
	Items       []previewItem `json:"items"`
}

// checkItems compares the items of a quote with the shop's rows, item by
// item.
func (w *initWorld) checkItems(what string, items []previewItem) {
	w.t.Helper()
	rows := w.rows()
	if len(rows) != w.shop.Lines || len(items) != len(rows) {
		w.t.Fatalf("%s: %d items, the shop has %d live lines (want %d)", what, len(items), len(rows), w.shop.Lines)
	}
	for i, r := range rows {
		it := items[i]
		wantType := w.shop.WorkTypes[r.code]
		if it.ID != r.id || fmt.Sprint(it.Order) != r.no || it.Type != wantType || it.Description != r.desc ||
			!it.Quantity.Equal(r.qty) || !it.Price.Equal(r.price) || !it.Total.Equal(r.total) {
			w.t.Errorf("%s item %d = %+v, the shop's row is %+v (work type %s)", what, i, it, r, wantType)
		}
	}
}

func TestInitOnSchemasUnlikeTheSample(t *testing.T) {
	for _, shop := range append([]testshops.Shop{testshops.Sample}, testshops.Shops...) {
		t.Run(shop.Name, func(t *testing.T) { testInitOnShop(t, nil, shop, emulator.ModeSpec, emulator.ModeDocumented) })
	}
}

// testInitOnShop runs init --yes on shop, built on srv (nil: the shared
// test server), then check, preview and one pass against the emulator in
// each of modes.
func testInitOnShop(t *testing.T, srv *shopdbtest.Server, shop testshops.Shop, modes ...string) {
	w := newInitWorld(t, srv, shop)
	text := w.initYes()
	for _, want := range []string{"# CHECK:", "find_job: |-", "sample_jobs: |-", ") AS final"} {
		if !strings.Contains(text, want) {
			t.Errorf("the file has no %q:\n%s", want, text)
		}
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			w.pass(t, text, mode)
		})
	}
}

// pass points the file at an emulator in mode, runs check and preview,
// then one pass that accepts a request for the shop's job.
func (w *initWorld) pass(t *testing.T, text string, mode string) {
	emu, srv := mustEmulator(t, emulator.Options{Token: cliToken, Seed: 11, Mode: mode})
	w.pointAt(text, srv, mode)

	r := w.run("check", "--config", w.conf)
	if r.Code != exitOK {
		t.Fatalf("check: %s", r)
	}
	for _, want := range []string{"ok    real rows: find_job", "ok    real rows: estimate_state", "markers unchanged"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("check says nothing like %q:\n%s", want, r.Stdout)
		}
	}

	r = w.run("preview", "--config", w.conf, "--json", w.shop.Job)
	if r.Code != exitOK {
		t.Fatalf("preview: %s", r)
	}
	var pq previewQuote
	if err := json.Unmarshal([]byte(r.Stdout), &pq); err != nil {
		t.Fatalf("preview --json: %v\n%s", err, r.Stdout)
	}
	if pq.ReferenceID != w.shop.Job || pq.Status != "Draft" {
		t.Errorf("preview: referenceId %q status %q, want %q Draft", pq.ReferenceID, pq.Status, w.shop.Job)
	}
	w.checkItems("preview", pq.Items)
	if r := w.run("preview", "--config", w.conf, w.shop.Job); r.Code != exitOK || !strings.Contains(r.Stdout, "a pass would:") {
		t.Errorf("preview (text): %s", r)
	}

	id := emu.AddRequests(emulator.SeedRequest{ClaimNumber: w.shop.Claim, Expiry: time.Now().Add(48 * time.Hour)})[0]
	r = w.run("once", "--config", w.conf)
	if r.Code != exitOK {
		t.Fatalf("once: %s", r)
	}
	st := emu.State()
	var accepted string
	for _, rq := range st.Requests {
		if rq.ID == id {
			accepted = rq.ReferenceID
		}
	}
	if accepted != w.shop.Job {
		t.Fatalf("request %s accepted with referenceId %q, want the existing job %s\n%s", id, accepted, w.shop.Job, r)
	}
	for _, j := range st.Jobs {
		if j.ID != w.shop.Job {
			continue
		}
		if len(j.Quotes) != 1 || j.Quotes[0].Status != "Draft" {
			t.Fatalf("job %s has quotes %+v, want one Draft", j.ID, j.Quotes)
		}
		var q previewQuote
		if err := json.Unmarshal(j.Quotes[0].Body, &q); err != nil {
			t.Fatal(err)
		}
		w.checkItems("the pushed Draft", q.Items)
		// quotesync's own tables now exist: forget them, so that the
		// next mode starts from the same shop.
		w.dropState()
		return
	}
	t.Fatalf("the emulator has no job %s: %+v", w.shop.Job, st.Jobs)
}

// dropState drops quotesync's tables.
func (w *initWorld) dropState() {
	w.t.Helper()
	rows, err := w.db.SQL.QueryContext(context.Background(),
		"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'quotesync\\_%'")
	if err != nil {
		w.t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			w.t.Fatal(err)
		}
		names = append(names, "`"+n+"`")
	}
	rows.Close()
	if len(names) == 0 {
		return
	}
	conn, err := w.db.SQL.Conn(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	defer conn.Close()
	for _, stmt := range []string{"SET FOREIGN_KEY_CHECKS = 0", "DROP TABLE " + strings.Join(names, ", "), "SET FOREIGN_KEY_CHECKS = 1"} {
		if _, err := conn.ExecContext(context.Background(), stmt); err != nil {
			w.t.Fatal(err)
		}
	}
}
