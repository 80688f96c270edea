package sync_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// webhookSecret is the test receiver's secret header value: it must never
// appear in a log line.
const webhookSecret = "Bearer hook-secret-5d1e"

// receiver is a real HTTP receiver of webhook notifications.
type receiver struct {
	t   *testing.T
	srv *httptest.Server

	mu      gosync.Mutex
	notices []qsync.Notice
	secrets []string // the secret header of each POST
	keys    []string // the Idempotency-Key header of each POST
	fail    int      // answer 500 to this many POSTs first
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{t: t}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.secrets = append(rc.secrets, req.Header.Get("Authorization"))
		rc.keys = append(rc.keys, req.Header.Get("Idempotency-Key"))
		if rc.fail > 0 {
			rc.fail--
			http.Error(w, "receiver down for maintenance", http.StatusInternalServerError)
			return
		}
		var n qsync.Notice
		if err := json.Unmarshal(body, &n); err != nil || req.Header.Get("Content-Type") != "application/json" ||
			req.Header.Get("Idempotency-Key") != n.ID {
			t.Errorf("webhook POST: %v; content type %q, idempotency key %q, body %s", err,
				req.Header.Get("Content-Type"), req.Header.Get("Idempotency-Key"), body)
		}
		rc.notices = append(rc.notices, n)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// got returns the notices received, oldest first.
func (rc *receiver) got() []qsync.Notice {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]qsync.Notice(nil), rc.notices...)
}

func (rc *receiver) posts() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.secrets)
}

// commandNotifier writes a shell script that appends its standard input,
// one notice a line, to a file; it returns the config and the file.
func commandNotifier(t *testing.T) (qsync.CommandConfig, string) {
	dir := t.TempDir()
	script, out := filepath.Join(dir, "notify.sh"), filepath.Join(dir, "notices.jsonl")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat >> \"$1\"\necho >> \"$1\"\nenv > \"$1.env\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return qsync.CommandConfig{Path: script, Args: []string{out}, Timeout: 5 * time.Second}, out
}

// commandNotices reads what the command received.
func commandNotices(t *testing.T, path string) []qsync.Notice {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []qsync.Notice
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var n qsync.Notice
		if err := json.Unmarshal(sc.Bytes(), &n); err != nil {
			t.Fatalf("the command got %q: %v", sc.Text(), err)
		}
		out = append(out, n)
	}
	return out
}

func noticeEvents(ns []qsync.Notice) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Event + ":" + n.Request
	}
	return out
}

// writeBackAll is a write-back statement for every kind, on the sample
// shop's jobs.
func writeBackAll() map[string]string {
	m := map[string]string{}
	for _, k := range shopdb.WriteBackKinds() {
		m[k] = `UPDATE jobs SET insurer_status = :status, insurer_note = :reason, insurer_updated_at = :time WHERE job_no = :job`
	}
	return m
}

// notifyRig is a rig with write-back on every kind, a webhook with a
// secret header and a command.
func notifyRig(t *testing.T, edit func(*qsync.Settings)) (*rig, *receiver, string) {
	rc := newReceiver(t)
	cmd, out := commandNotifier(t)
	r := newRig(t, rigOptions{shop: func(c *shopdb.Config) { c.WriteBack = writeBackAll() }})
	r.restart(func(s *qsync.Settings) {
		s.Notify = qsync.NotifyConfig{
			Webhook: qsync.WebhookConfig{URL: rc.srv.URL + "/hook?token=in-the-query", Timeout: 5 * time.Second,
				Header: "Authorization", Secret: webhookSecret},
			Command: cmd,
		}
		if edit != nil {
			edit(s)
		}
	})
	return r, rc, out
}

// work runs the outbox as the daemon does after a pass.
func (r *rig) work() { r.outbox.Work(r.ctx) }

// insurer reads the sample shop's insurer_status of job.
func (r *rig) insurer(job string) string {
	r.t.Helper()
	st, _, err := r.shop.InsurerStatus(r.ctx, job)
	if err != nil {
		r.t.Fatal(err)
	}
	return st
}

// TestWriteBackAndNotificationsFollowTheFlow: the whole flow of a final
// estimate and a change after submission, with write-back on every kind,
// a webhook and a command. The write-back runs after the pass, also when
// the daemon restarted in between; the shop's job shows each step; the change
// after submission is written back and notified once, to both notifiers;
// idle passes and a restart send nothing more; the secret never appears
// in a log line.
func TestWriteBackAndNotificationsFollowTheFlow(t *testing.T) {
	t.Setenv("QUOTESYNC_TEST_TOKEN_VAR", "daemon-secret-41c2") // as a token in the environment
	r, rc, out := notifyRig(t, nil)
	ids := r.seed(sampleshop.ClaimFinal)
	req := ids[0]

	r.pass() // accepted, drafted, submitted (the estimate is final)
	if got := r.insurer(sampleshop.JobFinal); got != "" {
		t.Fatalf("insurer_status = %q before the outbox was worked: the write-back ran inside the pass", got)
	}
	if got := r.row(req).Phase; got != qsync.PhaseSubmitted {
		t.Fatalf("phase after the first pass = %s, want submitted", got)
	}
	// The process dies between the events' commit and their write-back: a
	// new daemon finds the deliveries and makes them.
	r.restart(nil)
	r.work() // the three write-backs, in the order of their events
	if got, want := r.insurer(sampleshop.JobFinal), shopdb.WriteBackSubmitted; got != want {
		t.Fatalf("insurer_status after submission = %q, want %q", got, want)
	}
	if n := len(rc.got()) + len(commandNotices(t, out)); n != 0 {
		t.Fatalf("%d notifications for a flow that needs no person", n)
	}

	// A change after submission: written back and notified, once.
	lines, err := r.shop.Lines(r.ctx, sampleshop.JobFinal)
	if err != nil {
		t.Fatal(err)
	}
	lines[0].Description += " (revised)"
	if err := r.shop.EditLine(r.ctx, lines[0]); err != nil {
		t.Fatal(err)
	}
	r.pass()
	r.work()
	if got, want := r.insurer(sampleshop.JobFinal), shopdb.WriteBackSupplementNeeded; got != want {
		t.Errorf("insurer_status after the change = %q, want %q", got, want)
	}
	// Idle passes, and a restart, send nothing more.
	for i := 0; i < 3; i++ {
		r.pass()
		r.work()
	}
	r.restart(nil)
	r.pass()
	r.work()

	for name, got := range map[string][]qsync.Notice{"webhook": rc.got(), "command": commandNotices(t, out)} {
		if len(got) != 1 {
			t.Fatalf("%s got %v, want one supplement_needed notice", name, noticeEvents(got))
		}
		n := got[0]
		if n.Event != shopdb.WriteBackSupplementNeeded || n.Request != req || n.Job != sampleshop.JobFinal ||
			n.Claim != sampleshop.ClaimFinal || n.Phase != qsync.PhaseSubmitted || !strings.Contains(n.Words, "supplement") ||
			n.Fix == "" || !isUUIDv7(n.ID) || n.Time.IsZero() {
			t.Errorf("%s notice = %+v", name, n)
		}
	}
	if a, b := rc.got()[0].ID, commandNotices(t, out)[0].ID; a != b {
		t.Errorf("the webhook's id %q and the command's %q differ for one event", a, b)
	}
	env, err := os.ReadFile(out + ".env")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(env), "daemon-secret") || !strings.Contains(string(env), "QUOTESYNC_NOTICE=supplement_needed") {
		t.Errorf("the command's environment holds the daemon's secret or lacks QUOTESYNC_NOTICE:\n%s", env)
	}
	if s := rc.secrets[0]; s != webhookSecret {
		t.Errorf("the webhook's Authorization = %q, want the configured secret", s)
	}
	for _, e := range r.logs.All() {
		if strings.Contains(e.Message+" "+strings.Join(fieldStrings(e.ContextMap()), " "), "hook-secret") {
			t.Errorf("a log line holds the webhook's secret: %s %v", e.Message, e.ContextMap())
		}
	}
	// Every event of the flow was written back once: one outbox row each,
	// all done.
	var rows, done int
	if err := r.d.SQL.QueryRow(`SELECT COUNT(*), COUNT(done_at) FROM quotesync_outbox WHERE target = 'write_back'`).Scan(&rows, &done); err != nil {
		t.Fatal(err)
	}
	if events := count(t, r, `SELECT COUNT(*) FROM quotesync_events WHERE kind IN ('accepted','drafted','redrafted','submitted','supplement')`); rows != events || done != rows {
		t.Errorf("write-back rows = %d (done %d), events = %d: want one done row per event", rows, done, events)
	}
}

func fieldStrings(m map[string]any) []string {
	var out []string
	for k, v := range m {
		b, _ := json.Marshal(v)
		out = append(out, k+"="+string(b))
	}
	return out
}

func count(t *testing.T, r *rig, q string) int {
	t.Helper()
	var n int
	if err := r.d.SQL.Get(&n, q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestDeliveryRetriedWithBackoff: a receiver that fails is tried again
// after the backoff, not before (its spread drawn from the engine's Rand,
// as the engine's own backoffs are); the failure is logged once at warn level
// with the error, the success after it at info; a write-back that fails
// does not hold the pass up nor the other deliveries, and is tried at
// once after a reload.
func TestDeliveryRetriedWithBackoff(t *testing.T) {
	r, rc, _ := notifyRig(t, func(s *qsync.Settings) {
		s.Notify.Command = qsync.CommandConfig{}
		// The supplement's write-back fails: a column that is too short.
		s.Shop.WriteBack[shopdb.WriteBackSupplementNeeded] = `UPDATE jobs SET insurer_status = REPEAT('x', 300) WHERE job_no = :job`
	})
	// 0.5 is the doubled wait itself: the first backoff is 1m exactly.
	r.engine.Rand = func() float64 { return 0.5 }
	req := r.seed(sampleshop.ClaimFinal)[0]
	r.pass()
	for r.row(req).Phase != qsync.PhaseSubmitted {
		r.pass()
	}
	r.work()
	rc.mu.Lock()
	rc.fail = 2
	rc.mu.Unlock()
	lines, _ := r.shop.Lines(r.ctx, sampleshop.JobFinal)
	lines[0].Description += " (revised)"
	if err := r.shop.EditLine(r.ctx, lines[0]); err != nil {
		t.Fatal(err)
	}
	if s := r.pass(); s.Supplements != 1 {
		t.Fatalf("pass = %+v, want 1 supplement", s)
	}
	r.work()
	if got := rc.posts(); got != 1 {
		t.Fatalf("POSTs = %d after the first attempt, want 1", got)
	}
	r.clock.advance(time.Minute - time.Second)
	r.work() // not due yet: nothing is sent
	if got := rc.posts(); got != 1 {
		t.Fatalf("POSTs = %d a second before the backoff ran out, want 1", got)
	}
	r.clock.advance(time.Second) // the first backoff, 1m, has run out
	r.work()
	if got := rc.posts(); got != 2 {
		t.Fatalf("POSTs = %d after the first backoff, want 2", got)
	}
	r.clock.advance(3 * time.Minute)
	r.work()
	if got := len(rc.got()); got != 1 {
		t.Fatalf("notices received = %d after the third attempt, want 1", got)
	}
	rc.mu.Lock()
	keys := slices.Compact(slices.Clone(rc.keys))
	rc.mu.Unlock()
	if len(keys) != 1 || keys[0] != rc.got()[0].ID || !isUUIDv7(keys[0]) {
		t.Errorf("Idempotency-Key of the three attempts = %q, want the notice's id %q each time", keys, rc.got()[0].ID)
	}
	failed := r.logs.FilterMessage("delivery failed; will retry")
	var warns, webhookWarns int
	for _, e := range failed.All() {
		if e.Level == zapcore.WarnLevel {
			warns++
			if e.ContextMap()["target"] == store.TargetWebhook {
				webhookWarns++
				if msg, _ := e.ContextMap()["error"].(string); !strings.Contains(msg, "500") || strings.Contains(msg, "in-the-query") {
					t.Errorf("the failure's error = %q, want the status and no query string", msg)
				}
			}
		}
	}
	if warns != 2 || webhookWarns != 1 {
		t.Errorf("warn lines of failed deliveries = %d (webhook %d), want 2: one per delivery (webhook, write-back)", warns, webhookWarns)
	}
	if n := r.logs.FilterMessage("delivered after failed attempts").Len(); n != 1 {
		t.Errorf("recovery lines = %d, want 1", n)
	}
	st, err := r.st.DeliveryStats(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pending != 1 || st.Failing != 1 || st.Last.Target != store.TargetWriteBack || !strings.Contains(st.Last.LastError, "insurer_status") {
		t.Errorf("DeliveryStats = %+v, want the write-back of the supplement failing", st)
	}
	if line := qsync.DeliveryLine(nil, st); !strings.Contains(line, "1 delivery not made yet, 1 failing") || !strings.Contains(line, "request "+req) {
		t.Errorf("DeliveryLine = %q", line)
	}

	// The statement is fixed and the daemon reloaded: the failed
	// write-back is tried at once, not after its backoff.
	r.restart(func(s *qsync.Settings) {
		s.Shop.WriteBack = writeBackAll()
	})
	r.work()
	if got, want := r.insurer(sampleshop.JobFinal), shopdb.WriteBackSupplementNeeded; got != want {
		t.Errorf("insurer_status after the fix and a reload = %q, want %q", got, want)
	}
}

// TestExpiringNoticedOnce: a request waiting for a shop job close to its
// expiry is noticed once: not again on later passes, nor after a
// restart; a request far from expiry is not.
func TestExpiringNoticedOnce(t *testing.T) {
	rc := newReceiver(t)
	r := newRig(t, rigOptions{shop: func(c *shopdb.Config) { c.Queries.CreateJob = nil }})
	r.restart(func(s *qsync.Settings) {
		s.Notify = qsync.NotifyConfig{Webhook: qsync.WebhookConfig{URL: rc.srv.URL}, ExpiryWarning: time.Hour}
	})
	ids := r.emu.AddRequests(
		emulator.SeedRequest{ClaimNumber: "CLM-NOJOB-1", Expiry: time.Now().Add(30 * time.Minute)},
		emulator.SeedRequest{ClaimNumber: "CLM-NOJOB-2", Expiry: time.Now().Add(5 * time.Hour)},
	)
	for i := 0; i < 3; i++ {
		r.pass()
		r.work()
	}
	r.restart(nil)
	r.pass()
	r.work()
	got := rc.got()
	if len(got) != 1 || got[0].Event != qsync.NoticeExpiring || got[0].Request != ids[0] || got[0].Phase != qsync.PhaseWaiting ||
		!strings.Contains(got[0].Detail, "expires at") {
		t.Fatalf("notices = %+v, want one expiring notice of %s", got, ids[0])
	}
	if n := r.seen(qsync.EventExpiring); n != 1 {
		t.Errorf("expiring events = %d, want 1", n)
	}
}

// TestAuthFailingNoticedOncePerEpisode: a refused token is noticed once
// however many passes fail, also across a restart; after a pass that
// works, a new refusal is a new episode.
func TestAuthFailingNoticedOncePerEpisode(t *testing.T) {
	r, rc, out := notifyRig(t, nil)
	bad := func(s *qsync.Settings) { s.Insurers[0].Tokens = remote.StaticToken("wrong-token") }
	r.restart(bad)
	failPass := func() {
		if _, err := r.engine.Pass(r.ctx); err == nil {
			t.Fatal("a pass with a wrong token succeeded")
		}
		r.work()
	}
	failPass()
	failPass()
	r.restart(nil) // still the wrong token
	failPass()
	if got := noticeEvents(rc.got()); len(got) != 1 || got[0] != qsync.NoticeAuthFailing+":" {
		t.Fatalf("webhook notices = %v, want one auth_failing", got)
	}
	if got := commandNotices(t, out); len(got) != 1 || !strings.Contains(got[0].Fix, "token") {
		t.Fatalf("command notices = %+v, want one auth_failing with the fix", got)
	}
	r.restart(func(s *qsync.Settings) { s.Insurers[0].Tokens = remote.StaticToken(testToken) })
	r.pass()
	r.work()
	r.restart(bad)
	failPass()
	failPass()
	if got := noticeEvents(rc.got()); len(got) != 2 {
		t.Fatalf("webhook notices = %v, want a second auth_failing after the episode ended", got)
	}
}

// TestNotifierTimeouts: a receiver that does not answer in time and a
// command that does not end in time fail the attempt, with errors that
// say so, within their timeouts.
func TestNotifierTimeouts(t *testing.T) {
	r := newRig(t, rigOptions{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-time.After(time.Second):
		case <-req.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	script := filepath.Join(t.TempDir(), "slow.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec sleep 5\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	core, logs := observerCore()
	o, err := qsync.NewOutbox(r.st, r.db, qsync.NotifyConfig{
		Webhook: qsync.WebhookConfig{URL: slow.URL, Timeout: 200 * time.Millisecond},
		Command: qsync.CommandConfig{Path: script, Timeout: 300 * time.Millisecond},
	}, remote.Backoff{Initial: time.Minute, Max: time.Hour}, core)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.st.RecordOnce(r.ctx, store.Event{Kind: string(qsync.EventAuthFailing), Outbox: &store.Outbox{
		Kind: qsync.NoticeAuthFailing, OnceKey: qsync.NoticeAuthFailing, Targets: []string{store.TargetWebhook, store.TargetCommand}}}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	o.Work(r.ctx)
	if took := time.Since(start); took > 3*time.Second { // without the timeouts: 1s + 5s
		t.Errorf("Work took %s with timeouts of 200ms and 300ms", took)
	}
	errs := map[string]string{}
	for _, e := range logs.FilterMessage("delivery failed; will retry").All() {
		errs[e.ContextMap()["target"].(string)], _ = e.ContextMap()["error"].(string)
	}
	if !strings.Contains(errs[store.TargetWebhook], "Timeout") {
		t.Errorf("webhook error = %q, want a timeout", errs[store.TargetWebhook])
	}
	if !strings.Contains(errs[store.TargetCommand], "killed after notify.command.timeout") {
		t.Errorf("command error = %q, want killed after the timeout", errs[store.TargetCommand])
	}
	if st, err := r.st.DeliveryStats(r.ctx); err != nil || st.Failing != 2 {
		t.Errorf("DeliveryStats = %+v, %v; want 2 failing", st, err)
	}
}

// isUUIDv7 reports whether id is a UUID of version 7 in its usual form.
func isUUIDv7(id string) bool {
	u, err := uuid.Parse(id)
	return err == nil && u.Version() == 7 && u.String() == id
}

// TestNoticeIDs: each event's notice has an id of its own, unique across
// databases (two shops' first events differ), the same for its webhook
// and its command; a delivery queued before quotesync drew ids (its
// notice_id NULL) keeps the id it had, quotesync-event-<event id>.
func TestNoticeIDs(t *testing.T) {
	var first []string
	for range 2 { // two shops, each with a fresh database
		r, rc, out := notifyRig(t, nil)
		for _, id := range []string{"one", "two"} {
			if _, err := r.st.RecordOnce(r.ctx, store.Event{Kind: string(qsync.EventAuthFailing), Outbox: &store.Outbox{
				Kind: qsync.NoticeAuthFailing, OnceKey: id, Targets: []string{store.TargetWebhook, store.TargetCommand}}}); err != nil {
				t.Fatal(err)
			}
		}
		r.work()
		hook, cmd := rc.got(), commandNotices(t, out)
		if len(hook) != 2 || len(cmd) != 2 {
			t.Fatalf("notices: webhook %d, command %d; want 2 each", len(hook), len(cmd))
		}
		if hook[0].ID == hook[1].ID || hook[0].ID != cmd[0].ID || hook[1].ID != cmd[1].ID || !isUUIDv7(hook[0].ID) {
			t.Errorf("ids: webhook %q, %q; command %q, %q; want one UUIDv7 per event, the same for both", hook[0].ID, hook[1].ID, cmd[0].ID, cmd[1].ID)
		}
		first = append(first, hook[0].ID)

		// A row as quotesync queued it before the ids.
		if _, err := r.st.RecordOnce(r.ctx, store.Event{Kind: string(qsync.EventAuthFailing), Outbox: &store.Outbox{
			Kind: qsync.NoticeAuthFailing, OnceKey: "old", Targets: []string{store.TargetWebhook}}}); err != nil {
			t.Fatal(err)
		}
		var ev int64
		if err := r.d.SQL.Get(&ev, `SELECT MAX(event_id) FROM quotesync_outbox`); err != nil {
			t.Fatal(err)
		}
		if _, err := r.d.SQL.Exec(`UPDATE quotesync_outbox SET notice_id = NULL WHERE event_id = ?`, ev); err != nil {
			t.Fatal(err)
		}
		r.work()
		if got, want := rc.got()[len(rc.got())-1].ID, fmt.Sprintf("quotesync-event-%d", ev); len(rc.got()) != 3 || got != want {
			t.Errorf("the old row's notice: %d notices, the last id %q; want 3, %q", len(rc.got()), got, want)
		}
	}
	if first[0] == first[1] {
		t.Errorf("the first notices of two shops share the id %q", first[0])
	}
}

// observerCore is a logger whose lines the test reads.
func observerCore() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zap.DebugLevel)
	return zap.New(core), logs
}

// TestCommandGroupEnded: a command runs in a process group of its own,
// which is ended whole. Hangs: at its timeout, a child that ends on
// SIGTERM (a shell waiting for sleep, as for curl) and one that ignores
// it (killed after the grace) both stop before they could deliver (each
// would write a file after 2s). LeavesChild: a command that succeeds
// leaves nothing running either. ChildHoldsOutput: a command that exits
// 0 leaving a child that holds its standard output is delivered (its exit
// status is its verdict), not sent again, the child ended after the
// grace. No process of the group survives.
func TestCommandGroupEnded(t *testing.T) {
	r := newRig(t, rigOptions{})
	for _, tt := range []struct {
		name, script string
		fails        bool
	}{
		{"Hangs", `#!/bin/sh
echo $$ > "$1/leader"
sh -c 'sleep 2; touch "$0/delivered-by-child"' "$1" &
echo $! > "$1/child"
(trap '' TERM; sleep 2; touch "$1/delivered-by-stubborn-child") &
echo $! > "$1/stubborn"
wait
`, true},
		{"LeavesChild", `#!/bin/sh
echo $$ > "$1/leader"
(sleep 2; touch "$1/delivered-by-child") >/dev/null 2>&1 &
echo $! > "$1/child"
`, false},
		{"ChildHoldsOutput", `#!/bin/sh
echo $$ > "$1/leader"
(sleep 2; touch "$1/delivered-by-child") &
echo $! > "$1/child"
`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			script := filepath.Join(dir, "notify.sh")
			if err := os.WriteFile(script, []byte(tt.script), 0o755); err != nil {
				t.Fatal(err)
			}
			core, logs := observerCore()
			o, err := qsync.NewOutbox(r.st, r.db, qsync.NotifyConfig{
				Command: qsync.CommandConfig{Path: script, Args: []string{dir}, Timeout: 300 * time.Millisecond, Grace: 300 * time.Millisecond},
			}, remote.Backoff{Initial: time.Minute, Max: time.Hour}, core)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.st.RecordOnce(r.ctx, store.Event{Kind: string(qsync.EventAuthFailing), Outbox: &store.Outbox{
				Kind: qsync.NoticeAuthFailing, OnceKey: tt.name, Targets: []string{store.TargetCommand}}}); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			o.Work(r.ctx)
			if took := time.Since(start); took > 1500*time.Millisecond {
				t.Errorf("Work took %s with a timeout and a grace of 300ms", took)
			}
			want := 0
			if tt.fails {
				want = 1
			}
			if got := logs.FilterMessage("delivery failed; will retry"); got.Len() != want {
				t.Errorf("%d failed deliveries, want %d: %v", got.Len(), want, got.All())
			}
			leader := pidIn(t, dir, "leader")
			if live := liveInGroup(t, leader); len(live) > 0 {
				t.Errorf("processes of the command's group still running after Work: %v", live)
			}
			for _, name := range []string{"child", "stubborn"} {
				if _, err := os.Stat(filepath.Join(dir, name)); err == nil && processLive(pidIn(t, dir, name)) {
					t.Errorf("%s still running after Work", name)
				}
			}
			time.Sleep(time.Until(start.Add(2500 * time.Millisecond))) // past the children's 2s
			for _, f := range []string{"delivered-by-child", "delivered-by-stubborn-child"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					t.Errorf("%s exists: a child of the command outlived it", f)
				}
			}
		})
	}
}

// pidIn reads the process id a script wrote to dir/name.
func pidIn(t *testing.T, dir, name string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return n
}

// procStat reads /proc/PID/stat: the state and the process group; ok is
// false when there is no such process.
func procStat(pid int) (state byte, pgrp int, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, false
	}
	// "PID (COMM) STATE PPID PGRP …"; COMM may hold spaces and ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 3 {
		return 0, 0, false
	}
	pgrp, _ = strconv.Atoi(f[2])
	return f[0][0], pgrp, true
}

// processLive reports whether pid runs (a zombie has ended).
func processLive(pid int) bool {
	state, _, ok := procStat(pid)
	return ok && state != 'Z'
}

// liveInGroup lists the running (not zombie) processes of group pgid.
func liveInGroup(t *testing.T, pgid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var live []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, pgrp, ok := procStat(pid); ok && pgrp == pgid && state != 'Z' {
			live = append(live, pid)
		}
	}
	return live
}
