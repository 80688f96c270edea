package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestNotifySecretEchoBinary: a webhook receiver that refuses with a 401
// quoting the request's secret header back (as it is, and JSON-escaped in
// a body that lists the headers) puts the secret nowhere: not in the log
// of `once`, the outbox row's last_error, `status`, `status --json` nor
// `check`, which show the failure with the secret replaced.
func TestNotifySecretEchoBinary(t *testing.T) {
	const secretEnv, secret = "QUOTESYNC_E2E_HOOK_SECRET", `Bearer hook/echo+"5b7e"`
	e := newE2E(t, e2eOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("X-Hook-Secret")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":"bad secret %s","headers":{"X-Hook-Secret":%q}}`, got, got)
	}))
	t.Cleanup(srv.Close)
	e2eConfigure(e, func(doc map[string]any) {
		doc["notify"] = map[string]any{
			"webhook": map[string]any{"url": srv.URL + "/quotesync", "secret_header": "X-Hook-Secret", "secret_env": secretEnv},
		}
	})
	run := func(token string, args ...string) (int, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(e.ctx(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, e.bin, append(args, "--config", e.Conf)...)
		cmd.Env = append(e.environ(), e2eTokenEnv+"="+token, secretEnv+"="+secret)
		b, _ := cmd.CombinedOutput()
		for _, form := range []string{secret, "hook/echo", `hook\/echo`} {
			if strings.Contains(string(b), form) {
				t.Errorf("quotesync %s printed the webhook's secret (%q):\n%s", strings.Join(args, " "), form, b)
			}
		}
		return cmd.ProcessState.ExitCode(), string(b)
	}
	if code, o := run(e2eToken, "once"); code != 0 {
		t.Fatalf("once: exit %d\n%s", code, o)
	}
	// A refused token: an auth_failing notice, which the receiver refuses.
	code, log := run("wrong-token", "once")
	if code == 0 {
		t.Fatal("once with a wrong token exited 0")
	}
	if !strings.Contains(log, "delivery failed; will retry") || !strings.Contains(log, "[REDACTED]") {
		t.Errorf("the log has no failed delivery with the secret redacted:\n%s", log)
	}
	var lastErr string
	if err := e.sql.GetContext(e.ctx(), &lastErr, "SELECT last_error FROM quotesync_outbox WHERE target = 'webhook'"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(lastErr, "hook/echo") || !strings.Contains(lastErr, "401") || !strings.Contains(lastErr, "[REDACTED]") {
		t.Errorf("quotesync_outbox.last_error = %q, want the 401 with the secret redacted", lastErr)
	}
	if _, out := run(e2eToken, "status"); !strings.Contains(out, "401") || !strings.Contains(out, "[REDACTED]") {
		t.Errorf("status does not show the failed delivery, redacted:\n%s", out)
	}
	run(e2eToken, "status", "--json")
	if _, out := run(e2eToken, "check"); !strings.Contains(out, "401") {
		t.Errorf("check does not show the failed delivery:\n%s", out)
	}
}
