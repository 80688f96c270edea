package sync_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
	"go.uber.org/zap/zapcore"
)

// The rows an older quotesync writes with no insurer (the column's
// default) while it still runs beside a newer one: the newer one migrated
// the tables at its start and waits for the single-instance lock the
// older one holds.

// onePair is the pair with insurer aa only.
func onePair(t *testing.T, edit func(*qsync.Settings)) *pair {
	return newPair(t, func(s *qsync.Settings) {
		s.Insurers = s.Insurers[:1]
		if edit != nil {
			edit(s)
		}
	})
}

// exec runs statements on the test database.
func (p *pair) exec(stmts ...string) {
	p.t.Helper()
	for _, s := range stmts {
		if _, err := p.d.SQL.ExecContext(p.ctx, s); err != nil {
			p.t.Fatalf("%s: %v", s, err)
		}
	}
}

// count is the first column of the first row of q, an integer.
func (p *pair) count(q string) int {
	p.t.Helper()
	var n int
	if err := p.d.SQL.QueryRowContext(p.ctx, q).Scan(&n); err != nil {
		p.t.Fatalf("%s: %v", q, err)
	}
	return n
}

// text is the first column of the first row of q, a string ("" for NULL).
func (p *pair) text(q string) string {
	p.t.Helper()
	var s *string
	if err := p.d.SQL.QueryRowContext(p.ctx, q).Scan(&s); err != nil {
		p.t.Fatalf("%s: %v", q, err)
	}
	if s == nil {
		return ""
	}
	return *s
}

// oldRequest writes a request as a quotesync of before insurers does:
// no insurer column in its INSERT, and an event.
func (p *pair) oldRequest(id, claim, job, phase, intent string) {
	p.t.Helper()
	p.exec("INSERT INTO quotesync_requests (request_id, claim_number, job_number, phase, intent, request_json, created_at, updated_at, version)" +
		" VALUES ('" + id + "', '" + claim + "', NULLIF('" + job + "', ''), '" + phase + "', '" + intent + "', '{\"id\":\"" + id + "\"}', NOW(6), NOW(6), 2)")
	p.oldEvent(id, phase)
}

// oldEvent writes an event of request id as a quotesync of before
// insurers does.
func (p *pair) oldEvent(id, phase string) {
	p.t.Helper()
	p.exec("INSERT INTO quotesync_events (request_id, kind, to_phase, `at`) VALUES ('" + id + "', '" + phase + "', '" + phase + "', NOW(6))")
}

// notice writes an event of insurer with a delivery made (to the
// webhook) under the once key key (for the webhook).
func (p *pair) notice(insurer, id, kind, key string) {
	p.t.Helper()
	p.exec("INSERT INTO quotesync_events (insurer, request_id, kind, `at`) VALUES ('"+insurer+"', '"+id+"', '"+kind+"', NOW(6))",
		"INSERT INTO quotesync_outbox (event_id, target, kind, insurer, request_id, `at`, next_attempt_at, done_at, once_key)"+
			" SELECT MAX(id), 'webhook', '"+kind+"', '"+insurer+"', '"+id+"', NOW(6), NOW(6), NOW(6), '"+key+":webhook' FROM quotesync_events")
}

// unnamed counts the rows of the three tables with no insurer.
func (p *pair) unnamed() int {
	p.t.Helper()
	n := 0
	for _, table := range []string{"requests", "events", "outbox"} {
		n += p.count("SELECT COUNT(*) FROM quotesync_" + table + " WHERE insurer = ''")
	}
	return n
}

// TestAdoptAtEachLock: after the start that migrated and adopted, the
// older quotesync (holding the lock) reserves a request, writes an event
// of a request already adopted, queues a notice and keeps the status form
// it found, all with no insurer. The newer one's first pass, once it
// holds the lock, works them as the one insurer's: the request reserved
// by the older one is accepted once, with the job it reserved (not taken
// for a new request whose job is in use); the event and the delivery are
// the insurer's, the notice's once key in its form.
func TestAdoptAtEachLock(t *testing.T) {
	p := onePair(t, nil)
	if _, err := p.qd.Store.Insurer("aa").Insert(p.ctx, store.Request{RequestID: "7302", ClaimNumber: "CLM-OLD-2", Phase: qsync.PhaseGone}, store.Event{Kind: "seen"}); err != nil {
		t.Fatal(err)
	}
	p.seed("aa", "7301", sampleshop.ClaimDraft)
	p.oldRequest("7301", sampleshop.ClaimDraft, sampleshop.JobDraft, "reserved", "accept")
	p.oldEvent("7302", "gone")
	p.notice("", "7301", qsync.NoticeExpiring, "expiring:7301")
	p.exec("INSERT INTO quotesync_settings (name, value, updated_at) VALUES ('remote.status_form', 'PUT /jobs/{jobId}/quote/status/{status}', NOW(6))")

	if _, err := p.qd.Once(p.ctx); err != nil {
		t.Fatalf("the pass after the older quotesync wrote: %v", err)
	}
	if n := p.unnamed(); n != 0 {
		t.Errorf("%d rows with no insurer after the pass", n)
	}
	rows, err := p.qd.Store.RequestsByID(p.ctx, "7301")
	if err != nil || len(rows) != 1 || rows[0].Insurer != "aa" {
		t.Fatalf("rows of 7301: %+v, %v; want aa's alone", rows, err)
	}
	if r := rows[0]; r.JobNumber != sampleshop.JobDraft || r.Phase != qsync.PhaseDrafted {
		t.Errorf("aa's 7301: job %q, %s (%s); want the job the older quotesync reserved, %s, drafted", r.JobNumber, r.Phase, r.LastError, sampleshop.JobDraft)
	}
	if rs := p.remoteRequest("aa", "7301"); rs.Status != emulator.RequestAccepted || rs.ReferenceID != sampleshop.JobDraft {
		t.Errorf("aa's service holds 7301 as %+v, want accepted with %s", rs, sampleshop.JobDraft)
	}
	if n := p.emu["aa"].Calls()[emulator.RouteAccept]; n != 1 {
		t.Errorf("%d accepts of 7301, want 1", n)
	}
	if evs, err := p.qd.Store.Insurer("aa").Events(p.ctx, "7302", 0); err != nil || len(evs) != 2 {
		t.Errorf("aa's timeline of 7302: %d events, %v; want its own and the one the older quotesync wrote", len(evs), err)
	}
	if k := p.text("SELECT once_key FROM quotesync_outbox WHERE request_id = '7301'"); k != "expiring@aa:7301:webhook" {
		t.Errorf("the once key of the older quotesync's notice: %q, want aa's form", k)
	}
	if v, ok, err := p.qd.Store.Setting(p.ctx, qsync.StatusFormKey("aa")); err != nil || !ok || v != "PUT /jobs/{jobId}/quote/status/{status}" {
		t.Errorf("aa's status form: %q, %v, %v; want the one the older quotesync found", v, ok, err)
	}
	if n := p.logs.FilterMessage("rows written before insurers adopted").Len(); n != 1 {
		t.Errorf("%d log lines of the adoption, want 1", n)
	}

	// An idle pass finds nothing to adopt, and logs nothing of it.
	if _, err := p.qd.Once(p.ctx); err != nil {
		t.Fatal(err)
	}
	if n := p.logs.FilterMessage("rows written before insurers adopted").Len(); n != 1 {
		t.Errorf("%d log lines of the adoption after an idle pass, want 1", n)
	}
}

// TestAdoptWhenRunTakesTheLock: the daemon's scheduler waits while the
// older quotesync holds the lock, which reserves a request meanwhile;
// when the lock is free, the scheduler takes it, adopts the request and
// its pass accepts it, once, with its job.
func TestAdoptWhenRunTakesTheLock(t *testing.T) {
	p := onePair(t, func(s *qsync.Settings) { s.Sync.Schedule = "@every 1s" })
	older, err := shopdb.Open(p.ctx, p.set.Shop)
	if err != nil {
		t.Fatal(err)
	}
	defer older.Close()
	lock, err := store.New(older).AcquireLock(p.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.qd.Run(ctx, qsync.RunOptions{Lock: p.qd.Lock()}) }()
	waitFor(t, "the scheduler on standby", 10*time.Second, func() bool { return len(p.events.of(qsync.EventStandby)) > 0 })
	p.seed("aa", "7301", sampleshop.ClaimDraft)
	p.oldRequest("7301", sampleshop.ClaimDraft, sampleshop.JobDraft, "reserved", "accept")
	if err := lock.Release(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "aa's 7301 drafted", 15*time.Second, func() bool {
		r, err := p.qd.Store.Insurer("aa").Request(p.ctx, "7301")
		return err == nil && r.Phase == qsync.PhaseDrafted
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rs := p.remoteRequest("aa", "7301"); rs.ReferenceID != sampleshop.JobDraft || p.emu["aa"].Calls()[emulator.RouteAccept] != 1 {
		t.Errorf("aa's service holds 7301 as %+v after %d accepts; want accepted once with %s", rs, p.emu["aa"].Calls()[emulator.RouteAccept], sampleshop.JobDraft)
	}
	if n := p.unnamed(); n != 0 {
		t.Errorf("%d rows with no insurer", n)
	}
}

// TestAdoptAtLockSeveralInsurers: with two insurers, a request written
// with no insurer after the start is refused when the lock is taken, as
// at the start (the count and the fix named); no pass runs, and the lock
// is given up.
func TestAdoptAtLockSeveralInsurers(t *testing.T) {
	p := newPair(t, nil)
	p.seed("aa", "7401", sampleshop.ClaimDraft)
	p.oldRequest("7301", "CLM-OLD-1", "", "waiting", "")
	_, err := p.qd.Once(p.ctx)
	if err == nil || !strings.Contains(err.Error(), "1 request in quotesync's tables") || !strings.Contains(err.Error(), "quotesync insurers adopt NAME") {
		t.Fatalf("a pass with a request of no insurer and two insurers: %v; want it refused, naming 1 request and the fix", err)
	}
	if _, err := p.qd.Store.Insurer("aa").Request(p.ctx, "7401"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("aa's 7401 has a row (%v): a pass ran", err)
	}
	if n := p.emu["aa"].Calls()[emulator.RouteListRequests]; n != 0 {
		t.Errorf("aa's service was listed %d times: a pass ran", n)
	}
	l, err := p.qd.Store.AcquireLock(p.ctx)
	if err != nil {
		t.Fatalf("the lock after the refusal: %v; want it given up", err)
	}
	l.Release()
	if n := p.count("SELECT COUNT(*) FROM quotesync_requests WHERE insurer = ''"); n != 1 {
		t.Errorf("%d requests of no insurer after the refusal, want 1 (left for 'insurers adopt')", n)
	}
	if _, err := p.qd.Adopt(p.ctx, "aa"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.qd.Once(p.ctx); err != nil {
		t.Errorf("a pass once the request was adopted: %v", err)
	}
}

// TestAdoptKeepsCollidingRequests: a request written with no insurer
// whose id the insurer tracks already (the older quotesync's copy) is
// left as it is, with its events, and explained (the ids, how to
// compare them); the other rows are adopted. Nothing fails with the
// server's duplicate key error; passes go on, and so do the commands that
// do not migrate.
func TestAdoptKeepsCollidingRequests(t *testing.T) {
	p := onePair(t, nil)
	if _, err := p.qd.Store.Insurer("aa").Insert(p.ctx, store.Request{RequestID: "7305", ClaimNumber: "CLM-5", JobNumber: "RO-A-5", Phase: qsync.PhaseGone}, store.Event{Kind: "seen"}); err != nil {
		t.Fatal(err)
	}
	p.oldRequest("7305", "CLM-5", "RO-B-5", "gone", "")
	p.oldRequest("7306", "CLM-6", "", "gone", "")

	a, err := p.qd.Adopt(p.ctx, "aa")
	if !errors.Is(err, qsync.ErrAdoptKept) {
		t.Fatalf("Adopt over a request aa tracks: %v, want ErrAdoptKept", err)
	}
	for _, w := range []string{"insurer aa tracks 1 request (7305) already", "quotesync history --insurer aa ID", "insurer = '' AND request_id = 'ID'", "delete the copy"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the explanation %q does not say %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "1062") || strings.Contains(err.Error(), "Duplicate entry") {
		t.Errorf("the explanation is the server's error: %v", err)
	}
	if a.Requests != 1 || a.Events != 1 || len(a.Kept) != 1 || a.Kept[0] != "7305" {
		t.Errorf("adopted %+v; want 7306 and its event, 7305 kept", a)
	}
	if n := p.count("SELECT COUNT(*) FROM quotesync_requests WHERE insurer = '' AND request_id = '7305' AND job_number = 'RO-B-5'"); n != 1 {
		t.Errorf("the copy of 7305 with no insurer: %d rows, want 1, as it was", n)
	}
	if n := p.count("SELECT COUNT(*) FROM quotesync_events WHERE insurer = '' AND request_id = '7305'"); n != 1 {
		t.Errorf("the copy's events: %d, want its 1, left with it", n)
	}
	if r := p.row("aa", "7306"); r.Phase != qsync.PhaseGone {
		t.Errorf("aa's 7306: %+v", r)
	}

	// The passes go on, the copy logged as left each time the lock is
	// taken; a command that does not migrate opens.
	if _, err := p.qd.Once(p.ctx); err != nil {
		t.Errorf("a pass with the copy left: %v", err)
	}
	if n := p.logs.FilterMessage("rows written before insurers left unadopted").Len(); n != 1 {
		t.Errorf("%d log lines of the copy left, want 1", n)
	}
	qd, err := qsync.Open(p.ctx, p.set, qsync.OpenOptions{AllowNoTables: true, StateOnly: true})
	if err != nil {
		t.Fatalf("Open as retry does, with the copy left: %v", err)
	}
	qd.Close()

	// check does not promise that the next start gives the copy away.
	items := qsync.Check(p.ctx, p.set)
	i := slices.IndexFunc(items, func(it qsync.CheckItem) bool { return it.Name == "insurers" })
	if i < 0 || items[i].Status != qsync.CheckWarn || !strings.Contains(items[i].Detail, "1 request written before insurers had names has an id insurer aa tracks already") ||
		!strings.Contains(items[i].Detail, "quotesync history --insurer aa ID") || strings.Contains(items[i].Detail, "next start") {
		t.Errorf("check's insurers line with the copy left: %+v", items)
	}
}

// TestInsurersMoveCarriesKeys: a rename moves what is keyed by the old
// name beside its requests: the once keys of its notices (a notice is
// not recorded again under the new name), its notices of no request,
// and its status form unless the new name has one.
func TestInsurersMoveCarriesKeys(t *testing.T) {
	p := newPair(t, nil)
	if _, err := p.qd.Store.Insurer("old").Insert(p.ctx, store.Request{RequestID: "551", Phase: qsync.PhaseWaiting}, store.Event{Kind: "seen"}); err != nil {
		t.Fatal(err)
	}
	p.notice("old", "551", qsync.NoticeExpiring, "expiring@old:551")
	p.notice("old", "", qsync.NoticeAuthFailing, "auth_failing@old")
	p.notice("bb", "", qsync.NoticeAuthFailing, "auth_failing@bb")
	p.notice("old-2", "", qsync.NoticeAuthFailing, "auth_failing@old-2")
	for _, s := range [][2]string{{"old", "form of old"}, {"old-2", "form of old-2"}, {"bb", "form of bb"}} {
		if err := p.qd.Store.PutSetting(p.ctx, qsync.StatusFormKey(s[0]), s[1]); err != nil {
			t.Fatal(err)
		}
	}

	if moved, errs, err := p.qd.MoveRequests(p.ctx, "old", "aa"); err != nil || len(errs) != 0 || len(moved) != 1 {
		t.Fatalf("move old -> aa: %d moved, %v, %v", len(moved), errs, err)
	}
	if k := p.text("SELECT once_key FROM quotesync_outbox WHERE request_id = '551'"); k != "expiring@aa:551:webhook" {
		t.Errorf("the once key of old's 551's notice after the move: %q, want aa's", k)
	}
	if n := p.count("SELECT COUNT(*) FROM quotesync_outbox WHERE insurer = 'aa' AND once_key = 'auth_failing@aa:webhook'"); n != 1 {
		t.Errorf("old's auth_failing notice after the move: %d of aa's with aa's key, want 1", n)
	}
	if n := p.count("SELECT COUNT(*) FROM quotesync_events WHERE insurer = 'old'"); n != 0 {
		t.Errorf("%d events of old left after the move", n)
	}
	if v, ok, _ := p.qd.Store.Setting(p.ctx, qsync.StatusFormKey("aa")); !ok || v != "form of old" {
		t.Errorf("aa's status form after the move: %q, %v; want old's", v, ok)
	}

	// old-2 moved to bb, which has a status form and an episode of its own
	// open: bb's stay, old-2's key is released (its notice was sent).
	if _, errs, err := p.qd.MoveRequests(p.ctx, "old-2", "bb"); err != nil || len(errs) != 0 {
		t.Fatalf("move old-2 -> bb: %v, %v", errs, err)
	}
	if v, _, _ := p.qd.Store.Setting(p.ctx, qsync.StatusFormKey("bb")); v != "form of bb" {
		t.Errorf("bb's status form after the move of old-2: %q, want its own", v)
	}
	if n := p.count("SELECT COUNT(*) FROM quotesync_outbox WHERE insurer = 'bb' AND once_key = 'auth_failing@bb:webhook'"); n != 1 {
		t.Errorf("bb's own held key: %d, want 1", n)
	}
	if n := p.count("SELECT COUNT(*) FROM quotesync_outbox WHERE once_key LIKE '%old-2%'"); n != 0 {
		t.Errorf("%d once keys of old-2 still held after its move to bb", n)
	}
}

// TestAdoptAtLockReadsRowsAnew: adopting changes neither a row's
// updated_at nor the counts per phase, so the state fingerprint stays as
// it was; a run-loop pass that read the insurer's rows while an older
// quotesync's row had no insurer yet must not use those rows again after
// the lock adopted it.
func TestAdoptAtLockReadsRowsAnew(t *testing.T) {
	p := onePair(t, nil)
	e := p.qd.Engine
	if !p.qd.Shop.HasShopChanged() {
		t.Fatal("the sample mapping has no shop_changed: this test needs the fingerprint")
	}
	if _, err := e.Pass(p.ctx); err != nil {
		t.Fatal(err)
	}
	p.oldRequest("7309", "CLM-OLD-9", "", "waiting", "")
	before, err := e.Pass(p.ctx) // reads aa's rows anew (the fingerprint moved), 7309 not among them
	if err != nil {
		t.Fatal(err)
	}
	lease, err := p.qd.Lock()(p.ctx)
	if err != nil {
		t.Fatal(err)
	}
	lease.Release()
	if n := p.unnamed(); n != 0 {
		t.Fatalf("%d rows with no insurer after the lock was taken", n)
	}
	after, err := e.Pass(p.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Tracked != before.Tracked+1 {
		t.Errorf("the pass after the adoption tracked %d rows, the one before %d: the adopted request was not read", after.Tracked, before.Tracked)
	}
}

// TestAdoptIsTheExecutors: an adoption goes through the executor as every
// change of a request's state does: each row adopted is written
// compare-and-set with its version bumped and an event "adopted" in its
// timeline, reported once to every observer (at debug level in the log,
// the adoption summed up at info), in whatever phase it is (one this
// quotesync does not know is carried as it is); and a start after it
// reads them anew.
func TestAdoptIsTheExecutors(t *testing.T) {
	p := onePair(t, nil)
	p.oldRequest("7311", "CLM-11", "RO-A-11", "drafted", "")
	p.oldRequest("7312", "CLM-12", "", "archived", "")
	a, err := p.qd.Adopt(p.ctx, "aa")
	if err != nil || a.Requests != 2 || a.Events != 2 {
		t.Fatalf("Adopt: %+v, %v; want the 2 requests and their 2 events", a, err)
	}
	for id, phase := range map[string]store.Phase{"7311": qsync.PhaseDrafted, "7312": "archived"} {
		r := p.row("aa", id)
		if r.Phase != phase || r.Version != 3 {
			t.Errorf("aa's %s: %s at version %d; want %s at version 3 (the older quotesync's 2, and the adoption)", id, r.Phase, r.Version, phase)
		}
		evs, err := p.qd.Store.Insurer("aa").Events(p.ctx, id, 0)
		if err != nil || len(evs) != 2 || evs[0].Kind != string(qsync.EventAdopted) || evs[0].From != phase || evs[0].To != phase ||
			!strings.Contains(evs[0].Message, "given to insurer aa") {
			t.Errorf("aa's timeline of %s: %+v, %v; want the adoption over the older quotesync's event", id, evs, err)
		}
	}
	if got := p.events.of(qsync.EventAdopted); len(got) != 2 || got[0].Insurer != "aa" || got[0].Request != "7311" {
		t.Errorf("adopted events observed: %+v; want 7311's and 7312's, of aa", got)
	}
	if n := p.logs.FilterMessage("request written before insurers given to its insurer").FilterLevelExact(zapcore.DebugLevel).Len(); n != 2 {
		t.Errorf("%d debug lines of the adopted requests, want 2", n)
	}
	if a, err := p.qd.Adopt(p.ctx, "aa"); err != nil || a.Any() || len(p.events.of(qsync.EventAdopted)) != 2 {
		t.Errorf("a second Adopt: %+v, %v; want nothing adopted, nothing reported", a, err)
	}
}
