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
// request submitted, each with its timeline, until Ctrl-C.
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
	m := regexp.MustCompile(`href="(/status/requests/[^"]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no link to a request's page:\n%s", body)
	}
	story := httpBody(t, strings.TrimSuffix(url, "/status")+m[1])
	for _, want := range []string{"listed by the insurer; job RO-", "accepted with referenceId RO-", "Draft pushed: ", "Submitted for assessment"} {
		if !strings.Contains(story, want) {
			t.Errorf("a request's timeline lacks %q:\n%s", want, story)
		}
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
