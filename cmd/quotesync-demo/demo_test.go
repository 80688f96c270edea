package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	qsync "github.com/quotesync/quotesync/sync"
)

// demoBudget bounds one run of the demo in these tests (its --timeout);
// the test's own deadline is a little longer.
const demoBudget = 50 * time.Second

// TestDemoConverges runs the whole demo in-process: the real engine, the
// emulator, the embedded server and the shop's script.
func TestDemoConverges(t *testing.T) {
	t.Parallel() // with TestDemoBinary: the demo mostly waits for its schedule
	ctx, cancel := context.WithTimeout(context.Background(), demoBudget+10*time.Second)
	defer cancel()
	var stdout, stderr syncBuffer
	code := run(ctx, []string{"--timeout", demoBudget.String()}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit code %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	checkDemoOutput(t, stdout.String())
	if got := stderr.String(); got != "" {
		t.Errorf("stderr %q, want nothing without --verbose", got)
	}
}

// TestDemoBinary builds the real demo binary (with -race when this test
// binary has it, so that the build reuses its compiled packages) and runs
// it with --verbose.
func TestDemoBinary(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("this test builds the demo with the go command, which is not on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "quotesync-demo")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command(goTool, append(args, ".")...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), demoBudget+10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--verbose", "--timeout", demoBudget.String())
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	t.Logf("the demo binary ran %s", time.Since(start).Round(100*time.Millisecond))
	if err != nil { // an *exec.ExitError carries the exit status
		t.Fatalf("run the demo: %v, want exit status 0\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	checkDemoOutput(t, stdout.String())

	// --verbose: the daemon's JSON log lines on stderr, one per event,
	// each naming its insurer.
	msgs := make(map[string]int) // "insurer msg" → lines
	sc := bufio.NewScanner(strings.NewReader(stderr.String()))
	for sc.Scan() {
		var e struct{ Level, Msg, Insurer string }
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("stderr line %q is not JSON: %v", sc.Text(), err)
		}
		if e.Level == "error" {
			t.Errorf("error logged: %s", sc.Text())
		}
		msgs[e.Insurer+" "+e.Msg]++
	}
	for msg, want := range map[string]int{
		"acme request accepted": 3, "acme draft pushed": 3, "acme draft re-pushed": 1, "acme quote submitted": 3, "acme job held": 0,
		"harbour request accepted": 3, "harbour draft pushed": 3, "harbour draft re-pushed": 1, "harbour quote submitted": 3, "harbour job held": 1,
	} {
		if got := msgs[msg]; got != want {
			t.Errorf("%d JSON log lines %q, want %d (all: %v)", got, msg, want, msgs)
		}
	}
	for name, out := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String()} {
		if regexp.MustCompile(`demo-[0-9a-f]{32}`).MatchString(out) {
			t.Errorf("%s shows the bearer token", name)
		}
	}
}

// TestDemoTimeout shows the check failing: stopped before the shop's
// script is done, the demo exits 1 and says what did not converge.
func TestDemoTimeout(t *testing.T) {
	var stdout, stderr syncBuffer
	code := run(context.Background(), []string{"--timeout", "1500ms"}, &stdout, &stderr)
	out := stdout.String()
	if code != 1 {
		t.Fatalf("exit code %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, stderr.String())
	}
	for _, want := range []string{
		"NOT CONVERGED: stopped after 1.5s. What did not converge:\n",
		"  - the shop's script still waits to run step ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^  - (acme|harbour)'s request 7[23]\d\d \(claim CLM-\d+, job \S+\): .*(not Submitted|no Estimate quote)`).MatchString(out) {
		t.Errorf("stdout names no request that is not Submitted:\n%s", out)
	}
	if strings.Contains(out, "OK: ") {
		t.Errorf("stdout claims success:\n%s", out)
	}
}

// timelineLine is a daemon line of the timeline about one request.
var timelineLine = regexp.MustCompile(`(?m)^\d\d:\d\d\.\d  quotesync  (\S+) +request (\d+) +claim (\S+) +job (RO-\d+) +(.+)$`)

// shopLine is a line of the shop's actions.
var shopLine = regexp.MustCompile(`(?m)^\d\d:\d\d\.\d  shop       (\S+) {16,}claim (\S+) +job (RO-\d+) +(.+)$`)

// summaryRow is a row of the summary table.
var summaryRow = regexp.MustCompile(`(?m)^  (acme|harbour) +(\d+) +(CLM-\d+) +(RO-\d+) +(\S+) +(\S+) +(\d+) +(\d+) +(yes, at \S+|no\S*(?: \S+)*?) +(\S+)$`)

// insurerLines are the two lines of an insurer's totals.
var insurerLines = regexp.MustCompile(`(?m)^  (acme|harbour) +(\d+) of (\d+) requests Submitted, in \d+ pass(?:es)?\n {5,}(\d+) remote calls, (.+?): (.+)$`)

// claimsOf are the claims of each insurer's requests in the demo.
var claimsOf = map[string][]string{
	"acme":    {"CLM-1001", "CLM-1002", "CLM-2041"},
	"harbour": {"CLM-1003", "CLM-1005", "CLM-2042"},
}

// checkDemoOutput checks a successful run's stdout: each request's story
// in order, under its insurer, the shop's actions between the daemon's
// reactions, the summary with the colliding request id twice, each
// insurer's totals and calls, and the verdict.
func checkDemoOutput(t *testing.T, out string) {
	t.Helper()
	events := make(map[string][]string)   // claim → timeline texts, daemon's and shop's, in order
	jobs := make(map[string]string)       // claim → job
	insurers := make(map[string][]string) // claim → the insurer of each of its lines
	for _, line := range strings.Split(out, "\n") {
		if m := timelineLine.FindStringSubmatch(line); m != nil {
			events[m[3]] = append(events[m[3]], m[5])
			jobs[m[3]] = m[4]
			insurers[m[3]] = append(insurers[m[3]], m[1])
		} else if m := shopLine.FindStringSubmatch(line); m != nil {
			events[m[2]] = append(events[m[2]], "shop: "+m[4])
			insurers[m[2]] = append(insurers[m[2]], m[1])
		}
	}
	for ins, claims := range claimsOf {
		for _, claim := range claims {
			for _, got := range insurers[claim] {
				if got != ins {
					t.Errorf("claim %s: a timeline line names insurer %s, want %s", claim, got, ins)
					break
				}
			}
		}
	}
	stories := map[string][]string{ // what must happen, in this order, among other lines
		"CLM-1001": {"job number reserved", "request accepted", "draft pushed: 4 items", "shop: edited line 1",
			"draft re-pushed: 4 items", "shop: marked the estimate FINAL", "quote submitted"},
		"CLM-1002": {"request accepted", "draft pushed: 4 items", "quote submitted"},
		"CLM-1003": {"request accepted", "shop: added 3 lines", "draft pushed: 3 items", "shop: marked the estimate FINAL", "quote submitted"},
		"CLM-1005": {"request accepted", "held, nothing pushed: job RO-50005 line 2", "shop: edited line 2",
			"draft pushed: 2 items (released: the shop fixed its data)", "shop: marked the estimate FINAL", "quote submitted"},
		"CLM-2041": {"request accepted", "shop: added 2 lines", "draft pushed: 2 items", "shop: marked the estimate FINAL", "quote submitted"},
		"CLM-2042": {"request accepted", "shop: added 4 lines", "draft pushed: 4 items", "shop: deleted line 3",
			"draft re-pushed: 3 items", "shop: marked the estimate FINAL", "quote submitted"},
	}
	for claim, story := range stories {
		got := events[claim]
		i := 0
		for _, e := range got {
			if i < len(story) && strings.HasPrefix(e, story[i]) {
				i++
			}
		}
		if i < len(story) {
			t.Errorf("claim %s: the timeline lacks %q (in this order: %q); it has:\n  %s", claim, story[i], story, strings.Join(got, "\n  "))
		}
		if n := countPrefix(got, "quote submitted"); n != 1 {
			t.Errorf("claim %s: %d \"quote submitted\" lines, want 1", claim, n)
		}
	}
	for claim, job := range map[string]string{"CLM-1001": "RO-50001", "CLM-1002": "RO-50002", "CLM-1003": "RO-50003", "CLM-1005": "RO-50005"} {
		if jobs[claim] != job {
			t.Errorf("claim %s: job %q, want the sample shop's %s", claim, jobs[claim], job)
		}
	}
	created := []string{jobs["CLM-2041"], jobs["CLM-2042"]}
	slices.Sort(created)
	if diff := cmp.Diff([]string{"RO-50006", "RO-50007"}, created); diff != "" {
		t.Errorf("jobs made by create_job (-want +got):\n%s", diff)
	}

	type row struct {
		Insurer, Request, Job, Phase, Quote, Submitted, FrontDesk string
		Items, Drafts                                             int
	}
	got := make(map[string]row)
	for _, m := range summaryRow.FindAllStringSubmatch(out, -1) {
		items, _ := strconv.Atoi(m[7])
		drafts, _ := strconv.Atoi(m[8])
		got[m[3]] = row{Insurer: m[1], Request: m[2], Job: m[4], Phase: m[5], Quote: m[6], Items: items, Drafts: drafts,
			Submitted: strings.Fields(m[9])[0], FrontDesk: m[10]}
	}
	want := make(map[string]row)
	for claim, r := range map[string]struct {
		insurer, request string
		items, drafts    int
	}{
		"CLM-1001": {"acme", "7301", 4, 2}, "CLM-1002": {"acme", "7302", 4, 1}, "CLM-2041": {"acme", "7303", 2, 1},
		"CLM-1003": {"harbour", "7299", 3, 1}, "CLM-1005": {"harbour", "7300", 2, 1}, "CLM-2042": {"harbour", "7301", 3, 2},
	} {
		want[claim] = row{Insurer: r.insurer, Request: r.request, Job: jobs[claim], Phase: "submitted", Quote: "Submitted",
			Items: r.items, Drafts: r.drafts, Submitted: "yes,", FrontDesk: "SUBMITTED"}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("summary table (-want +got):\n%s\n%s", diff, out)
	}
	// Request 7301 of each insurer: two rows, two claims, two jobs.
	colliding := make(map[string]string) // insurer → job
	for _, r := range got {
		if r.Request == "7301" {
			colliding[r.Insurer] = r.Job
		}
	}
	if len(colliding) != 2 || colliding["acme"] == "" || colliding["acme"] == colliding["harbour"] {
		t.Errorf("request 7301 is tracked as %v; want acme's and harbour's, each with its own job", colliding)
	}

	// Each emulator saw its own insurer's calls only: its three accepts
	// and submits, on its own status form; acme's calls carried tokens of
	// its token endpoint, harbour's the token of its file (neither
	// emulator refused a call).
	totals := make(map[string][]string)
	for _, m := range insurerLines.FindAllStringSubmatch(out, -1) {
		totals[m[1]] = m[2:]
	}
	for ins, c := range map[string]struct{ has, lacks []string }{
		"acme": {has: []string{"POST /requests/{id} ×3", "POST /jobs/{jobId}/quotes/status/{status} ×3"},
			lacks: []string{"PUT /jobs/{jobId}/quotes/{quoteId}/status"}},
		"harbour": {has: []string{"POST /requests/{id} ×3", "PUT /jobs/{jobId}/quotes/{quoteId}/status ×3"},
			lacks: []string{"/oauth2/token", "/quotes/status/"}},
	} {
		m := totals[ins]
		if m == nil {
			t.Errorf("no totals of insurer %s:\n%s", ins, out)
			continue
		}
		if m[0] != "3" || m[1] != "3" {
			t.Errorf("insurer %s: %s of %s requests Submitted, want 3 of 3", ins, m[0], m[1])
		}
		if m[3] != "none refused" {
			t.Errorf("insurer %s: %s, want none refused (a call with another insurer's token, or none)", ins, m[3])
		}
		for _, s := range c.has {
			if !strings.Contains(m[4], s) {
				t.Errorf("insurer %s's calls lack %q: %s", ins, s, m[4])
			}
		}
		for _, s := range c.lacks {
			if strings.Contains(m[4], s) {
				t.Errorf("insurer %s's calls include %q: %s", ins, s, m[4])
			}
		}
	}
	if m := regexp.MustCompile(`POST /oauth2/token ×(\d+)`).FindStringSubmatch(strings.Join(totals["acme"], " ")); m == nil || m[1] == "0" {
		t.Errorf("acme's token endpoint was not called: %q", totals["acme"])
	}
	for _, re := range []string{
		`(?m)^  insurer acme +emulator in documented mode on (http://127\.0\.0\.1:\d+) .*\n +token: oauth2 client credentials at (http://127\.0\.0\.1:\d+)/oauth2/token; status change: POST /jobs/\{jobId\}/quotes/status/\{status\}$`,
		`(?m)^  insurer harbour +emulator in spec mode on .*\n +token: file /\S+/harbour-token; status change: PUT /jobs/\{jobId\}/quotes/\{quoteId\}/status$`,
	} {
		m := regexp.MustCompile(re).FindStringSubmatch(out)
		if m == nil {
			t.Errorf("the setup lacks a line matching %s:\n%s", re, out)
		} else if len(m) == 3 && m[1] != m[2] {
			t.Errorf("acme's token endpoint %s is not on acme's emulator %s", m[2], m[1])
		}
	}
	if !strings.Contains(out, "\nOK: all 6 requests of 2 insurers reached Submitted on their insurer's remote, each once") {
		t.Errorf("stdout lacks the verdict OK:\n%s", out)
	}
	if !strings.Contains(out, "leadership acquired (GET_LOCK") {
		t.Errorf("the timeline does not show the single-instance lock taken:\n%s", out)
	}
}

// countPrefix counts the elements of ss that start with prefix.
func countPrefix(ss []string, prefix string) int {
	n := 0
	for _, s := range ss {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

// TestPassCountRound: the shop's script moves by rounds, a round ending
// when every insurer's engine has finished one more pass; one engine's
// passes alone never end one.
func TestPassCountRound(t *testing.T) {
	tl := newTimeline(io.Discard, time.Now())
	for i, step := range []struct {
		insurer string
		round   int
	}{
		{"acme", 0}, {"acme", 0}, // harbour has not finished a pass yet
		{"harbour", 1},
		{"harbour", 2}, // acme has finished two
		{"harbour", 2},
		{"acme", 3},
	} {
		tl.pass(qsync.Tick{Insurer: step.insurer, Leader: true, Ran: true})
		if got := tl.round(2); got != step.round {
			t.Errorf("after pass %d, %s's: round %d, want %d", i+1, step.insurer, got, step.round)
		}
	}
	got := map[string]int{"acme": tl.passCount("acme"), "harbour": tl.passCount("harbour")}
	if diff := cmp.Diff(map[string]int{"acme": 3, "harbour": 3}, got); diff != "" {
		t.Errorf("passes (-want +got):\n%s", diff)
	}
}
