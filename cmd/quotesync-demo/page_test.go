package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDemoServesStatusPage runs the demo with -serve: it prints the status
// page's address, and after the run the page stays up showing every
// request of both insurers submitted, each with its timeline, until
// Ctrl-C.
func TestDemoServesStatusPage(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), demoBudget+30*time.Second)
	defer cancel()
	runCtx, interrupt := context.WithCancel(ctx)
	defer interrupt()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(runCtx, []string{"--timeout", demoBudget.String(), "-serve", "5m"}, &stdout, &stderr)
	}()

	lingers := regexp.MustCompile(`the status page stays at (http://127\.0\.0\.1:\d+/status) for 5m0s`)
	var url string
	for url == "" {
		select {
		case code := <-done:
			t.Fatalf("the demo exited %d before serving the page\n%s\n%s", code, stdout.String(), stderr.String())
		case <-ctx.Done():
			t.Fatalf("no lingering status page:\n%s", stdout.String())
		case <-time.After(50 * time.Millisecond):
		}
		if m := lingers.FindStringSubmatch(stdout.String()); m != nil {
			url = m[1]
		}
	}
	if !strings.Contains(stdout.String(), "status page: "+url+" (") {
		t.Errorf("the demo did not print the page's address at the start:\n%s", stdout.String())
	}
	body := httpBody(t, url)
	if got := strings.Count(body, `data-phase="submitted"`); got != 6 {
		t.Errorf("the page lists %d submitted requests, want 6:\n%s", got, body)
	}
	// Both insurers: three requests each, each request's card and page
	// under its insurer, request 7301 twice with two jobs.
	for _, ins := range []string{"acme", "harbour"} {
		if got := strings.Count(body, `data-phase="submitted" data-insurer="`+ins+`"`); got != 3 {
			t.Errorf("the page lists %d submitted requests of %s, want 3:\n%s", got, ins, body)
		}
		if !regexp.MustCompile(`data-insurer="` + ins + `"><a [^>]*>` + ins + `</a>: 3 tracked`).MatchString(body) {
			t.Errorf("the page does not count %s's requests:\n%s", ins, body)
		}
	}
	jobs := make(map[string]string)
	for _, ins := range []string{"acme", "harbour"} {
		link := "/status/requests/" + ins + "/7301"
		if !strings.Contains(body, `href="`+link+`"`) {
			t.Errorf("the page has no link to %s:\n%s", link, body)
		}
		story := httpBody(t, strings.TrimSuffix(url, "/status")+link)
		for _, want := range []string{"<dd>" + ins + "</dd>", "listed by the insurer; job RO-", "accepted with referenceId RO-", "Draft pushed: ", "Submitted for assessment"} {
			if !strings.Contains(story, want) {
				t.Errorf("%s's request 7301: its page lacks %q:\n%s", ins, want, story)
			}
		}
		if m := regexp.MustCompile(`accepted with referenceId (RO-\d+)`).FindStringSubmatch(story); m != nil {
			jobs[ins] = m[1]
		}
	}
	if jobs["acme"] != "RO-50001" || jobs["harbour"] == "" || jobs["harbour"] == jobs["acme"] {
		t.Errorf("request 7301's pages show jobs %v; want acme's RO-50001 and harbour's own", jobs)
	}

	interrupt() // Ctrl-C ends the wait
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after Ctrl-C while serving, want the run's 0", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the demo did not stop serving on Ctrl-C")
	}
	if _, err := http.Get(url); err == nil {
		t.Error("the page is still served after the demo returned")
	}
}

// TestDemoServeFlag: a negative -serve is a usage error.
func TestDemoServeFlag(t *testing.T) {
	var stdout, stderr syncBuffer
	if code := run(context.Background(), []string{"-serve", "-1m"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--serve") {
		t.Errorf("-serve -1m: exit %d, stderr %q; want 2 naming --serve", code, stderr.String())
	}
}

func httpBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d, %v\n%s", url, resp.StatusCode, err, b)
	}
	return string(b)
}
