package main

// Hostile text from outside, end to end: the insurer's vehicle fields and
// error answers, and the shop's job numbers, operation codes and line
// descriptions, carrying terminal escape sequences and bidi overrides,
// through every verb that prints them; a request id and claim number
// carrying them, which quotesync refuses to track, shown escaped in the
// report of the refused entry.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/statuspage"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// The hostile values and how a terminal-safe output shows them.
const (
	hostileClaim = "\x1b]0;pwned\x07\x1b[2J"                                      // retitles the terminal, then clears it
	hostileID    = "REQ-\x1b[31m\u202e7"                                          // a request id: red, then right-to-left
	plainID      = "REQ-8"                                                        // R1's id: control characters are refused
	plainClaim   = "CLM-$(x);`y`'z'"                                              // R1's claim: shell characters are not
	hostileJob   = "RO-\x1b[2J\u202e9"                                            // a shop job number (jobs.job_no is 20 characters)
	hostileCode  = "P\x1b[2J\u202e"                                               // an operation code (estimate_lines.op_code is 8)
	hostileDesc  = "Bumper \x1b]0;pwned\x07\u202eevil\u009b2J"                    // a line description, a C1 CSI too
	hostileReg   = "AB\x1b[2J\u202e1"                                             // a vehicle registration (jobs.registration is 16)
	hostileBody  = "refused: \x1b]0;pwned\x07\x1b[2J \u202e\u2066 \u009b2J \x7f!" // a 422's plain-text body

	shownJob  = `RO-\x1b[2J\u202e9`
	shownCode = `P\x1b[2J\u202e`
	shownBody = `refused: \x1b]0;pwned\a\x1b[2J \u202e\u2066 \u009b2J \x7f!`
)

// hostileRemote serves the emulator, except that it answers 422 with
// hostileBody (plain text, as the documented service answers errors) to
// every POST whose body holds an ESC (a referenceId or a line description
// from the shop), and to GET /requests while failList is set: a service
// that refuses odd data and quotes it back.
type hostileRemote struct {
	emu      http.Handler
	failList atomic.Bool
}

func (h *hostileRemote) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	refuse := h.failList.Load() && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/requests")
	if r.Method == http.MethodPost && r.Body != nil {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		refuse = refuse || bytes.Contains(body, []byte(`\u001b`))
	}
	if !refuse {
		h.emu.ServeHTTP(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusUnprocessableEntity)
	_, _ = io.WriteString(w, hostileBody)
}

// assertTerminalSafe fails when out holds anything a terminal acts on or
// reorders: a C0 control other than newline and tab, DEL, a C1 control, a
// bidi override or isolate, or a byte of invalid UTF-8.
func assertTerminalSafe(t *testing.T, what, out string) {
	t.Helper()
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		var bad string
		switch {
		case r == utf8.RuneError && size == 1:
			bad = "invalid UTF-8"
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f:
			bad = "a C0 control or DEL"
		case r >= 0x80 && r <= 0x9f:
			bad = "a C1 control"
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			bad = "a bidi control"
		}
		if bad != "" {
			from, to := max(0, i-60), min(len(out), i+60)
			t.Errorf("%s prints %s raw (%q at byte %d): …%q…", what, bad, r, i, out[from:to])
			return
		}
		i += size
	}
}

// assertShows fails unless out holds every want.
func assertShows(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s lacks %s:\n%s", what, w, out)
		}
	}
}

// assertAligned fails when a row of the table that starts at the line
// holding header has a cell that does not start under its column's title
// (positions in runes: a cut value ends with "…").
func assertAligned(t *testing.T, what, out, header string, titles ...string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, header) {
			start = i
			break
		}
	}
	if start < 0 {
		t.Errorf("%s has no table headed %q:\n%s", what, header, out)
		return
	}
	head := lines[start]
	for _, line := range lines[start+1:] {
		if line == "" || strings.HasPrefix(line, " ") || strings.HasPrefix(line, "(") {
			break
		}
		row := []rune(line)
		for _, title := range titles {
			col := utf8.RuneCountInString(head[:strings.Index(head, title)])
			if col == 0 || len(row) <= col || row[col-1] != ' ' || row[col] == ' ' {
				t.Errorf("%s: in row %q the %s column does not start at %d:\n%s", what, line, title, col, out)
			}
		}
	}
}

// TestE2EHostileText runs the real binary's verbs over hostile data: no
// text output (status, status --all, history by request and by job,
// check, retry, once's summary and log, once --dry-run, config, the
// error of a verb quoting the service) prints a control character, DEL, a
// C1 control, a bidi control or invalid UTF-8 raw; each shows them
// visibly, the tables stay aligned, and every --json output decodes back
// to the exact hostile value. A request whose id and claim hold them is
// not tracked: its entry is reported, escaped, and the others go on.
func TestE2EHostileText(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, func(fc *config.File) { fc.Shop.WorkTypes[hostileCode] = "Miscellaneous" })
	remote := &hostileRemote{emu: e.Emu}
	e.Srv.Close()
	e.Srv = httptest.NewServer(remote)
	t.Cleanup(e.Srv.Close)
	e.writeConfig(func(fc *config.File) { fc.Shop.WorkTypes[hostileCode] = "Miscellaneous" })
	ctx := t.Context()

	// R1: the insurer's hostile vehicle; the shop has no job for the
	// claim, so create_job makes one. R2: a job the shop numbered with
	// escapes; its accept is refused with the hostile body. R3: a hostile
	// id and claim, refused as a bad entry.
	if _, err := e.DB.SQL.ExecContext(ctx, "INSERT INTO jobs (job_no, claim_number, status) VALUES (?, 'CLM-HOSTILE-JOB', 'OPEN')", hostileJob); err != nil {
		t.Fatal(err)
	}
	vehicle := fmt.Appendf(nil, `{"registration":%q,"make":%q}`, hostileReg, hostileClaim)
	ids := e.Emu.AddRequests(
		emulator.SeedRequest{ID: plainID, ClaimNumber: plainClaim, Vehicle: vehicle},
		emulator.SeedRequest{ClaimNumber: "CLM-HOSTILE-JOB"},
		emulator.SeedRequest{ID: hostileID, ClaimNumber: hostileClaim},
	)
	r2 := ids[1]

	t.Run("DryRun", func(t *testing.T) {
		r := e.run("once", "--dry-run", "--config", e.Conf)
		if r.Code != exitOK {
			t.Fatalf("once --dry-run: %s", r)
		}
		assertTerminalSafe(t, "once --dry-run", r.Stdout+r.Stderr)
		assertShows(t, "once --dry-run", r.Stdout, plainID, plainClaim, shownJob)
		assertAligned(t, "once --dry-run", r.Stdout, "REQUEST", "CLAIM", "JOB", "PHASE", "WOULD")

		r = e.run("once", "--dry-run", "--json", "--config", e.Conf)
		var plan qsync.Plan
		if err := json.Unmarshal([]byte(r.Stdout), &plan); err != nil || r.Code != exitOK {
			t.Fatalf("once --dry-run --json: %v\n%s", err, r)
		}
		assertTerminalSafe(t, "once --dry-run --json", r.Stdout)
		var sawR1, sawR2 bool
		for _, a := range plan.Actions {
			sawR1 = sawR1 || (a.Request == plainID && a.Claim == plainClaim)
			sawR2 = sawR2 || (a.Request == r2 && a.Job == hostileJob)
			if a.Request == hostileID {
				t.Errorf("the plan takes the request of a hostile id: %+v", a)
			}
		}
		if !sawR1 || !sawR2 {
			t.Errorf("the JSON plan lost the exact hostile values: %+v", plan.Actions)
		}
	})

	// Pass 1 creates R1's job and accepts it, and R2 is refused. The shop
	// then writes a hostile line on R1's job; pass 2's Draft is refused.
	r := e.run("once", "--config", e.Conf)
	if r.Code != exitOK {
		t.Fatalf("once: %s", r)
	}
	assertTerminalSafe(t, "once (pass 1)", r.Stdout+r.Stderr)
	if e := logEntry(r.Stdout+r.Stderr, "pending request skipped", "reason", "bad_entry"); e == nil || e["request"] != hostileID {
		t.Errorf("once (pass 1) does not report the entry of the hostile id, exact in its JSON (%v):\n%s", e, r)
	}
	assertShows(t, "once (pass 1)", r.Stdout+r.Stderr, "control character U+001B")
	db := e.DB.Open(t, e.DB.Config())
	st := store.New(db)
	if row, err := st.Request(ctx, hostileID); err == nil {
		t.Errorf("the request of a hostile id is tracked: %+v", row)
	}
	row1, err := st.Request(ctx, plainID)
	if err != nil || row1.JobNumber == "" {
		t.Fatalf("R1 after pass 1: %+v, %v", row1, err)
	}
	job1 := row1.JobNumber
	if _, err := e.DB.Shop().AddLine(ctx, job1, sampleshop.Line{Code: hostileCode, Description: hostileDesc,
		Qty: e2eDec("1"), UnitPrice: e2eNullDec("10.00")}); err != nil {
		t.Fatal(err)
	}
	r = e.run("once", "--config", e.Conf)
	if r.Code != exitOK {
		t.Fatalf("once: %s", r)
	}
	assertTerminalSafe(t, "once (pass 2)", r.Stdout+r.Stderr)
	assertShows(t, "once's summary", r.Stderr, "the pass succeeded; ", " a person")

	t.Run("Status", func(t *testing.T) {
		for _, args := range [][]string{{"status"}, {"status", "--all"}} {
			r := e.run(append(args, "--config", e.Conf)...)
			what := strings.Join(args, " ")
			if r.Code != exitOK {
				t.Fatalf("%s: %s", what, r)
			}
			assertTerminalSafe(t, what, r.Stdout+r.Stderr)
			assertShows(t, what, r.Stdout, plainID, plainClaim, shownJob, shownBody)
			assertAligned(t, what, r.Stdout, "REQUEST", "CLAIM", "JOB", "PHASE", "REASON")
		}
		r := e.run("status", "--all", "--json", "--config", e.Conf)
		var doc statusDoc
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != exitOK {
			t.Fatalf("status --json: %v\n%s", err, r)
		}
		assertTerminalSafe(t, "status --json", r.Stdout)
		var sawR1, sawR2 bool
		for _, row := range doc.Requests {
			sawR1 = sawR1 || (row.Request == plainID && row.Claim == plainClaim && strings.Contains(row.LastError, hostileBody))
			sawR2 = sawR2 || (row.Request == r2 && row.Job == hostileJob && strings.Contains(row.LastError, hostileBody))
		}
		if !sawR1 || !sawR2 {
			t.Errorf("status --json lost the exact hostile values:\n%s", r.Stdout)
		}
	})

	t.Run("History", func(t *testing.T) {
		for _, arg := range []string{plainID, hostileJob} {
			r := e.run("history", "--config", e.Conf, arg)
			what := "history " + termSafeArg(arg)
			if r.Code != exitOK {
				t.Fatalf("%s: %s", what, r)
			}
			assertTerminalSafe(t, what, r.Stdout+r.Stderr)
			assertShows(t, what, r.Stdout, shownBody)
			assertAligned(t, what, r.Stdout, "TIME", "EVENT", "PHASE", "WHAT")
		}
		r := e.run("history", "--config", e.Conf, plainID)
		assertShows(t, "history by request", r.Stdout, "request "+plainID+"  claim "+plainClaim+"  job "+job1)
		r = e.run("history", "--config", e.Conf, hostileJob)
		assertShows(t, "history by job", r.Stdout, "job "+shownJob, "job "+shownJob+" reserved for it")

		r = e.run("history", "--json", "--config", e.Conf, plainID)
		var doc struct {
			Requests []statuspage.Story `json:"requests"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != exitOK || len(doc.Requests) != 1 {
			t.Fatalf("history --json: %v\n%s", err, r)
		}
		assertTerminalSafe(t, "history --json", r.Stdout)
		st := doc.Requests[0]
		var details string
		for _, s := range st.Steps {
			details += s.Details
		}
		if st.ID != plainID || st.Claim != plainClaim || !strings.Contains(details, hostileBody) {
			t.Errorf("history --json lost the exact hostile values: %+v", st)
		}
	})

	t.Run("Config", func(t *testing.T) {
		r := e.run("config", "--config", e.Conf)
		if r.Code != exitOK {
			t.Fatalf("config: %s", r)
		}
		assertTerminalSafe(t, "config", r.Stdout+r.Stderr)
		assertShows(t, "config", r.Stdout, "shop.work_types."+shownCode)
		assertAligned(t, "config", r.Stdout, "KEY", "VALUE", "ORIGIN")

		r = e.run("config", "--json", "--config", e.Conf)
		var entries []config.Entry
		if err := json.Unmarshal([]byte(r.Stdout), &entries); err != nil || r.Code != exitOK {
			t.Fatalf("config --json: %v\n%s", err, r)
		}
		assertTerminalSafe(t, "config --json", r.Stdout)
		found := false
		for _, en := range entries {
			found = found || en.Key == "shop.work_types."+hostileCode
		}
		if !found {
			t.Errorf("config --json lost the exact hostile key:\n%s", r.Stdout)
		}
	})

	// Retry puts R1 back: its job, with the shop's hostile line, is tracked
	// again, and check reads that line.
	t.Run("Retry", func(t *testing.T) {
		r := e.run("retry", "--config", e.Conf, plainID)
		if r.Code != exitOK {
			t.Fatalf("retry: %s", r)
		}
		assertTerminalSafe(t, "retry", r.Stdout+r.Stderr)
		assertShows(t, "retry", r.Stdout, "request "+plainID+" (claim "+plainClaim+", job "+job1+")", shownBody)
	})

	t.Run("Check", func(t *testing.T) {
		remote.failList.Store(true)
		defer remote.failList.Store(false)
		r := e.run("check", "--config", e.Conf)
		if r.Code != exitFailure {
			t.Fatalf("check with the list refused: %s", r)
		}
		assertTerminalSafe(t, "check", r.Stdout+r.Stderr)
		assertShows(t, "check", r.Stdout, shownBody, "codes seen: "+shownCode+" ×1")

		// An error quoting the service, on standard error.
		r = e.run("once", "--dry-run", "--config", e.Conf)
		if r.Code != exitFailure {
			t.Fatalf("once --dry-run with the list refused: %s", r)
		}
		assertTerminalSafe(t, "once --dry-run's error", r.Stdout+r.Stderr)
		assertShows(t, "once --dry-run's error", r.Stderr, shownBody)
	})
}

// termSafeArg names a hostile argument in a test's messages.
func termSafeArg(s string) string { return fmt.Sprintf("%q", s) }
