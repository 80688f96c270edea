package main

// The write-back and the notifications with the real binary: SIGKILLed
// around the write-back's transaction (while its statement runs, right
// after a delivery was marked, at random), restarted, converged, and each
// event written back exactly once; and notifications sent by `once` to a
// real HTTP receiver and a real command, once per event.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/quotesync/quotesync/remote/emulator"
)

// e2eConfigure edits the environment's YAML file as a document.
func e2eConfigure(e *e2eEnv, edit func(doc map[string]any)) {
	e.tb.Helper()
	e2eEditYAML(e.tb, e.Conf, e.Conf, edit)
}

// e2eEditYAML reads the YAML file from as a document, edits it and writes
// it to the file to (which may be from).
func e2eEditYAML(tb testing.TB, from, to string, edit func(doc map[string]any)) {
	tb.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		tb.Fatal(err)
	}
	doc := map[string]any{}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		tb.Fatal(err)
	}
	edit(doc)
	if data, err = yaml.Marshal(doc); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// e2eCount runs a COUNT-style query on the test database.
func e2eCount(e *e2eEnv, q string, args ...any) int {
	e.tb.Helper()
	var n int
	if err := e.sql.GetContext(e.ctx(), &n, q, args...); err != nil {
		e.tb.Fatalf("%s: %v", q, err)
	}
	return n
}

// wbLogInsert is the write-back of the crash test: one row per run into
// a log table, slowed down so that a kill often lands inside it.
const wbLogInsert = `INSERT INTO insurer_log (job, request, status, at)
SELECT :job, :request, :status, :time FROM DUAL WHERE SLEEP(0.25) = 0`

// TestWriteBackCrashBinary kills `quotesync run` around the write-back:
// while a write-back statement runs (before its commit), right after a
// delivery was marked done (after its commit), and at random moments
// (between an event's commit and its write-back, among others). After
// the last restart every event of the flow was written back exactly once:
// as many log rows as write-back deliveries, per request and kind, and
// every delivery marked.
func TestWriteBackCrashBinary(t *testing.T) {
	e := newE2E(t, e2eOptions{Schedule: "@every 1s"})
	if _, err := e.sql.ExecContext(e.ctx(), `CREATE TABLE insurer_log (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
job VARCHAR(20) NOT NULL, request VARCHAR(64) NOT NULL, status VARCHAR(32) NOT NULL, at DATETIME(6) NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	e2eConfigure(e, func(doc map[string]any) {
		doc["shop"].(map[string]any)["write_back"] = map[string]any{
			"accepted": wbLogInsert, "draft_pushed": wbLogInsert, "submitted": wbLogInsert,
		}
	})
	var jobs []string
	for i := 0; i < 3; i++ {
		claim := fmt.Sprintf("CLM-WB-%d", i)
		job := e.createJob(claim)
		e.addLine(job, i)
		jobs = append(jobs, job)
		e.seed(claim, "")
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	inStatement := func() bool {
		return e2eCount(e, `SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'INSERT INTO insurer_log%'`) > 0
	}
	doneRows := func() int {
		// A daemon killed before its first start migrated (a loaded
		// machine) has left no outbox yet.
		if e2eCount(e, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'quotesync_outbox'") == 0 {
			return 0
		}
		return e2eCount(e, "SELECT COUNT(*) FROM quotesync_outbox WHERE done_at IS NOT NULL")
	}
	kills := map[string]int{}
	for trial := 0; trial < 9; trial++ {
		p := e.start("run")
		switch trigger := []string{"statement", "marked", "random"}[trial%3]; trigger {
		case "statement":
			if waitFor(10*time.Second, inStatement) {
				kills[trigger]++
			}
		case "marked":
			before := doneRows()
			if waitFor(10*time.Second, func() bool { return doneRows() > before }) {
				kills[trigger]++
			}
		default:
			time.Sleep(time.Duration(50+rng.IntN(1200)) * time.Millisecond)
			kills[trigger]++
		}
		p.kill()
		// The shop works on: a new line (a Draft again), and the estimates
		// final in the last trials.
		job := jobs[trial%len(jobs)]
		e.addLine(job, 10+trial)
		if trial >= 6 {
			if err := e.Shop.SetFinal(e.ctx(), job, true); err != nil {
				t.Fatal(err)
			}
		}
	}
	p := e.start("run")
	converged := waitFor(60*time.Second, func() bool {
		return e2eCount(e, "SELECT COUNT(*) FROM quotesync_requests WHERE phase = 'submitted'") == len(jobs) &&
			e2eCount(e, "SELECT COUNT(*) FROM quotesync_outbox WHERE done_at IS NULL") == 0
	})
	if code := p.stop(10 * time.Second); code != 0 || !converged {
		t.Fatalf("converged: %v; run exited %d:\n%s", converged, code, e2eTail(p.out.String(), 3000))
	}
	if kills["statement"] == 0 || kills["marked"] == 0 {
		t.Errorf("kills by trigger = %v: the kills inside a statement and after a mark did not happen", kills)
	}
	type key struct{ request, status string }
	want := map[key]int{}
	rows, err := e.sql.QueryxContext(e.ctx(), `SELECT request_id, kind, COUNT(*) FROM quotesync_outbox
WHERE target = 'write_back' GROUP BY request_id, kind`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k key
		var n int
		if err := rows.Scan(&k.request, &k.status, &n); err != nil {
			t.Fatal(err)
		}
		want[k] = n
	}
	rows.Close()
	got := map[key]int{}
	rows, err = e.sql.QueryxContext(e.ctx(), "SELECT request, status, COUNT(*) FROM insurer_log GROUP BY request, status")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k key
		var n int
		if err := rows.Scan(&k.request, &k.status, &n); err != nil {
			t.Fatal(err)
		}
		got[k] = n
	}
	rows.Close()
	total := 0
	for k, n := range want {
		total += n
		if got[k] != n {
			t.Errorf("request %s %s: written back %d times, for %d events", k.request, k.status, got[k], n)
		}
	}
	for k, n := range got {
		if want[k] == 0 {
			t.Errorf("request %s %s: written back %d times without an event", k.request, k.status, n)
		}
	}
	// Each event of a write-back kind has its delivery.
	if events := e2eCount(e, `SELECT COUNT(*) FROM quotesync_events WHERE kind IN ('accepted','drafted','redrafted','submitted')`); events != total {
		t.Errorf("%d events of write-back kinds, %d write-back deliveries", events, total)
	}
	t.Logf("kills %v; %d events written back exactly once", kills, total)
}

// e2eHook is a real HTTP receiver for the binary's webhook.
type e2eHook struct {
	mu      gosync.Mutex
	events  []string // event:request of each notice
	secrets []string
}

func (h *e2eHook) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.events...)
}

// TestNotifyBinary: `quotesync once` notifies a real webhook (with a
// secret header from the environment) and a real command: a refused
// token once per episode, a change after submission once, nothing on
// idle passes; the secret never appears in the output.
func TestNotifyBinary(t *testing.T) {
	const secretEnv, secret = "QUOTESYNC_E2E_HOOK_SECRET", "hook-secret-e2e-93c1"
	e := newE2E(t, e2eOptions{})
	hook := &e2eHook{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var n struct{ Event, Request string }
		if err := json.Unmarshal(body, &n); err != nil {
			t.Errorf("webhook body %s: %v", body, err)
		}
		hook.mu.Lock()
		hook.events = append(hook.events, n.Event+":"+n.Request)
		hook.secrets = append(hook.secrets, r.Header.Get("X-Hook-Secret"))
		hook.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	script, out := filepath.Join(dir, "notify.sh"), filepath.Join(dir, "notices.jsonl")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat >> \"$1\"\necho >> \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e2eConfigure(e, func(doc map[string]any) {
		doc["notify"] = map[string]any{
			"webhook": map[string]any{"url": srv.URL + "/quotesync", "secret_header": "X-Hook-Secret", "secret_env": secretEnv},
			"command": map[string]any{"path": script, "args": []string{out}, "timeout": "5s"},
		}
	})
	once := func(token string) (int, string) {
		ctx, cancel := context.WithTimeout(e.ctx(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, e.bin, "once", "--config", e.Conf)
		cmd.Env = append(e.environ(), e2eTokenEnv+"="+token, secretEnv+"="+secret)
		b, _ := cmd.CombinedOutput()
		if strings.Contains(string(b), secret) {
			t.Errorf("quotesync once printed the webhook's secret:\n%s", b)
		}
		return cmd.ProcessState.ExitCode(), string(b)
	}
	commandGot := func() []string {
		f, err := os.Open(out)
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var evs []string
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var n struct{ Event, Request string }
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			if err := json.Unmarshal(sc.Bytes(), &n); err != nil {
				t.Fatalf("the command got %q: %v", sc.Text(), err)
			}
			evs = append(evs, n.Event+":"+n.Request)
		}
		return evs
	}
	check := func(step string, want ...string) {
		t.Helper()
		for name, got := range map[string][]string{"webhook": hook.got(), "command": commandGot()} {
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("%s: %s received %v, want %v", step, name, got, want)
			}
		}
	}

	// The state tables are made by a first good run; then two runs with a
	// refused token make one notice.
	if code, o := once(e2eToken); code != 0 {
		t.Fatalf("once: exit %d\n%s", code, o)
	}
	for i := 0; i < 2; i++ {
		if code, _ := once("wrong-token"); code == 0 {
			t.Fatal("once with a wrong token exited 0")
		}
	}
	check("two refused runs", "auth_failing:")

	// A job through to Submitted, then changed: one supplement notice,
	// none on the idle runs after it.
	job := e.createJob("CLM-NOTIFY-1")
	e.addLine(job, 1)
	if err := e.Shop.SetFinal(e.ctx(), job, true); err != nil {
		t.Fatal(err)
	}
	req := e.seed("CLM-NOTIFY-1", "")
	for i := 0; i < 3; i++ {
		if code, o := once(e2eToken); code != 0 {
			t.Fatalf("once: exit %d\n%s", code, o)
		}
	}
	if st, _ := e.Emu.State().Request(req); st.Status != emulator.RequestAccepted {
		t.Fatalf("request %s is %s on the remote", req, st.Status)
	}
	e.addLine(job, 2)
	for i := 0; i < 3; i++ {
		if code, o := once(e2eToken); code != 0 {
			t.Fatalf("once: exit %d\n%s", code, o)
		}
	}
	check("a change after submission", "auth_failing:", "supplement_needed:"+req)

	// The token works again, then fails: a new episode.
	if code, _ := once("wrong-token"); code == 0 {
		t.Fatal("once with a wrong token exited 0")
	}
	check("a new episode", "auth_failing:", "supplement_needed:"+req, "auth_failing:")
	hook.mu.Lock()
	defer hook.mu.Unlock()
	for _, s := range hook.secrets {
		if s != secret {
			t.Errorf("the webhook's secret header = %q, want the value of %s", s, secretEnv)
		}
	}
}
