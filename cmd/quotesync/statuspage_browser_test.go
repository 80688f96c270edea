package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// chromiumPath finds the browser: $QUOTESYNC_CHROMIUM, else Debian's
// chromium on the PATH. Outside CI a missing browser skips the test with
// how to run it; in CI (CI=true) it fails it, since .ci/tools installs it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("QUOTESYNC_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium on the PATH: install it (as root: apt-get install -y chromium, or bash .ci/tools) or point QUOTESYNC_CHROMIUM at a Chromium binary, then run go test -run Browser ./cmd/quotesync/"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// newBrowser starts a headless Chromium on a fresh profile, with nothing
// that reaches out to the network on its own, and returns its context.
func newBrowser(t *testing.T, width, height int, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	path := chromiumPath(t)
	profile, err := os.MkdirTemp("", "quotesync-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(width, height),
	}
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()      // closes the tab and the browser
		cancelAlloc() // waits for the browser's process
		// Chromium's helpers may write to the profile a moment longer.
		for i := 0; os.RemoveAll(profile) != nil && i < 50; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	tctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancelTimeout)
	// Starts the browser, emulating a phone: the page must honour the
	// viewport and fit its width.
	if err := chromedp.Run(tctx, chromedp.EmulateViewport(int64(width), int64(height), chromedp.EmulateMobile, chromedp.EmulateScale(2))); err != nil {
		t.Fatalf("start chromium (%s): %v", path, err)
	}
	return tctx
}

// TestStatusPageBrowser runs the daemon (`quotesync run`, the real
// binary) through a front desk's morning: a quote drafted and changed, one
// submitted, one accepted without lines, one held for a line without a
// price; then opens the status page in a real headless Chromium, sized as
// a phone, as the front desk does: over the network (the listener on
// 0.0.0.0, HTTPS with a certificate made for the test), behind a login of
// the users file. It is sent to the login form, refused with a wrong
// password, let in with the right one (an HttpOnly, Secure,
// SameSite=Strict session cookie), and checks what a person sees there:
// every request with its phase, the held job's reason and what to do,
// the "needs a person" filter, and one job's timeline from listed to
// submitted; no secret and no password in the page or the daemon's log;
// and the logout.
//
// With QUOTESYNC_SCREENSHOT=FILE.png it also saves what the phone shows:
// the login form (FILE-login.png), the list (FILE.png) and the request's
// page (FILE-request.png).
func TestStatusPageBrowser(t *testing.T) {
	// First: without a browser, a skip costs nothing. The certificate is
	// the test's own, which no authority signed.
	ctx := newBrowser(t, 390, 844, chromedp.Flag("ignore-certificate-errors", true))
	w := newLoginWorld(t, func(fc *config.File) { fc.Sync.Schedule = "@every 1s" })
	e := w.cliEnv
	ids := e.Emu.AddRequests(
		emulator.SeedRequest{ClaimNumber: sampleshop.ClaimDraft},
		emulator.SeedRequest{ClaimNumber: sampleshop.ClaimFinal},
		emulator.SeedRequest{ClaimNumber: sampleshop.ClaimNoLines},
		emulator.SeedRequest{ClaimNumber: sampleshop.ClaimBadLine},
	)
	reqDraft, reqFinal, reqNoLines, reqBad := ids[0], ids[1], ids[2], ids[3]

	d := startDaemon(t, e)
	d.waitLog(t, "the first Draft of "+sampleshop.JobDraft, "draft pushed", "job", sampleshop.JobDraft)
	d.waitLog(t, "the submit of "+sampleshop.JobFinal, "quote submitted", "job", sampleshop.JobFinal)
	d.waitLog(t, "the hold of "+sampleshop.JobBadLine, "job held", "job", sampleshop.JobBadLine)
	// A later change: the estimator edits a line of the drafted job.
	shop := e.DB.Shop()
	lines, err := shop.Lines(context.Background(), sampleshop.JobDraft)
	if err != nil || len(lines) == 0 {
		t.Fatalf("lines of %s: %d, %v", sampleshop.JobDraft, len(lines), err)
	}
	lines[0].Description += " (revised)"
	if err := shop.EditLine(context.Background(), lines[0]); err != nil {
		t.Fatal(err)
	}
	d.waitLog(t, "the second Draft of "+sampleshop.JobDraft, "draft re-pushed", "job", sampleshop.JobDraft)

	base := "https://" + loopbackOf(d.addr)
	browserLogin(t, ctx, base)
	var listText string
	phaseOf := map[string]string{}
	err = chromedp.Run(ctx,
		chromedp.Navigate(base+"/status"),
		chromedp.WaitVisible(`ul.requests`, chromedp.ByQuery),
		chromedp.Text(`main`, &listText, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("open %s/status: %v", base, err)
	}
	var healthLine string
	if err := chromedp.Run(ctx, chromedp.Text(`p.health`, &healthLine, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(healthLine, "quotesync works: passes succeed on schedule · last successful pass ") {
		t.Errorf("the daemon's verdict at the top = %q, want that it works, with its last successful pass", healthLine)
	}
	for _, id := range ids {
		var phase string
		if err := chromedp.Run(ctx, chromedp.Text(`#request-`+id+` .phase`, &phase, chromedp.ByQuery)); err != nil {
			t.Fatalf("the card of request %s: %v\npage:\n%s", id, err, listText)
		}
		phaseOf[id] = strings.TrimSpace(phase)
	}
	for id, want := range map[string]string{reqDraft: "drafted", reqFinal: "submitted", reqNoLines: "accepted", reqBad: "drafted"} {
		if id == reqBad {
			continue // held before its first Draft: accepted
		}
		if got := phaseOf[id]; got != want {
			t.Errorf("request %s shows phase %q, want %q", id, got, want)
		}
	}
	if got := phaseOf[reqBad]; got != "accepted" {
		t.Errorf("held request %s shows phase %q, want accepted", reqBad, got)
	}
	var held string
	if err := chromedp.Run(ctx, chromedp.Text(`#request-`+reqBad, &held, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Request " + reqBad, "claim " + sampleshop.ClaimBadLine, "job " + sampleshop.JobBadLine,
		"needs a person", "Held: a line of the job's estimate is invalid", "What to do: fix the line in the shop"} {
		if !strings.Contains(held, want) {
			t.Errorf("the held request's card lacks %q:\n%s", want, held)
		}
	}
	var width int
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.documentElement.scrollWidth`, &width)); err != nil {
		t.Fatal(err)
	}
	if width > 390 {
		t.Errorf("the list is %d CSS pixels wide on a 390-pixel phone: it scrolls sideways", width)
	}
	screenshot(t, ctx, "")

	// The filter: a person clicks "Needs a person".
	var listed []string
	err = chromedp.Run(ctx,
		chromedp.Click(`nav.filter a[href="/status?need=person"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`nav.filter a[aria-current="page"][href="/status?need=person"]`, chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("ul.requests li.card .id")).map(e => e.textContent)`, &listed),
	)
	if err != nil {
		t.Fatalf("the needs-a-person filter: %v", err)
	}
	if got, want := strings.Join(listed, ", "), "Request "+reqBad; got != want {
		t.Errorf("needs a person lists %q, want only the held request (%q)", got, want)
	}

	// One job's story: back to the list, then the submitted request's page.
	var timeline []string
	var facts string
	err = chromedp.Run(ctx,
		chromedp.Navigate(base+"/status"),
		chromedp.Click(`#request-`+reqFinal+` a.id`, chromedp.ByQuery),
		chromedp.WaitVisible(`ol.timeline`, chromedp.ByQuery),
		chromedp.Text(`dl.facts`, &facts, chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("ol.timeline li .what")).map(e => e.textContent)`, &timeline),
	)
	if err != nil {
		t.Fatalf("the page of request %s: %v", reqFinal, err)
	}
	if !strings.Contains(facts, sampleshop.ClaimFinal) || !strings.Contains(facts, sampleshop.JobFinal) {
		t.Errorf("the page of request %s lacks its claim or job:\n%s", reqFinal, facts)
	}
	want := []string{
		"listed by the insurer; job " + sampleshop.JobFinal + " reserved for it",
		"accepted with referenceId " + sampleshop.JobFinal,
		"Draft pushed: 4 lines, hash ",
		"Submitted for assessment (the Draft with hash ",
	}
	if len(timeline) != len(want) {
		t.Fatalf("timeline of request %s has %d steps, want %d:\n%s", reqFinal, len(timeline), len(want), strings.Join(timeline, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(timeline[i], w) {
			t.Errorf("timeline step %d = %q, want it to start with %q", i+1, timeline[i], w)
		}
	}
	screenshot(t, ctx, "-request")
	// The Draft that was submitted is the one pushed.
	if h := strings.TrimPrefix(timeline[2], want[2]); !strings.Contains(timeline[3], h) {
		t.Errorf("the submit names another Draft than the one pushed: %q, %q", timeline[2], timeline[3])
	}

	var html string
	if err := chromedp.Run(ctx, chromedp.OuterHTML(`html`, &html, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	for _, s := range w.secrets() {
		if strings.Contains(html+listText, s) {
			t.Errorf("the status page shows a secret or a password")
		}
	}
	browserLogout(t, ctx, base)
	d.stop(t)
	for _, s := range w.secrets() {
		if strings.Contains(d.out.String(), s) {
			t.Errorf("the daemon's log shows a secret or a password")
		}
	}
	if logEntry(d.out.String(), "login failed", "reason", "wrong_password", "user", "frontdesk") == nil ||
		logEntry(d.out.String(), "logged in", "user", "frontdesk") == nil || logEntry(d.out.String(), "logged out", "user", "frontdesk") == nil {
		t.Errorf("the log lacks the failed login, the login or the logout:\n%s", e2eTail(d.out.String(), 40))
	}
}

// browserLogin opens the page at base as a stranger: the login form,
// where a wrong password is refused and the right one lets in, with a
// session cookie a script cannot read, sent only over HTTPS and only
// from the page's own site.
func browserLogin(t *testing.T, ctx context.Context, base string) {
	t.Helper()
	var loc, msg string
	err := chromedp.Run(ctx,
		chromedp.Navigate(base+"/status"),
		chromedp.WaitVisible(`form[action="/login"]`, chromedp.ByQuery),
		chromedp.Location(&loc),
		chromedp.SendKeys(`#user`, "frontdesk", chromedp.ByQuery),
		chromedp.SendKeys(`#password`, "not-the-password", chromedp.ByQuery),
		chromedp.Click(`form[action="/login"] button`, chromedp.ByQuery),
		chromedp.WaitVisible(`p.message`, chromedp.ByQuery),
		chromedp.Text(`p.message`, &msg, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("the login form: %v", err)
	}
	if want := base + "/login?next=%2Fstatus"; loc != want {
		t.Errorf("a stranger at /status lands on %q, want %q", loc, want)
	}
	if msg != "Wrong user name or password." {
		t.Errorf("after a wrong password the form says %q", msg)
	}
	if c := sessionCookies(t, ctx); len(c) != 0 {
		t.Errorf("a wrong password set a cookie: %v", c)
	}
	screenshot(t, ctx, "-login")
	err = chromedp.Run(ctx,
		chromedp.SendKeys(`#user`, "frontdesk", chromedp.ByQuery),
		chromedp.SendKeys(`#password`, deskPassword, chromedp.ByQuery),
		chromedp.Click(`form[action="/login"] button`, chromedp.ByQuery),
		chromedp.WaitVisible(`ul.requests`, chromedp.ByQuery),
		chromedp.Location(&loc),
	)
	if err != nil {
		t.Fatalf("log in with the right password: %v", err)
	}
	if loc != base+"/status" {
		t.Errorf("the login leads to %q, want the page asked for, %s/status", loc, base)
	}
	cookies := sessionCookies(t, ctx)
	if len(cookies) != 1 {
		t.Fatalf("%d session cookies after the login, want 1", len(cookies))
	}
	c := cookies[0]
	if c.Name != "__Host-quotesync_session" || !c.HTTPOnly || !c.Secure || c.SameSite != network.CookieSameSiteStrict || c.Path != "/" {
		t.Errorf("the session cookie: %s HttpOnly=%t Secure=%t SameSite=%s Path=%s; want __Host-, HttpOnly, Secure, Strict, /",
			c.Name, c.HTTPOnly, c.Secure, c.SameSite, c.Path)
	}
	if left := time.Until(time.Unix(int64(c.Expires), 0)); left < 11*time.Hour || left > 12*time.Hour {
		t.Errorf("the session cookie expires in %s, want about 12h (metrics.session_lifetime)", left)
	}
	if strings.Contains(c.Value, deskPassword) {
		t.Error("the session cookie holds the password")
	}
}

// browserLogout presses the page's "Log out": the login form again, and
// the page asks for a login once more.
func browserLogout(t *testing.T, ctx context.Context, base string) {
	t.Helper()
	var loc string
	err := chromedp.Run(ctx,
		chromedp.Navigate(base+"/status"),
		chromedp.Click(`form[action="/logout"] button`, chromedp.ByQuery),
		chromedp.WaitVisible(`form[action="/login"]`, chromedp.ByQuery),
		chromedp.Navigate(base+"/status"),
		chromedp.WaitVisible(`form[action="/login"]`, chromedp.ByQuery),
		chromedp.Location(&loc),
	)
	if err != nil {
		t.Fatalf("log out: %v", err)
	}
	if !strings.HasPrefix(loc, base+"/login") {
		t.Errorf("after the logout /status shows %q, want the login form", loc)
	}
	if c := sessionCookies(t, ctx); len(c) != 0 {
		t.Errorf("the logout left the session cookie: %v", c)
	}
}

// sessionCookies are the browser's quotesync session cookies.
func sessionCookies(t *testing.T, ctx context.Context) []*network.Cookie {
	t.Helper()
	var out []*network.Cookie
	err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		all, err := network.GetCookies().Do(ctx)
		for _, c := range all {
			if strings.HasSuffix(c.Name, "quotesync_session") {
				out = append(out, c)
			}
		}
		return err
	}))
	if err != nil {
		t.Fatalf("read the browser's cookies: %v", err)
	}
	return out
}

// screenshot saves what the browser shows to $QUOTESYNC_SCREENSHOT, with
// suffix before its extension, when that is set.
func screenshot(t *testing.T, ctx context.Context, suffix string) {
	t.Helper()
	shot := os.Getenv("QUOTESYNC_SCREENSHOT")
	if shot == "" {
		return
	}
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatal(err)
	}
	ext := filepath.Ext(shot)
	if err := os.WriteFile(strings.TrimSuffix(shot, ext)+suffix+ext, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// cliDaemon is a running `quotesync run` of a cliEnv.
type cliDaemon struct {
	cmd    *exec.Cmd
	out    cliBuffer
	exited chan error
	addr   string // the listener's address
}

// startDaemon starts `quotesync run` and waits for its listener.
func startDaemon(t *testing.T, e *cliEnv) *cliDaemon {
	t.Helper()
	d := &cliDaemon{exited: make(chan error, 1)}
	d.cmd = exec.Command(e.bin, "run", "--config", e.Conf)
	d.cmd.Env = e.environ()
	d.cmd.Stdout, d.cmd.Stderr = &d.out, &d.out
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.exited <- d.cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-d.exited:
		default:
			_ = d.cmd.Process.Kill()
			<-d.exited
		}
		if t.Failed() {
			t.Logf("daemon output:\n%s", e2eTail(d.out.String(), 60))
		}
	})
	if !waitFor(15*time.Second, func() bool { return logEntry(d.out.String(), msgMetricsListen) != nil }) {
		t.Fatal("timed out waiting for the listener")
	}
	d.addr = logEntry(d.out.String(), msgMetricsListen)[fieldAddr].(string)
	return d
}

// waitLog waits up to 20s for a log line with msg and the fields kv.
func (d *cliDaemon) waitLog(t *testing.T, what, msg string, kv ...string) {
	t.Helper()
	if !waitFor(20*time.Second, func() bool { return logEntry(d.out.String(), msg, kv...) != nil }) {
		t.Fatalf("timed out waiting for %s (log %q)", what, msg)
	}
}

// stop sends SIGTERM and expects a clean exit.
func (d *cliDaemon) stop(t *testing.T) {
	t.Helper()
	_ = d.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-d.exited:
		d.exited <- err
		if err != nil {
			t.Errorf("the daemon exited with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("the daemon did not stop within 30s")
	}
}
