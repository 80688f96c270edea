package main

import (
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/webauth/webauthtest"
)

// freePort is a TCP port that nothing listens on, on any address, now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// TestListenerReloadSamePort follows the README's setup on a fixed port
// (the real binary): a loopback listener over plain HTTP, then by reloads
// TLS switched on at the same address, then the listener moved to
// 0.0.0.0 on the same port behind the users file. Each new listener
// cannot bind beside the old one, which is closed first. A move whose
// bind fails even so (another program holds the port on 127.0.0.2) is
// rejected, and the old listener serves again.
func TestListenerReloadSamePort(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	webauthtest.WriteUsers(t, users, map[string]string{"prometheus": scrapePassword})
	cert := webauthtest.WriteCert(t, dir, "one")
	port := freePort(t)
	loopback := net.JoinHostPort("127.0.0.1", port)
	e := newCLIEnv(t, func(fc *config.File) {
		fc.Sync.Schedule = "@every 1h"
		fc.Metrics.Listen = loopback
	})
	d := startDaemon(t, e)
	reload := func(what string, edit func(fc *config.File)) {
		t.Helper()
		done := countLogs(d.out.String(), msgReloaded) + countLogs(d.out.String(), msgReloadRejected)
		e.writeConfig(func(fc *config.File) {
			fc.Sync.Schedule = "@every 1h"
			edit(fc)
		})
		if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		if !waitFor(20*time.Second, func() bool {
			return countLogs(d.out.String(), msgReloaded)+countLogs(d.out.String(), msgReloadRejected) > done
		}) {
			t.Fatalf("timed out waiting for the reload %s", what)
		}
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cert.ClientConfig(), DisableKeepAlives: true}}
	get := func(url, user, password string) (int, error) {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	if code, err := get("http://"+loopback+"/metrics", "", ""); code != 200 {
		t.Fatalf("/metrics on %s at the start: %d %v", loopback, code, err)
	}

	// Moved to 0.0.0.0 while another program holds the port on
	// 127.0.0.2: the bind fails, the reload is rejected, the old listener
	// is back.
	other, err := net.Listen("tcp", net.JoinHostPort("127.0.0.2", port))
	if err != nil {
		t.Fatalf("hold the port on 127.0.0.2: %v", err)
	}
	reload("to 0.0.0.0 with the port taken", func(fc *config.File) {
		fc.Metrics.Listen, fc.Metrics.Auth = net.JoinHostPort("0.0.0.0", port), config.AuthNone
	})
	if e := logEntry(d.out.String(), msgReloadRejected); e == nil || !strings.Contains(e["error"].(string), "metrics.listen") {
		t.Errorf("the reload to a taken port is not rejected naming metrics.listen: %v", e)
	}
	if code, err := get("http://"+loopback+"/metrics", "", ""); code != 200 {
		t.Errorf("/metrics on %s after the rejected reload: %d %v, want 200 (the old listener back)", loopback, code, err)
	}
	_ = other.Close()

	// TLS switched on, same address.
	reload("switching TLS on", func(fc *config.File) {
		fc.Metrics.Listen = loopback
		fc.Metrics.TLSCertFile, fc.Metrics.TLSKeyFile = cert.CertFile, cert.KeyFile
	})
	if code, err := get("https://"+loopback+"/metrics", "", ""); code != 200 {
		t.Errorf("/metrics over TLS on %s after switching TLS on: %d %v, want 200", loopback, code, err)
	}

	// Moved to every address on the same port, behind the users file.
	reload("to 0.0.0.0", func(fc *config.File) {
		fc.Metrics.Listen, fc.Metrics.UsersFile = net.JoinHostPort("0.0.0.0", port), users
		fc.Metrics.TLSCertFile, fc.Metrics.TLSKeyFile = cert.CertFile, cert.KeyFile
	})
	if code, err := get("https://"+loopback+"/metrics", "prometheus", scrapePassword); code != 200 {
		t.Errorf("/metrics with a user on 0.0.0.0:%s after the move: %d %v, want 200", port, code, err)
	}
	if code, err := get("https://"+loopback+"/metrics", "", ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without a user on 0.0.0.0:%s after the move: %d %v, want 401", port, code, err)
	}
	if n, want := countLogs(d.out.String(), msgReloaded), 2; n != want {
		t.Errorf("%d reloads done, want %d:\n%s", n, want, d.out.String())
	}
	if n, want := countLogs(d.out.String(), msgMetricsRebind), 3; n != want {
		t.Errorf("%d lines saying the listener was closed to listen again on its port, want %d", n, want)
	}
	d.stop(t)
}
