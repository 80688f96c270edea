package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// The remote's bad data, end to end: the real binary against the emulator
// whose pending list a test handler extends with entries no real service
// should send, but some day will.

// badListHandler serves h, with entries put in front of every pending list.
func badListHandler(h http.Handler, entries ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/requests") {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := bytes.TrimSpace(rec.Body.Bytes())
		rest := bytes.TrimPrefix(body, []byte("["))
		if len(bytes.TrimSpace(bytes.TrimSuffix(rest, []byte("]")))) > 0 {
			rest = append([]byte(","), rest...)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(append([]byte("["+strings.Join(entries, ",")), rest...))
	})
}

// e2eBadEntries are the bad list entries of these tests: what the engine
// cannot decode, what quotesync cannot keep, and a claim the sample shop's
// jobs.claim_number (64 characters) cannot hold.
func e2eBadEntries() []string {
	return []string{
		`{"id": {"value": "X-1"}, "claim_number": "CLM-OBJ"}`,
		`{"id": "DEEP-1", "vehicle": ` + strings.Repeat("[", 11000) + strings.Repeat("]", 11000) + `}`,
		`{"id": "` + strings.Repeat("7", 10<<20) + `", "claim_number": "CLM-HUGE"}`,
		"{\"id\": \"UTF-1\", \"claim_number\": \"CLM-\xff\"}",
		`{"id": "` + strings.Repeat("L", 3<<20) + `", "claim_number": "CLM-3MB"}`,
		`{"id": "` + strings.Repeat("I", 70) + `", "claim_number": "CLM-ID70"}`,
		`{"id": "CLAIM-100", "claim_number": "` + strings.Repeat("C", 100) + `", "vehicle": {"registration": "AB12CDE"}}`,
	}
}

// checkBoundedLog fails on any output line longer than max bytes.
func checkBoundedLog(t *testing.T, out string, max int) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if len(line) > max {
			t.Errorf("an output line of %d bytes: %.300s…", len(line), line)
		}
	}
}

// countLog counts the JSON log lines with message msg.
func countLog(out, msg string) int {
	n := 0
	for _, line := range strings.Split(out, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
			n++
		}
	}
	return n
}

// TestE2EBadListEntries: with `once`, a pending list holding an object
// id, an entry nested 11,000 deep, a 10 MiB id, a claim that is not UTF-8,
// a 3 MB id, a 70-byte id and a claim longer than the shop's column: the good request is
// accepted and drafted, each bad entry is named in a bounded log line, the
// long claim is rejected with its reason and the fix, the pass succeeds
// (exit 0), and the next pass repeats no write.
func TestE2EBadListEntries(t *testing.T) {
	e := newE2E(t, e2eOptions{})
	e.Srv.Close()
	e.Srv = httptest.NewServer(badListHandler(e.Emu, e2eBadEntries()...))
	t.Cleanup(e.Srv.Close)
	e.writeConfig()
	good := e.seed(sampleshop.ClaimDraft, "KLM123")

	before := e.Emu.Calls()
	res := e.once()
	if res.Code != 0 {
		t.Fatalf("once: exit %d\n%s", res.Code, e2eTail(res.Output, 20))
	}
	e2eWantCalls(t, "pass 1", e2eCallsDiff(before, e.Emu.Calls()),
		map[string]int{e2eRouteList: 1, e2eRouteAccept: 1, e2eRouteQuote: 1})
	if r, _ := e.Emu.State().Request(good); r.ReferenceID != sampleshop.JobDraft {
		t.Errorf("the good request %s was accepted with %q, want %s", good, r.ReferenceID, sampleshop.JobDraft)
	}
	checkBoundedLog(t, res.Output, 4000)
	if got := countLog(res.Output, "pending request skipped"); got != 6 {
		t.Errorf("%d entries reported skipped, want 6:\n%s", got, e2eTail(res.Output, 20))
	}
	for _, want := range [][]string{
		{`"reason":"bad_entry"`, "entry 0 (no readable id)", "field id"},
		{`"reason":"bad_entry"`, "entry 1 (request DEEP-1)", "nested 11001 levels deep"},
		{`"reason":"bad_entry"`, "entry 2 (request 7777", "larger than the 1048576 decoded"},
		{`"reason":"bad_entry"`, "entry 3 (request UTF-1)", "field claim_number", "not valid UTF-8"},
		{`"reason":"bad_entry"`, "entry 4 (request LLLL", "larger than the 1048576 decoded"},
		{`"reason":"too_long"`, "request id (70 bytes)", "longer than quotesync keeps"},
		{"request rejected", `"request":"CLAIM-100"`, `"reason":"too_long"`, "claim_number", "quotesync retry CLAIM-100"},
	} {
		if logLineWith(res.Output, want...) == "" {
			t.Errorf("no log line with %q:\n%s", want, e2eTail(res.Output, 20))
		}
	}

	before = e.Emu.Calls()
	res = e.once()
	if res.Code != 0 {
		t.Fatalf("second once: exit %d\n%s", res.Code, e2eTail(res.Output, 20))
	}
	e2eWantCalls(t, "pass 2", e2eCallsDiff(before, e.Emu.Calls()), map[string]int{e2eRouteList: 1})
	if got := countLog(res.Output, "request rejected"); got != 0 {
		t.Errorf("the rejected request was tried and rejected again:\n%s", res.Output)
	}
}

// logLineWith returns the first output line holding every one of parts.
func logLineWith(out string, parts ...string) string {
	for _, line := range strings.Split(out, "\n") {
		ok := true
		for _, p := range parts {
			if !strings.Contains(line, p) {
				ok = false
				break
			}
		}
		if ok {
			return line
		}
	}
	return ""
}

// TestRunHealthyWithBadRemoteData: the daemon (`run`) with the same bad
// list stays healthy (/healthz 200), accepts and drafts the good request,
// and reports each bad entry once over many passes, not once per pass;
// no log line is longer than a few kilobytes.
func TestRunHealthyWithBadRemoteData(t *testing.T) {
	t.Parallel()
	listen := func(fc *config.File) {
		fc.Sync.Schedule = "@every 1s"
		fc.Metrics.Listen = "127.0.0.1:0"
	}
	e := newCLIEnv(t, listen)
	e.Srv.Close()
	e.Srv = httptest.NewServer(badListHandler(e.Emu, e2eBadEntries()...))
	t.Cleanup(e.Srv.Close)
	e.writeConfig(listen)
	e.Emu.AddRequests(emulator.SeedRequest{ClaimNumber: sampleshop.ClaimDraft})

	cmd := exec.Command(e.bin, "run", "--config", e.Conf)
	cmd.Env = e.environ()
	var out cliBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("daemon output (tail):\n%s", e2eTail(out.String(), 30))
		}
	})
	if !waitFor(30*time.Second, func() bool { return logEntry(out.String(), "draft pushed", "claim", sampleshop.ClaimDraft) != nil }) {
		t.Fatal("the good request was not drafted")
	}
	started := logEntry(out.String(), msgMetricsListen)
	if started == nil {
		t.Fatal("no metrics listener line")
	}
	base := "http://" + started[fieldAddr].(string)
	passes := func() int { return countLog(out.String(), "pass done") + countLog(out.String(), "pass failed") }
	n := passes()
	// Idle passes log nothing at info; wait for wall-clock passes instead.
	time.Sleep(4 * time.Second)
	if code, body := httpGet(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz %d after passes with bad remote data: %s", code, body)
	}
	if got := countLog(out.String(), "pass failed"); got != 0 {
		t.Errorf("%d failed passes", got)
	}
	if got := countLog(out.String(), "pending request skipped"); got != 6 {
		t.Errorf("%d skipped-entry lines over %d+ passes, want 6 (once each)", got, n)
	}
	if got := countLog(out.String(), "request rejected"); got != 1 {
		t.Errorf("%d rejections of the long claim, want 1", got)
	}
	checkBoundedLog(t, out.String(), 4000)
	for _, s := range e.secrets() {
		if strings.Contains(out.String(), s) {
			t.Error("the daemon printed a secret")
		}
	}
}

// TestE2ELongIDAndClaim: ids longer than quotesync keeps (70 bytes, 3 MB)
// are left out and named in bounded lines; a claim longer than the shop's
// column (create_job fails with error 1406) rejects that one request with
// the column and the fix, and it is not tried again on the next pass
// (before, it waited and was tried on every pass after a backoff);
// `status` shows why, and `retry` puts it back.
func TestE2ELongIDAndClaim(t *testing.T) {
	e := newE2E(t, e2eOptions{})
	e.Srv.Close()
	e.Srv = httptest.NewServer(badListHandler(e.Emu,
		`{"id": "`+strings.Repeat("I", 70)+`", "claim_number": "CLM-ID70"}`,
		`{"id": "`+strings.Repeat("L", 3<<20)+`", "claim_number": "CLM-3MB"}`,
		`{"id": "CLAIM-100", "claim_number": "`+strings.Repeat("C", 100)+`", "vehicle": {"registration": "AB12CDE"}}`))
	t.Cleanup(e.Srv.Close)
	e.writeConfig()
	good := e.seed(sampleshop.ClaimDraft, "KLM123")

	res := e.once()
	if res.Code != 0 {
		t.Fatalf("once: exit %d\n%s", res.Code, e2eTail(res.Output, 20))
	}
	if r, _ := e.Emu.State().Request(good); r.ReferenceID != sampleshop.JobDraft {
		t.Errorf("the good request %s was accepted with %q, want %s", good, r.ReferenceID, sampleshop.JobDraft)
	}
	checkBoundedLog(t, res.Output, 4000)
	if logLineWith(res.Output, "request rejected", `"request":"CLAIM-100"`, `"reason":"too_long"`, "claim_number", "widen") == "" {
		t.Errorf("no rejection of CLAIM-100 naming the column and the fix:\n%s", e2eTail(res.Output, 20))
	}
	row := func() (phase, reason string, attempts int) {
		t.Helper()
		if err := e.sql.QueryRow("SELECT phase, reason, attempts FROM quotesync_requests WHERE request_id = 'CLAIM-100'").Scan(&phase, &reason, &attempts); err != nil {
			t.Fatal(err)
		}
		return
	}
	if ph, reason, _ := row(); ph != "rejected" || reason != "too_long" {
		t.Errorf("CLAIM-100 is %s (%s), want rejected (too_long)", ph, reason)
	}
	time.Sleep(300 * time.Millisecond) // past the retry backoff of the test config
	if res := e.once(); res.Code != 0 || countLog(res.Output, "request rejected")+countLog(res.Output, "job number not reserved; the request waits and is tried again") != 0 {
		t.Errorf("second pass: exit %d, the long claim tried again:\n%s", res.Code, e2eTail(res.Output, 10))
	}
	if ph, _, attempts := row(); ph != "rejected" || attempts != 0 {
		t.Errorf("after a second pass CLAIM-100 is %s with %d attempts, want rejected, untried", ph, attempts)
	}
	cmd := exec.Command(e.bin, "status", "--all", "--config", e.Conf)
	cmd.Env = e.environ()
	st, _ := cmd.CombinedOutput()
	if !strings.Contains(string(st), "CLAIM-100") || !strings.Contains(string(st), "widen") {
		t.Errorf("status does not show why CLAIM-100 is rejected:\n%s", st)
	}
}

// TestCheckNamesProxyPageAndRedirect: `check` against a base URL that
// answers an HTML login page, or a redirect without a Location, says what
// came and what to fix, instead of "want a JSON array".
func TestCheckNamesProxyPageAndRedirect(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		serve http.HandlerFunc
		want  []string
	}{
		{"HTMLPage", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<!DOCTYPE html>\n<html><title>Sign in</title><body>Corporate proxy</body></html>"))
		}, []string{"status 200", "Content-Type \"text/html; charset=utf-8\"", `<!DOCTYPE html>\n<html><title>Sign in`, "a proxy or login page", "remote.base_url"}},
		{"RedirectNoLocation", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusFound)
		}, []string{"302 Found without a Location header", "never follows redirects", "remote.base_url"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newCLIEnv(t, nil)
			e.Srv.Close()
			e.Srv = httptest.NewServer(tt.serve)
			t.Cleanup(e.Srv.Close)
			e.writeConfig(nil)
			r := e.run("check", "--config", e.Conf)
			out := r.Stdout + r.Stderr
			if r.Code == 0 {
				t.Errorf("check passed against a %s:\n%s", tt.name, r)
			}
			for _, want := range tt.want {
				if !strings.Contains(out, want) {
					t.Errorf("check output lacks %q:\n%s", want, r)
				}
			}
			if strings.Contains(out, "want a JSON array, got") {
				t.Errorf("check still says only \"want a JSON array\":\n%s", r)
			}
		})
	}
}

// TestE2EUnreadableDraftEcho: a Draft push that lands but whose answer
// the client cannot decode (a quantity of 1e400) is recorded once; the
// next passes neither push it again nor submit the final estimate; after
// `quotesync retry` (the service's answers fixed) it is pushed again once
// and submitted. Before, the push was taken for a temporary failure and
// repeated on every attempt and every pass.
func TestE2EUnreadableDraftEcho(t *testing.T) {
	e := newE2E(t, e2eOptions{})
	var broken atomic.Bool
	broken.Store(true)
	quantity := regexp.MustCompile(`"quantity":\s*[-0-9.eE]+`)
	e.Srv.Close()
	e.Srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !broken.Load() || r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/quotes") {
			e.Emu.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		e.Emu.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(quantity.ReplaceAll(rec.Body.Bytes(), []byte(`"quantity":1e400`)))
	}))
	t.Cleanup(e.Srv.Close)
	e.writeConfig()
	id := e.seed(sampleshop.ClaimFinal, "")

	before := e.Emu.Calls()
	res := e.once()
	if res.Code != 0 {
		t.Fatalf("once: exit %d\n%s", res.Code, e2eTail(res.Output, 20))
	}
	e2eWantCalls(t, "pass 1", e2eCallsDiff(before, e.Emu.Calls()), map[string]int{e2eRouteList: 1, e2eRouteAccept: 1, e2eRouteQuote: 1})
	if logLineWith(res.Output, "the remote took the write but its answer could not be read; not sent again", "items[0].quantity") == "" {
		t.Errorf("no unreadable line naming the field:\n%s", e2eTail(res.Output, 10))
	}
	before = e.Emu.Calls()
	for range 2 {
		time.Sleep(250 * time.Millisecond) // past any retry backoff
		e.mustOnce()
	}
	e2eWantCalls(t, "later passes", e2eCallsDiff(before, e.Emu.Calls()), map[string]int{e2eRouteList: 2})

	broken.Store(false)
	cmd := exec.Command(e.bin, "retry", id, "--config", e.Conf)
	cmd.Env = e.environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("retry: %v\n%s", err, out)
	}
	before = e.Emu.Calls()
	e.mustOnce()
	e.mustOnce()
	e2eWantCalls(t, "after retry", e2eCallsDiff(before, e.Emu.Calls()), map[string]int{e2eRouteList: 2, e2eRouteQuote: 1, e2eRouteStatus: 1})
}
