package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/remote/redact"
)

// echoSecret is the spec mode's bearer token and the documented mode's
// OAuth2 client secret in TestEchoedSecretsNowhereBinary: a slash, a
// plus and an equals sign make each of its echo forms differ.
const echoSecret = "e2e/s3cret+Q9=x-7f"

// echoHookKey is the key a webhook URL carries in its path.
const echoHookKey = "hook-k3y-0123456789abcdef"

// TestEchoedSecretsNowhereBinary: an insurer that answers its calls with
// a 400 quoting the Authorization header and the OAuth2 client secret (or
// the static token) in every form a service echoes them (as sent,
// URL-encoded in either hex case, JSON-escaped with \/ and \u002f, base64
// and base64url with and without padding), and a token endpoint that
// does the same, with the real binary running and its status page on:
// none of the forms is in the log, status, history, check, config,
// /healthz, the status page, /metrics or any quotesync_* table; nor is the
// key in the path of the webhook URL read from url_file, which its
// receiver quotes back. Both emulator modes: the documented one fetches
// OAuth2 tokens, which join the redaction as they arrive.
func TestEchoedSecretsNowhereBinary(t *testing.T) {
	for _, mode := range e2eModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t, e2eOptions{Mode: mode, Token: echoSecret, MaxAttempts: 1})
			recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprintf(w, "no hook at %s (%s)", r.URL.Path, url.PathEscape(r.URL.Path))
			}))
			t.Cleanup(recv.Close)
			hookFile := filepath.Join(e.Dir, "webhook-url")
			if err := os.WriteFile(hookFile, []byte(recv.URL+"/services/T01/"+echoHookKey+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			e2eConfigure(e, func(doc map[string]any) {
				doc["metrics"] = map[string]any{"listen": "127.0.0.1:0", "health_max_age": "1s"}
				doc["notify"] = map[string]any{"webhook": map[string]any{"url_file": hookFile}}
			})
			// Every accept is answered with the echo, each one quoting
			// another form first (the kept excerpt is its start).
			e.Emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultEcho})
			var ids []string
			for i := range len(emulator.EchoForms(echoSecret)) + 2 {
				claim := fmt.Sprintf("CLM-ECHO-%02d", i)
				e.createJob(claim)
				ids = append(ids, e.seed(claim, ""))
			}
			p := e.start("run")
			e2eWaitFor(t, p, "every accept answered with the echo", func() bool {
				var n int // the tables exist once run has migrated
				err := e.sql.GetContext(e.ctx(), &n, "SELECT COUNT(*) FROM quotesync_requests WHERE last_error LIKE '%echo%'")
				return err == nil && n == len(ids)
			})
			// Then the list and, in the documented mode, the token
			// endpoint echo too: the passes fail with the echo.
			e.Emu.AddFault(emulator.Fault{Route: "GET /requests", Action: emulator.FaultEcho})
			if mode == emulator.ModeDocumented {
				e.Emu.AddFault(emulator.Fault{Route: emulator.RouteToken, Action: emulator.FaultEcho, Status: http.StatusUnauthorized, Count: 3})
				e.Emu.ExpireTokens()
			}
			addr := ""
			e2eWaitFor(t, p, "the listener", func() bool {
				if m := logEntry(p.out.String(), msgMetricsListen); m != nil {
					addr, _ = m[fieldAddr].(string)
				}
				return addr != ""
			})
			base := "http://" + addr
			var health string
			e2eWaitFor(t, p, "/healthz naming the last pass's error", func() bool {
				code, body := httpGet(t, base+"/healthz")
				health = body
				return code == http.StatusServiceUnavailable && strings.Contains(body, "the last one failed") &&
					(mode != emulator.ModeDocumented || e.Emu.TokenCalls() > 3)
			})

			texts := map[string]string{"/healthz": health}
			for _, path := range []string{"/status", "/status/requests/" + ids[0], "/status/requests/" + ids[len(ids)-1], "/metrics"} {
				code, body := httpGet(t, base+path)
				if code != http.StatusOK {
					t.Errorf("GET %s: %d\n%.300s", path, code, body)
				}
				texts[path] = body
			}
			for _, args := range [][]string{{"status"}, {"status", "--json"}, {"history", ids[0]}, {"history", "--json", ids[1]}, {"check"}, {"config"}} {
				texts["quotesync "+strings.Join(args, " ")] = e.verb(args...).Output
			}
			texts["the tables"] = e.quotesyncTables()
			if code := p.stop(30 * time.Second); code != 0 {
				t.Errorf("run: exit %d\n%s", code, e2eTail(p.out.String(), 10))
			}
			texts["the log"] = p.out.String()

			for _, v := range echoedValues(e, mode) {
				for where, text := range texts {
					for _, f := range emulator.EchoForms(v) {
						if strings.Contains(text, f.Text) {
							t.Errorf("%s holds %q %s (%q):\n%s", where, v, f.Name, f.Text, e2eAround(text, f.Text))
						}
					}
				}
			}
			// The echo reached each of them, redacted.
			for _, where := range []string{"the log", "the tables", "/healthz", "quotesync status", "quotesync check", "/status/requests/" + ids[0]} {
				if !strings.Contains(texts[where], redact.Mark) {
					t.Errorf("%s shows no redacted echo:\n%s", where, e2eTail(texts[where], 15))
				}
			}
			if mode == emulator.ModeDocumented && !strings.Contains(texts["the log"], "token endpoint answered status 401: echo") {
				t.Errorf("the log shows no echo of the token endpoint:\n%s", e2eTail(texts["the log"], 15))
			}
			if !strings.Contains(texts["/status"], "the last one failed") {
				t.Errorf("the status page's health line does not name the last pass's error:\n%s", e2eTail(texts["/status"], 30))
			}
		})
	}
}

// echoedValues are the secrets the echoes quote: the token or the client
// secret, the Authorization headers sent (bearer, and Basic at the token
// endpoint), every OAuth2 token issued, the webhook URL's key.
func echoedValues(e *e2eEnv, mode string) []string {
	vs := []string{echoSecret, "Bearer " + echoSecret, echoHookKey}
	if mode == emulator.ModeDocumented {
		vs = append(vs, e2eClientID+":"+echoSecret, url.QueryEscape(e2eClientID)+":"+url.QueryEscape(echoSecret))
		for _, tok := range e.Emu.IssuedTokens() {
			vs = append(vs, tok, "Bearer "+tok)
		}
		if len(e.Emu.IssuedTokens()) == 0 {
			e.tb.Errorf("the documented mode issued no token")
		}
	}
	return vs
}

// quotesyncTables is every row of every quotesync_* table, as text.
func (e *e2eEnv) quotesyncTables() string {
	e.tb.Helper()
	var tables []string
	if err := e.sql.SelectContext(e.ctx(), &tables, "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE 'quotesync%'"); err != nil {
		e.tb.Fatal(err)
	}
	if len(tables) < 4 {
		e.tb.Fatalf("quotesync's tables: %v", tables)
	}
	var b strings.Builder
	for _, tbl := range tables {
		rows, err := e.sql.QueryxContext(e.ctx(), "SELECT * FROM "+tbl)
		if err != nil {
			e.tb.Fatal(err)
		}
		for rows.Next() {
			vals, err := rows.SliceScan()
			if err != nil {
				e.tb.Fatal(err)
			}
			fmt.Fprintf(&b, "%s:", tbl)
			for _, v := range vals {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, " %v", v)
			}
			b.WriteString("\n")
		}
		if err := rows.Close(); err != nil {
			e.tb.Fatal(err)
		}
	}
	return b.String()
}

// e2eAround is the text around the first place it holds s.
func e2eAround(text, s string) string {
	i := strings.Index(text, s)
	if i < 0 {
		return ""
	}
	return text[max(0, i-200):min(len(text), i+len(s)+200)]
}
