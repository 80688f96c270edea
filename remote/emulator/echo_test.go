package emulator_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
)

// TestFaultEcho: an "echo" fault answers 400 (or its status) quoting the
// call's bearer token in every form of EchoForms, and applies nothing;
// on the documented mode's token endpoint it quotes the client secret
// the Basic header carried.
func TestFaultEcho(t *testing.T) {
	h := newFaultHarness(t)
	id := h.seed("CLM-1")
	h.emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultEcho, Count: 1})
	r := h.call("POST", "/requests/"+id, `{"referenceId":"RO-1"}`)
	if r.status != http.StatusBadRequest {
		t.Fatalf("echo status %d, want 400", r.status)
	}
	for _, f := range emulator.EchoForms(testToken) {
		if !strings.Contains(string(r.body), f.Text) {
			t.Errorf("the echo lacks the token %s (%q):\n%s", f.Name, f.Text, r.body)
		}
	}
	if !strings.Contains(string(r.body), "Bearer "+testToken) {
		t.Errorf("the echo lacks the Authorization header:\n%s", r.body)
	}
	if ref := accepted(h, id); ref != "" {
		t.Fatalf("the echoed accept was applied (%s)", ref)
	}

	dh, _ := documentedHarness(t, 10*time.Minute)
	dh.emu.AddFault(emulator.Fault{Route: emulator.RouteToken, Action: emulator.FaultEcho, Status: 401, Count: 1})
	req, err := http.NewRequest(http.MethodPost, dh.srv.URL+emulator.TokenPath,
		strings.NewReader(url.Values{"grant_type": {"client_credentials"}, "redirect_uri": {"x"}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("shop-1", testToken)
	resp, err := dh.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("token echo status %d, want 401", resp.StatusCode)
	}
	for _, v := range []string{testToken, "shop-1:" + testToken} {
		for _, f := range emulator.EchoForms(v) {
			if !strings.Contains(string(body), f.Text) {
				t.Errorf("the token endpoint's echo lacks %q %s:\n%s", v, f.Name, body)
			}
		}
	}
	if err := (emulator.Fault{Route: emulator.RouteToken, Action: emulator.FaultEcho, Status: 302}).Validate(); err == nil {
		t.Error("an echo fault of status 302 validated")
	}
}
