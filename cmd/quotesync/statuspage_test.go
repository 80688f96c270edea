package main

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/config"
)

// TestStatusPageSwitch: metrics.status_page: false keeps /status off
// while /metrics is served, and a reload that sets it true turns the page
// on in the running daemon (the real binary).
func TestStatusPageSwitch(t *testing.T) {
	t.Parallel()
	off := false
	e := newCLIEnv(t, func(fc *config.File) {
		fc.Sync.Schedule = "@every 1s"
		fc.Metrics.Listen = "127.0.0.1:0"
		fc.Metrics.StatusPage = &off
	})
	d := startDaemon(t, e)
	base := "http://" + d.addr
	if code, body := httpGet(t, base+"/status"); code != 404 || !strings.Contains(body, "metrics.status_page: false") {
		t.Errorf("/status with the page off: %d %q, want 404 saying which key", code, body)
	}
	if code, _ := httpGet(t, base+"/metrics"); code != 200 {
		t.Errorf("/metrics with the page off: %d, want 200", code)
	}

	e.writeConfig(func(fc *config.File) {
		fc.Sync.Schedule = "@every 1s"
		fc.Metrics.Listen = "127.0.0.1:0" // unchanged: the listener stays
	})
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	d.waitLog(t, "the reload", msgReloaded)
	var code int
	var body string
	if !waitFor(10*time.Second, func() bool { code, body = httpGet(t, base+"/status"); return code == 200 }) {
		t.Fatalf("/status after turning the page on: %d %q", code, body)
	}
	if !strings.Contains(body, "Quote requests") {
		t.Errorf("/status after the reload is not the page:\n%s", body)
	}
	if code, body := httpGet(t, base+"/"); code != 200 || !strings.Contains(body, "/status") {
		t.Errorf("/ does not point at the status page: %d %q", code, body)
	}
	d.stop(t)
}
