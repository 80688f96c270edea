package statuspage

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// seed writes five requests through the state machine's phases, as the
// engine would, oldest first: r-done (drafted and submitted), r-held
// (accepted, then held for an unmapped code), r-draft (accepted,
// drafted), r-taken (taken elsewhere, its job given up), r-rej (refused).
func seed(t *testing.T, db *store.Store) {
	t.Helper()
	ctx := testContext(t)
	step := func(r store.Request, mutate func(*store.Request), ev store.Event) store.Request {
		t.Helper()
		next := r
		mutate(&next)
		saved, err := db.Update(ctx, r, next, ev)
		if err != nil {
			t.Fatal(err)
		}
		return saved
	}
	for i, id := range []string{"r-done", "r-held", "r-draft", "r-taken", "r-rej"} {
		job := fmt.Sprintf("RO-%d", 100+i)
		r, err := db.Insert(ctx, store.Request{RequestID: id, ClaimNumber: "CLM-" + id, JobNumber: job,
			Phase: qsync.PhaseReserved, Intent: qsync.IntentAccept, CreatedAt: time.Now().Add(time.Duration(i) * time.Millisecond)},
			store.Event{Kind: string(qsync.EventReserved), Message: "job " + job + " found by find_job"})
		if err != nil {
			t.Fatal(err)
		}
		switch id {
		case "r-taken":
			step(r, func(n *store.Request) {
				n.Phase, n.Intent, n.Reason, n.JobNumber, n.ReleasedJob = qsync.PhaseTakenElsewhere, qsync.IntentNone, qsync.ReasonOtherReference, "", job
				n.LastError = "the remote says the request was accepted with referenceId OTHER-9, not ours (" + job + ")"
			}, store.Event{Kind: string(qsync.EventTakenElsewhere), Reason: qsync.ReasonOtherReference, Job: job, Status: 409,
				Message: "the remote says the request was accepted with referenceId OTHER-9, not ours (" + job + ")"})
			continue
		case "r-rej":
			step(r, func(n *store.Request) {
				n.Phase, n.Intent, n.Reason, n.ResumePhase = qsync.PhaseRejected, qsync.IntentNone, qsync.ReasonRefused, qsync.PhaseReserved
				n.LastError = "accept request r-rej: 422 claim closed"
			}, store.Event{Kind: string(qsync.EventRejected), Reason: qsync.ReasonRefused, Status: 422,
				Message: "accept request r-rej: 422 claim closed"})
			continue
		}
		r = step(r, func(n *store.Request) { n.Phase, n.Intent = qsync.PhaseAccepted, qsync.IntentNone },
			store.Event{Kind: string(qsync.EventAccepted), Route: "POST /requests/{id}", Status: 201})
		switch id {
		case "r-held":
			step(r, func(n *store.Request) {
				n.Reason, n.LastError = qsync.ReasonUnmappedCode, "line 3: operation code ZZZ is not under shop.work_types"
			}, store.Event{Kind: string(qsync.EventHeld), Reason: qsync.ReasonUnmappedCode,
				Message: "line 3: operation code ZZZ is not under shop.work_types"})
		default:
			r = step(r, func(n *store.Request) { n.Phase, n.PushedHash = qsync.PhaseDrafted, "sha-one-0123456789" },
				store.Event{Kind: string(qsync.EventDrafted), Items: 4, Hash: "sha-one-0123456789", Route: "POST /jobs/{id}/quotes", Status: 201})
			if id == "r-done" {
				step(r, func(n *store.Request) { n.Phase, n.SubmittedAt = qsync.PhaseSubmitted, time.Now() },
					store.Event{Kind: string(qsync.EventSubmitted), Hash: "sha-one-0123456789", Status: 200})
			}
		}
	}
}

func get(t *testing.T, url string) (int, string, http.Header) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header
}

func mustContain(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}

// TestPage serves the page on a real database and reads it as a browser
// would: the list, the filter, a request's timeline, find, errors.
func TestPage(t *testing.T) {
	shop, _ := shopdbtest.New(t)
	db := store.New(shop)
	seed(t, db)
	on := true
	var mu gosync.Mutex
	h := New(Options{Store: func() *store.Store { return db }, Version: "v-test",
		Enabled: func() bool { mu.Lock(); defer mu.Unlock(); return on },
		Health: func() (bool, string, time.Time) {
			return false, "the last successful pass was at 08:00; the last one failed: remote refused the token", time.Time{}
		}})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	code, body, hdr := get(t, srv.URL+"/status")
	if code != 200 {
		t.Fatalf("GET /status: %d\n%s", code, body)
	}
	mustContain(t, "the list", body,
		`<meta name="viewport" content="width=device-width, initial-scale=1">`, `<meta http-equiv="refresh" content="30">`,
		"5 tracked · 3 need a person", "Request r-draft", "Request r-held", "Request r-done",
		`id="request-r-taken" data-phase="taken_elsewhere"`, "job (RO-103)", html.EscapeString(qsync.Reason(qsync.ReasonOtherReference).Words),
		"referenceId OTHER-9", `id="request-r-rej" data-phase="rejected"`, html.EscapeString(qsync.Reason(qsync.ReasonRefused).Words),
		html.EscapeString("What to do: fix what the error says, then `quotesync retry r-rej`"),
		`id="request-r-held" data-phase="accepted"`, "Held: a line&#39;s operation code is not under shop.work_types",
		"line 3: operation code ZZZ", "What to do: add the code under shop.work_types",
		"Last: Submitted for assessment (the Draft with hash sha-one-0123)", "v-test",
		`<p class="health bad" role="status">quotesync needs attention: the last successful pass was at 08:00; the last one failed: remote refused the token</p>`)
	if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
	if strings.Contains(body, "<script") {
		t.Error("the page has a script")
	}

	_, body, _ = get(t, srv.URL+"/status?need=person")
	mustContain(t, "needs a person", body, "Request r-held", "Request r-taken", "Request r-rej", `aria-current="page">Needs a person (3)`)
	if strings.Contains(body, "Request r-draft") || strings.Contains(body, "Request r-done") {
		t.Errorf("needs a person lists a request that needs nobody:\n%s", body)
	}

	code, body, _ = get(t, srv.URL+"/status/requests/r-done")
	if code != 200 {
		t.Fatalf("the page of r-done: %d\n%s", code, body)
	}
	steps := []string{"listed by the insurer; job RO-100 reserved for it", "accepted with referenceId RO-100",
		"Draft pushed: 4 lines, hash sha-one-0123", "Submitted for assessment (the Draft with hash sha-one-0123)"}
	last := -1
	for _, s := range steps {
		i := strings.Index(body, s)
		if i < 0 || i < last {
			t.Errorf("the timeline of r-done lacks %q or has it out of order", s)
		}
		last = i
	}

	code, _, hdr = get(t, srv.URL+"/status/find?q=RO-101")
	if code != http.StatusSeeOther || hdr.Get("Location") != "/status/requests/r-held" {
		t.Errorf("find RO-101: %d to %q, want 303 to the page of r-held", code, hdr.Get("Location"))
	}
	code, body, _ = get(t, srv.URL+"/status/find?q=nothing")
	if code != 200 || !strings.Contains(body, "No tracked request has the id or the job number") {
		t.Errorf("find nothing: %d\n%s", code, body)
	}
	code, body, _ = get(t, srv.URL+"/status/requests/unknown")
	if code != 404 || !strings.Contains(body, "quotesync does not track a request unknown") {
		t.Errorf("an unknown request: %d\n%s", code, body)
	}
	code, _, _ = get(t, srv.URL+"/status?page=zero")
	if code != 400 {
		t.Errorf("page=zero: %d, want 400", code)
	}
	mu.Lock()
	on = false
	mu.Unlock()
	code, body, _ = get(t, srv.URL+"/status")
	if code != 404 || !strings.Contains(body, "metrics.status_page: false") {
		t.Errorf("switched off: %d %s", code, body)
	}
}

// TestPageReadsOnceForManyBrowsers: however many browsers refresh at
// once, the database sees one read of a page per CacheFor, and a
// page is read in a fixed number of round trips.
func TestPageReadsOnceForManyBrowsers(t *testing.T) {
	shop, _ := shopdbtest.New(t)
	db := store.New(shop)
	seed(t, db)
	srv := httptest.NewServer(New(Options{Store: func() *store.Store { return db }, CacheFor: time.Minute}))
	t.Cleanup(srv.Close)
	before := shopdbtest.RoundTrips(shop)
	var wg gosync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, body, _ := get(t, srv.URL+"/status"); code != 200 {
				t.Errorf("GET /status: %d %s", code, body)
			}
		}()
	}
	wg.Wait()
	if got := shopdbtest.RoundTrips(shop) - before; got != 3 {
		t.Errorf("20 browsers at once cost %d round trips, want 3 (counts, the page, the newest events)", got)
	}
}

// TestPageBeforeDatabase: before the daemon has a database, and before
// its first migration, the page says so instead of failing blankly.
func TestPageBeforeDatabase(t *testing.T) {
	srv := httptest.NewServer(New(Options{Store: func() *store.Store { return nil }}))
	t.Cleanup(srv.Close)
	code, body, _ := get(t, srv.URL+"/status")
	if code != 503 || !strings.Contains(body, "not connected to the database yet") {
		t.Errorf("no database: %d\n%s", code, body)
	}

	d := shopdbtest.NewSampleShop(t)
	db, err := shopdb.Open(testContext(t), d.Config())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	srv2 := httptest.NewServer(New(Options{Store: func() *store.Store { return store.New(db) }}))
	t.Cleanup(srv2.Close)
	code, body, _ = get(t, srv2.URL+"/status")
	if code != 200 || !strings.Contains(body, "state tables do not exist yet") {
		t.Errorf("no state tables: %d\n%s", code, body)
	}
}

// TestListPages: a state larger than a page is shown a page at a time,
// with links between the pages.
func TestListPages(t *testing.T) {
	shop, _ := shopdbtest.New(t)
	db := store.New(shop)
	seed(t, db)
	ctx := testContext(t)
	l, err := LoadFiltered(ctx, db, Filter{Page: 2, Size: 2})
	if err != nil {
		t.Fatal(err)
	}
	if l.Total != 5 || l.Pages != 3 || len(l.Requests) != 2 || l.Requests[0].ID != "r-draft" || l.Requests[1].ID != "r-held" {
		t.Errorf("page 2 of 3, 2 to a page: total %d, pages %d, requests %v; want 5, 3, r-draft and r-held", l.Total, l.Pages, l.Requests)
	}
	srv := httptest.NewServer(New(Options{Store: func() *store.Store { return db }, PageSize: 2}))
	t.Cleanup(srv.Close)
	_, body, _ := get(t, srv.URL+"/status")
	mustContain(t, "page 1", body, `href="/status?page=2" rel="next"`, "page 1 of 3")
	_, body, _ = get(t, srv.URL+"/status?page=3")
	mustContain(t, "page 3", body, `href="/status?page=2" rel="prev"`, "Request r-done")
	if strings.Contains(body, `rel="next"`) {
		t.Error("the last page links to a next one")
	}
}

// TestListOf10000: a shop with 10,000 tracked jobs (and 30,000 events)
// is listed a page at a time, in three statements whatever the size.
func TestListOf10000(t *testing.T) {
	shop, d := shopdbtest.New(t)
	db := store.New(shop)
	ctx := testContext(t)
	const digits = "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)"
	const n = "(SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 1 AS i FROM " + digits + " a, " + digits + " b, " + digits + " c, " + digits + " e) n"
	for _, q := range []string{
		`INSERT INTO quotesync_requests (request_id, claim_number, job_number, phase, reason, created_at, updated_at, version)
SELECT CONCAT('gen-', LPAD(i, 5, '0')), CONCAT('CLM-', i), CONCAT('J', i), 'drafted',
  CASE WHEN i % 100 = 0 THEN 'shop_data' ELSE '' END, TIMESTAMP('2026-01-01') + INTERVAL i SECOND, NOW(6), 1 FROM ` + n,
		`INSERT INTO quotesync_events (request_id, job, kind, ` + "`at`" + `)
SELECT CONCAT('gen-', LPAD(i, 5, '0')), CONCAT('J', i), k.kind, NOW(6) FROM ` + n + `,
  (SELECT 'reserved' kind UNION ALL SELECT 'accepted' UNION ALL SELECT 'drafted') k`,
	} {
		if _, err := d.SQL.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	before, start := shopdbtest.RoundTrips(shop), time.Now()
	l, err := LoadFiltered(ctx, db, Filter{PersonOnly: true, Page: 2})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if got := shopdbtest.RoundTrips(shop) - before; got != 3 {
		t.Errorf("a page of 10,000 took %d round trips, want 3", got)
	}
	if l.Total != 10000 || l.Person != 100 || l.Pages != 2 || len(l.Requests) != 50 || l.Requests[0].ID != "gen-05000" {
		t.Errorf("page 2 of what needs a person: total %d, person %d, pages %d, %d requests from %v", l.Total, l.Person, l.Pages, len(l.Requests), l.Requests[:1])
	}
	if l.Requests[0].Last == nil || l.Requests[0].Last.Kind != "drafted" {
		t.Errorf("the newest event of %s = %+v, want drafted", l.Requests[0].ID, l.Requests[0].Last)
	}
	t.Logf("page 2 of what needs a person among 10,000 requests: %s", took)
}

// seedTwo writes request 7301 for two insurers, each with its own claim,
// job and timeline: aa's drafted (its newest event the older of the two
// newest), bb's rejected; and cc's 7302, an insurer no longer configured.
func seedTwo(t *testing.T, db *store.Store) {
	t.Helper()
	ctx := testContext(t)
	write := func(ins, id, claim, job string, steps ...func(*store.Request) store.Event) {
		t.Helper()
		idb := db.Insurer(ins)
		r, err := idb.Insert(ctx, store.Request{RequestID: id, ClaimNumber: claim, JobNumber: job, Phase: qsync.PhaseReserved,
			Intent: qsync.IntentAccept}, store.Event{Kind: string(qsync.EventReserved)})
		if err != nil {
			t.Fatal(err)
		}
		for _, step := range steps {
			next := r
			ev := step(&next)
			if r, err = idb.Update(ctx, r, next, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	accept := func(n *store.Request) store.Event {
		n.Phase, n.Intent = qsync.PhaseAccepted, qsync.IntentNone
		return store.Event{Kind: string(qsync.EventAccepted), Status: 201}
	}
	write("aa", "7301", "CLM-AA", "RO-AA", accept, func(n *store.Request) store.Event {
		n.Phase, n.PushedHash = qsync.PhaseDrafted, "sha-aa-0123456789"
		return store.Event{Kind: string(qsync.EventDrafted), Items: 2, Hash: "sha-aa-0123456789"}
	})
	write("bb", "7301", "CLM-BB", "RO-BB", func(n *store.Request) store.Event {
		n.Phase, n.Intent, n.Reason, n.ResumePhase = qsync.PhaseRejected, qsync.IntentNone, qsync.ReasonRefused, qsync.PhaseReserved
		n.LastError = "accept request 7301: 422 claim closed"
		return store.Event{Kind: string(qsync.EventRejected), Reason: qsync.ReasonRefused, Status: 422, Message: n.LastError}
	})
	write("cc", "7302", "CLM-CC", "RO-CC", accept)
}

// TestPageInsurers serves the page of two insurers' requests, request
// 7301 at both, on a real database over real HTTP: every card names its
// insurer and shows its own newest event, the filter per insurer, each
// request's page by insurer, the old address of an id that several
// insurers track, and find.
func TestPageInsurers(t *testing.T) {
	shop, _ := shopdbtest.New(t)
	db := store.New(shop)
	seedTwo(t, db)
	configured := []string{"aa", "bb"}
	var mu gosync.Mutex
	h := New(Options{Store: func() *store.Store { return db }, CacheFor: time.Nanosecond,
		Insurers: func() []string { mu.Lock(); defer mu.Unlock(); return configured }})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	code, body, _ := get(t, srv.URL+"/status")
	if code != 200 {
		t.Fatalf("GET /status: %d\n%s", code, body)
	}
	aaCard, bbCard := cardOf(t, body, "aa/7301"), cardOf(t, body, "bb/7301")
	mustContain(t, "aa's card", aaCard, `data-insurer="aa"`, `href="/status/requests/aa/7301"`, "insurer aa · claim CLM-AA · job RO-AA",
		"Last: Draft pushed: 2 lines, hash sha-aa-01234")
	mustContain(t, "bb's card", bbCard, `data-insurer="bb"`, `href="/status/requests/bb/7301"`, "insurer bb · claim CLM-BB · job RO-BB",
		html.EscapeString("What to do: fix what the error says, then `quotesync retry --insurer bb 7301`"), "Last: rejected by the remote")
	mustContain(t, "the list", body, "3 tracked · 1 need a person",
		`<a href="/status" aria-current="page">All insurers (3)</a>`, `<a href="/status?insurer=aa">aa (1)</a>`,
		`<a href="/status?insurer=bb">bb (1)</a>`, `<a href="/status?insurer=cc">cc (1) · not configured</a>`,
		`<p class="muted" data-insurer="bb"><a href="/status?insurer=bb">bb</a>: 1 tracked · 1 need a person · <span title="refused by the remote; needs a person">1 rejected</span></p>`)

	_, body, _ = get(t, srv.URL+"/status?insurer=aa")
	mustContain(t, "aa's list", body, "<h1>Quote requests of aa</h1>", "1 tracked · 0 need a person",
		`<a href="/status?insurer=aa" aria-current="page">aa (1)</a>`, `<a href="/status?insurer=aa&amp;need=person">Needs a person (0)</a>`)
	if !strings.Contains(body, `id="request-aa/7301"`) || strings.Contains(body, `id="request-bb/7301"`) || strings.Contains(body, "CLM-CC") {
		t.Errorf("?insurer=aa does not list aa's requests only:\n%s", body)
	}
	_, body, _ = get(t, srv.URL+"/status?insurer=bb&need=person")
	if !strings.Contains(body, `id="request-bb/7301"`) || strings.Contains(body, "CLM-AA") {
		t.Errorf("?insurer=bb&need=person does not list bb's refused request only:\n%s", body)
	}
	if code, _, _ := get(t, srv.URL+"/status?insurer=no%20such"); code != 400 {
		t.Errorf("?insurer=no such: %d, want 400", code)
	}

	for ins, want := range map[string][]string{
		"aa": {"<dt>Insurer</dt><dd>aa</dd>", "CLM-AA", "accepted with referenceId RO-AA", "Draft pushed: 2 lines"},
		"bb": {"<dt>Insurer</dt><dd>bb</dd>", "CLM-BB", "422 claim closed", "<title>Request 7301 · bb · quotesync</title>"},
	} {
		code, body, _ := get(t, srv.URL+"/status/requests/"+ins+"/7301")
		if code != 200 {
			t.Fatalf("the page of %s's 7301: %d\n%s", ins, code, body)
		}
		mustContain(t, ins+"'s 7301", body, want...)
		if other := map[string]string{"aa": "CLM-BB", "bb": "CLM-AA"}[ins]; strings.Contains(body, other) {
			t.Errorf("the page of %s's 7301 shows the other's claim %s", ins, other)
		}
	}
	if code, body, _ := get(t, srv.URL+"/status/requests/7301?insurer=bb"); code != 200 || !strings.Contains(body, "CLM-BB") {
		t.Errorf("/status/requests/7301?insurer=bb: %d, want bb's page", code)
	}
	if code, _, _ := get(t, srv.URL+"/status/requests/aa/7302"); code != 404 {
		t.Errorf("aa's 7302 (cc's): %d, want 404", code)
	}

	// The old address of an id that two insurers track: a choice.
	code, body, _ = get(t, srv.URL+"/status/requests/7301")
	mustContain(t, "the old address of 7301", body, "Several insurers&#39; services sent a request 7301: choose one.",
		`href="/status/requests/aa/7301"`, `href="/status/requests/bb/7301"`)
	if code != 200 {
		t.Errorf("the old address of 7301: %d", code)
	}
	code, _, hdr := get(t, srv.URL+"/status/requests/7302")
	if code != 200 {
		t.Errorf("the old address of 7302 (cc's alone): %d", code)
	}
	code, _, hdr = get(t, srv.URL+"/status/find?q=RO-BB")
	if code != http.StatusSeeOther || hdr.Get("Location") != "/status/requests/bb/7301" {
		t.Errorf("find RO-BB: %d to %q, want 303 to bb's 7301", code, hdr.Get("Location"))
	}
	code, body, _ = get(t, srv.URL+"/status/find?q=7301")
	if code != 200 || !strings.Contains(body, `href="/status/requests/aa/7301"`) || !strings.Contains(body, `href="/status/requests/bb/7301"`) {
		t.Errorf("find 7301: %d, want both insurers' 7301 to choose from\n%s", code, body)
	}

	// aa alone configured: its 7301 is the old address's, shown as
	// before; bb's and cc's are still listed, named.
	mu.Lock()
	configured = []string{"aa"}
	mu.Unlock()
	code, body, _ = get(t, srv.URL+"/status/requests/7301")
	if code != 200 || !strings.Contains(body, "CLM-AA") || strings.Contains(body, "<dt>Insurer</dt>") {
		t.Errorf("the old address of 7301 with aa alone configured: %d, want aa's page as before\n%s", code, body)
	}
	_, body, _ = get(t, srv.URL+"/status")
	mustContain(t, "the list with aa alone", body, `<a href="/status?insurer=bb">bb (1) · not configured</a>`, `id="request-bb/7301"`)
}

// cardOf is the card of the request with anchor request-ANCHOR in body.
func cardOf(t *testing.T, body, anchor string) string {
	t.Helper()
	_, card, ok := strings.Cut(body, `id="request-`+anchor+`"`)
	if !ok {
		t.Fatalf("no card request-%s in\n%s", anchor, body)
	}
	card, _, _ = strings.Cut(card, "</li>")
	return card
}

// TestPageOneInsurerUnnamed: with one insurer configured and every
// request its own, the page names no insurer and keeps its addresses.
func TestPageOneInsurerUnnamed(t *testing.T) {
	shop, _ := shopdbtest.New(t)
	db := store.New(shop)
	seed(t, db)
	srv := httptest.NewServer(New(Options{Store: func() *store.Store { return db }, Insurers: func() []string { return []string{"default"} }}))
	t.Cleanup(srv.Close)
	_, body, _ := get(t, srv.URL+"/status")
	mustContain(t, "the list", body, `id="request-r-draft"`, `href="/status/requests/r-draft"`)
	if strings.Contains(body, "data-insurer") || strings.Contains(body, `aria-label="insurer"`) || strings.Contains(body, "insurer default") {
		t.Errorf("one insurer's list names it:\n%s", body)
	}
	code, body, _ := get(t, srv.URL+"/status/requests/r-done")
	if code != 200 || strings.Contains(body, "<dt>Insurer</dt>") {
		t.Errorf("one insurer's request page: %d, names the insurer or fails", code)
	}
}
