package sync_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
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

// schemaBeforeInsurers is the version of quotesync's tables before
// requests were keyed by insurer.
const schemaBeforeInsurers = 12

// buildOldSchema creates quotesync's tables as version 12 left them.
func buildOldSchema(t *testing.T, _ context.Context, d *shopdbtest.Database) {
	t.Helper()
	d.BuildSchema(t, schemaBeforeInsurers)
}

// oldRow is a request as a quotesync of version 12 kept it.
type oldRow struct {
	id, claim, job, phase, intent, reason, hash string
}

// TestMigrateOneInsurerState: a one-insurer install at version 12 with
// live requests in every phase (and events, a delivery not made yet, the
// status form auto mode found) is migrated by a start with its insurer
// now under remotes:. The first start gives every row to that insurer,
// in one step, logged once; the pass after it carries each request on
// from where it was, with the job numbers it had: nothing is accepted
// twice, no job number changes, the delivery is made. With two insurers
// configured the same state is refused, naming the rows and `quotesync
// insurers adopt`; adopted, it starts.
func TestMigrateOneInsurerState(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	d := shopdbtest.NewSampleShop(t)
	shop := d.Shop()
	buildOldSchema(t, ctx, d)

	emu, err := emulator.New(emulator.Options{Token: "tok-aa", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(emu)
	defer srv.Close()
	client, err := remote.New(remote.Config{BaseURL: srv.URL, RateLimit: -1}, remote.StaticToken("tok-aa"))
	if err != nil {
		t.Fatal(err)
	}
	// A job of the shop's with lines for the accept of unknown outcome to
	// confirm with its first Draft.
	unknownJob, err := shop.CreateJob(ctx, "CLM-U-1", "UNK 1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := shop.AddLine(ctx, unknownJob, sampleshop.Line{Code: "RPR", Description: "Repair wing", Qty: decimal.RequireFromString("2"), UnitPrice: price("80")}); err != nil {
		t.Fatal(err)
	}
	rows := []oldRow{
		{"7301", "CLM-W-1", "", "waiting", "", "no_job", ""},
		{"7302", sampleshop.ClaimNoLines, sampleshop.JobNoLines, "reserved", "accept", "", ""},
		{"7303", "CLM-U-1", unknownJob, "accept_unknown", "", "", ""},
		{"7304", sampleshop.ClaimDraft, sampleshop.JobDraft, "accepted", "", "", ""},
		{"7305", sampleshop.ClaimFinal, sampleshop.JobFinal, "drafted", "", "", "sha256:an-older-draft"},
		{"7306", "CLM-S-1", "", "submitted", "", "", "sha256:done"},
		{"7307", "CLM-R-1", "", "rejected", "", "refused", ""},
		{"7308", "CLM-G-1", "", "gone", "", "expired", ""},
		{"7309", "CLM-T-1", "", "taken_elsewhere", "", "other_reference", ""},
	}
	for _, r := range rows {
		emu.AddRequests(emulator.SeedRequest{ID: r.id, ClaimNumber: r.claim, Vehicle: json.RawMessage(`{"registration":"AB12 CDE"}`)})
		switch r.phase {
		case "accept_unknown", "accepted", "drafted":
			if _, err := client.Accept(ctx, r.id, r.job, time.Time{}); err != nil {
				t.Fatalf("accept %s at the service: %v", r.id, err)
			}
		case "taken_elsewhere":
			if err := emu.TakeElsewhere(r.id, "OTHER-1"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := d.SQL.ExecContext(ctx, `INSERT INTO quotesync_requests (request_id, claim_number, job_number, phase, reason, intent,
pushed_hash, request_json, created_at, updated_at, version) VALUES (?, ?, NULLIF(?, ''), ?, ?, ?, ?, ?, NOW(6), NOW(6), 3)`,
			r.id, r.claim, r.job, r.phase, r.reason, r.intent, r.hash, `{"id":"`+r.id+`"}`); err != nil {
			t.Fatal(err)
		}
		if _, err := d.SQL.ExecContext(ctx, "INSERT INTO quotesync_events (request_id, job, kind, to_phase, `at`) VALUES (?, ?, ?, ?, NOW(6))",
			r.id, r.job, r.phase, r.phase); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{
		"INSERT INTO quotesync_outbox (event_id, target, kind, request_id, claim, job, phase, detail, `at`, next_attempt_at, notice_id)" +
			" SELECT id, 'write_back', 'rejected', request_id, 'CLM-R-1', '', 'rejected', 'refused', NOW(6), '1970-01-01', 'old-notice' FROM quotesync_events WHERE request_id = '7307'",
		"INSERT INTO quotesync_settings (name, value, updated_at) VALUES ('remote.status_form', 'PUT /jobs/{jobId}/quote/status/{status}', NOW(6))",
	} {
		if _, err := d.SQL.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}

	cfg := d.Config()
	cfg.WriteBack = map[string]string{shopdb.WriteBackRejected: `UPDATE jobs SET insurer_status = :status, insurer_note = :insurer WHERE claim_number = :claim`}
	ins := func(name string) qsync.Insurer {
		return qsync.Insurer{Name: name, Key: "remotes[0]", Remote: remote.Config{BaseURL: srv.URL, RateLimit: -1, MaxAttempts: 2,
			BackoffInitial: time.Millisecond, BackoffMax: 10 * time.Millisecond, StatusPath: remote.StatusPathAuto},
			Tokens: remote.StaticToken("tok-aa")}
	}
	set := qsync.Settings{Shop: cfg, Sync: qsync.DefaultConfig()}

	// Two insurers: whose the rows are is not for quotesync to guess.
	set.Insurers = []qsync.Insurer{ins("aa"), ins("bb")}
	if _, err := qsync.Open(ctx, set, qsync.OpenOptions{Migrate: true}); err == nil ||
		!strings.Contains(err.Error(), "9 requests") || !strings.Contains(err.Error(), "quotesync insurers adopt NAME") {
		t.Fatalf("Open with two insurers over rows written before insurers: %v; want a refusal naming 9 requests and the fix", err)
	}
	count := func(q string) int {
		t.Helper()
		var n int
		if err := d.SQL.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	if n := count("SELECT COUNT(*) FROM quotesync_requests WHERE insurer = ''"); n != 9 {
		t.Fatalf("the refused start adopted rows: %d of 9 left unnamed", n)
	}

	// One insurer, aa, under remotes:: the start adopts.
	set.Insurers = []qsync.Insurer{ins("aa")}
	core, logs := observer.New(zap.InfoLevel)
	events := &recorder{}
	qd, err := qsync.Open(ctx, set, qsync.OpenOptions{Migrate: true, Log: zap.New(core), Observers: []qsync.Observer{events}})
	if err != nil {
		t.Fatalf("Open with one insurer: %v", err)
	}
	defer qd.Close()
	if cur, latest, err := qd.Store.SchemaVersion(ctx); err != nil || cur != latest || cur <= schemaBeforeInsurers {
		t.Fatalf("schema version %d of %d (%v)", cur, latest, err)
	}
	adopted := logs.FilterMessage("rows written before insurers adopted").All()
	if len(adopted) != 1 || adopted[0].ContextMap()["insurer"] != "aa" || adopted[0].ContextMap()["requests"] != int64(9) {
		t.Errorf("adoption log lines: %+v; want one, of 9 requests, naming aa", adopted)
	}
	for _, table := range []string{"requests", "events", "outbox"} {
		if n := count("SELECT COUNT(*) FROM quotesync_" + table + " WHERE insurer <> 'aa'"); n != 0 {
			t.Errorf("%d rows of quotesync_%s not aa's after the start", n, table)
		}
	}
	if v, ok, err := qd.Store.Setting(ctx, qsync.StatusFormKey("aa")); err != nil || !ok || v != "PUT /jobs/{jobId}/quote/status/{status}" {
		t.Errorf("aa's status form setting: %q, %v, %v; want the one found before insurers", v, ok, err)
	}
	if _, ok, _ := qd.Store.Setting(ctx, qsync.LegacyStatusFormKey); ok {
		t.Error("the setting of before insurers is still there")
	}
	acceptsBefore := emu.Calls()[emulator.RouteAccept]

	if _, err := qd.Once(ctx); err != nil {
		t.Fatalf("the first pass after the migration: %v", err)
	}
	aa := qd.Store.Insurer("aa")
	want := map[string]store.Phase{"7301": qsync.PhaseAccepted, "7302": qsync.PhaseAccepted, "7303": qsync.PhaseDrafted,
		"7304": qsync.PhaseDrafted, "7305": qsync.PhaseSubmitted, "7306": qsync.PhaseSubmitted, "7307": qsync.PhaseRejected,
		"7308": qsync.PhaseGone, "7309": qsync.PhaseTakenElsewhere}
	for _, r := range rows {
		got, err := aa.Request(ctx, r.id)
		if err != nil {
			t.Fatalf("aa's %s: %v", r.id, err)
		}
		if got.Phase != want[r.id] {
			t.Errorf("%s (%s before) is %s after the pass, want %s (%s)", r.id, r.phase, got.Phase, want[r.id], got.LastError)
		}
		if r.job != "" && got.JobNumber != r.job {
			t.Errorf("%s's job changed from %s to %s", r.id, r.job, got.JobNumber)
		}
		if rs, _ := emu.State().Request(r.id); got.JobNumber != "" && rs.ReferenceID != got.JobNumber {
			t.Errorf("%s is accepted at the service with %q, its row holds %s", r.id, rs.ReferenceID, got.JobNumber)
		}
	}
	if n := emu.Calls()[emulator.RouteAccept] - acceptsBefore; n != 2 {
		t.Errorf("%d accepts after the migration, want 2 (the waiting and the reserved request; none again)", n)
	}
	if q, ok := func() (emulator.QuoteState, bool) {
		j, ok := emu.State().Job(sampleshop.JobFinal)
		if !ok {
			return emulator.QuoteState{}, false
		}
		return j.Quote("Estimate")
	}(); !ok || q.SubmitCount != 1 {
		t.Errorf("the final job's quote: %+v, want submitted once", q)
	}
	if st, note, err := shop.InsurerStatus(ctx, "RO-50001"); err != nil || st != "" || note != "" {
		t.Errorf("the write-back touched another job: %q %q %v", st, note, err)
	}
	if n := count("SELECT COUNT(*) FROM quotesync_outbox WHERE done_at IS NULL"); n != 0 {
		t.Errorf("%d deliveries not made after the pass (the one queued before insurers among them)", n)
	}
	for _, ev := range events.of(qsync.EventAccepted) {
		if ev.Insurer != "aa" {
			t.Errorf("an accept after the migration reported for insurer %q", ev.Insurer)
		}
	}
	if n := count("SELECT COUNT(*) FROM quotesync_events WHERE insurer <> 'aa'"); n != 0 {
		t.Errorf("%d events of the pass not aa's", n)
	}
}
