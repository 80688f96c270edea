package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
)

// emuInstanceLine finds a named instance's start line.
var emuInstanceLine = regexp.MustCompile(`^quotesync-emulator ([A-Za-z0-9_-]+) listening on \S+ \(mode (\w+)\); base URL (http://[0-9.:]+) `)

// emuOtherSecret is the client secret of the documented instance.
const emuOtherSecret = "instance-bb-secret-5e09"

// TestEmulatorInstancesBinary runs the program as a process serving two
// instances: aa follows the spec with a bearer token from a file, bb the
// public documentation with OAuth2 client credentials and a secret from
// the environment. Both seed requests 1001 and 1002; accepting 1001 at one
// leaves it pending at the other, and each keeps its own job and state
// file. SIGTERM stops both.
func TestEmulatorInstancesBinary(t *testing.T) {
	dir := t.TempDir()
	stateA, stateB := filepath.Join(dir, "aa.json"), filepath.Join(dir, "bb.json")
	var stderr emuLockedBuffer
	cmd, stdout := emuStartBinary(t, []string{"QS_TEST_BB_SECRET=" + emuOtherSecret, emulatorTokenEnv + "="}, &stderr, "--seed", "5",
		"--instance", "name=aa,listen=127.0.0.1:0,token-file="+emuTokenFile(t)+",seed-requests=2,state="+stateA,
		"--instance", "name=bb, listen=127.0.0.1:0, mode=documented, token-env=QS_TEST_BB_SECRET, client-id=shop-bb, token-ttl=2m, seed-requests=2, state="+stateB)
	var out emuLockedBuffer
	lines := bufio.NewScanner(stdout)
	base, mode := map[string]string{}, map[string]string{}
	for len(base) < 2 && lines.Scan() {
		out.Write([]byte(lines.Text() + "\n"))
		if m := emuInstanceLine.FindStringSubmatch(lines.Text()); m != nil {
			base[m[1]], mode[m[1]] = m[3], m[2]
		}
	}
	if base["aa"] == "" || base["bb"] == "" || base["aa"] == base["bb"] {
		t.Fatalf("start lines %q (stderr %q): want aa and bb on two addresses", out.String(), stderr.String())
	}
	go func() { _, _ = io.Copy(&out, stdout) }()
	if mode["aa"] != "spec" || mode["bb"] != "documented" {
		t.Errorf("modes %v, want aa spec and bb documented", mode)
	}

	aa := emuAPI{t: t, base: base["aa"], token: emuTestToken}
	bb := emuAPI{t: t, base: base["bb"], token: oauthToken(t, base["bb"]+emulator.TokenPath, "shop-bb", emuOtherSecret, 2*time.Minute)}
	if got, want := aa.pending(), "1001 1002"; got != want {
		t.Fatalf("aa pending %q, want %q", got, want)
	}
	if got, want := bb.pending(), "1001 1002"; got != want {
		t.Fatalf("bb pending %q, want %q", got, want)
	}
	if status, _ := (emuAPI{t: t, base: base["aa"], token: bb.token}).call("GET", "/requests", ""); status != 401 {
		t.Errorf("aa with bb's token: %d, want 401 (each instance its own token)", status)
	}

	if status, body := aa.call("POST", "/requests/1001", `{"referenceId":"RO-A1"}`); status != 201 {
		t.Fatalf("accept 1001 at aa: %d %s", status, body)
	}
	if got, want := aa.pending(), "1002"; got != want {
		t.Errorf("aa pending after accepting 1001: %q, want %q", got, want)
	}
	if got, want := bb.pending(), "1001 1002"; got != want {
		t.Errorf("bb pending after aa accepted 1001: %q, want %q", got, want)
	}
	if status, body := bb.call("POST", "/requests/1001", `{"referenceId":"RO-B1"}`); status != 201 {
		t.Errorf("accept 1001 at bb: %d %s, want 201 (its own 1001)", status, body)
	}
	if status, body := aa.call("POST", "/requests/1001", `{"referenceId":"RO-A1"}`); status != 409 {
		t.Errorf("accept 1001 at aa again: %d %s, want 409", status, body)
	}

	emuStopBinary(t, cmd, syscall.SIGTERM)
	for name, b := range base {
		if conn, err := net.Dial("tcp", strings.TrimPrefix(b, "http://")); err == nil {
			conn.Close()
			t.Errorf("%s still accepts connections after SIGTERM", name)
		}
	}
	for _, c := range []struct{ path, want, other string }{{stateA, "RO-A1", "RO-B1"}, {stateB, "RO-B1", "RO-A1"}} {
		data, err := os.ReadFile(c.path)
		if err != nil || !bytes.Contains(data, []byte(`"`+c.want+`"`)) || bytes.Contains(data, []byte(c.other)) {
			t.Errorf("state file %s (%v): want job %s and not %s", filepath.Base(c.path), err, c.want, c.other)
		}
	}
	all := out.String() + stderr.String()
	if !strings.Contains(all, "quotesync-emulator stopped") {
		t.Errorf("no stop line in %q", all)
	}
	if strings.Contains(all, emuTestToken) || strings.Contains(all, emuOtherSecret) {
		t.Errorf("a token was printed: %s", all)
	}
}

// emuAPI calls one emulator instance's API with a bearer token.
type emuAPI struct {
	t           *testing.T
	base, token string
}

// call sends one API call and returns the status and body.
func (a emuAPI) call(method, path, body string) (int, string) {
	a.t.Helper()
	status, _, data := emuDo(a.t, a.token, method, a.base+emulator.APIPrefix+path, body)
	return status, string(data)
}

// pending lists the pending request ids, space-separated; numeric (spec)
// and string (documented) ids alike.
func (a emuAPI) pending() string {
	a.t.Helper()
	status, body := a.call("GET", "/requests", "")
	var reqs []struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal([]byte(body), &reqs); status != 200 || err != nil {
		a.t.Fatalf("list %s: %d %s (%v)", a.base, status, body, err)
	}
	ids := make([]string, len(reqs))
	for i, r := range reqs {
		ids[i] = strings.Trim(string(r.ID), `"`)
	}
	return strings.Join(ids, " ")
}

// oauthToken fetches an access token from a documented-mode emulator's
// token URL and checks its lifetime.
func oauthToken(t *testing.T, tokenURL, clientID, secret string, ttl time.Duration) string {
	t.Helper()
	resp, err := http.PostForm(tokenURL, url.Values{"grant_type": {"client_credentials"},
		"client_id": {clientID}, "client_secret": {secret}, "redirect_uri": {"https://shop.example/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != 200 || tok.ExpiresIn != int(ttl.Seconds()) {
		t.Fatalf("token from %s: %d %+v %v; want a token lasting %s", tokenURL, resp.StatusCode, tok, err, ttl)
	}
	return tok.AccessToken
}

// TestEmulatorInstanceErrors: a bad --instance spec, or the
// single-instance flags beside one, is refused with exit 2 and an error
// naming the instance, the key and the fix, and never the token.
func TestEmulatorInstanceErrors(t *testing.T) {
	tok := emuTokenFile(t)
	t.Setenv("QS_TEST_EMPTY", "")
	ok := "name=aa,listen=127.0.0.1:0,token-file=" + tok
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"NoName", []string{"--instance", "listen=127.0.0.1:0,token-file=" + tok}, "--instance #1: name: missing"},
		{"BadName", []string{"--instance", ok, "--instance", "name=b b,listen=127.0.0.1:0"}, "--instance #2: name: missing or not letters"},
		{"NoListen", []string{"--instance", "name=aa,token-file=" + tok}, "--instance aa: listen: missing; add listen=HOST:PORT"},
		{"BadListen", []string{"--instance", "name=aa,listen=8099,token-file=" + tok}, `--instance aa: listen "8099": want HOST:PORT`},
		{"UnknownKey", []string{"--instance", ok + ",port=1"}, `--instance #1: unknown key "port"; the keys are name, listen`},
		{"NoEquals", []string{"--instance", ok + ",documented"}, "--instance #1: part 4 has no '='"},
		{"LiteralToken", []string{"--instance", "name=aa,listen=127.0.0.1:0,token=" + emuTestToken}, "token: a literal token is visible in the process list; use token-file=FILE or token-env=VAR"},
		{"KeyTwice", []string{"--instance", ok + ",mode=spec,mode=documented"}, "--instance #1: mode given twice"},
		{"UnknownMode", []string{"--instance", ok + ",mode=real"}, `--instance aa: mode "real": must be spec or documented`},
		{"ClientIDInSpecMode", []string{"--instance", ok + ",client-id=x"}, "--instance aa: client-id: only with mode=documented"},
		{"ZeroTokenTTL", []string{"--instance", ok + ",mode=documented,token-ttl=0s"}, `--instance aa: token-ttl "0s": must be a positive duration`},
		{"NegativeSeeds", []string{"--instance", ok + ",seed-requests=-1"}, "--instance aa: seed-requests: must be 0 to 10000"},
		{"TooManySeeds", []string{"--instance", ok + ",seed-requests=10001"}, "seed-requests: must be 0 to 10000"},
		{"BothTokens", []string{"--instance", ok + ",token-env=QS_TEST_EMPTY"}, "--instance aa: token-file and token-env: give one of them"},
		{"EmptyTokenEnv", []string{"--instance", "name=aa,listen=127.0.0.1:0,token-env=QS_TEST_EMPTY"}, "--instance aa: token-env: $QS_TEST_EMPTY is empty or unset"},
		{"NoToken", []string{"--instance", "name=aa,listen=127.0.0.1:0"}, "--instance aa: no token: add token-file=FILE or token-env=VAR, or set $" + emulatorTokenEnv},
		{"MissingTokenFile", []string{"--instance", "name=aa,listen=127.0.0.1:0,token-file=" + tok + ".nope"}, "--instance aa: read token file"},
		{"NameTwice", []string{"--instance", ok, "--instance", ok}, "--instance aa: name given twice"},
		{"SamePort", []string{"--instance", "name=aa,listen=127.0.0.1:8099,token-file=" + tok,
			"--instance", "name=bb,listen=127.0.0.1:8099,token-file=" + tok}, `--instance bb: listen "127.0.0.1:8099" is aa's too`},
		{"SameState", []string{"--instance", ok + ",state=s.json", "--instance", "name=bb,listen=127.0.0.1:0,token-file=" + tok + ",state=./s.json"}, `--instance bb: state "./s.json" is aa's too`},
		{"ListenBeside", []string{"--listen", "127.0.0.1:0", "--instance", ok}, "--listen: not with --instance; put listen=… in each --instance"},
		{"TokenBeside", []string{"--token", emuTestToken, "--instance", ok}, "--token: not with --instance; put token-file=… or token-env=… in each --instance"},
		{"SeedRequestsBeside", []string{"--instance", ok, "--seed-requests", "1"}, "--seed-requests: not with --instance"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(emulatorTokenEnv, "")
			var stdout, stderr bytes.Buffer
			code := runEmulator(context.Background(), c.args, &stdout, &stderr)
			if code != exitUsage || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("exit %d stderr %q, want %d and %q", code, stderr.String(), exitUsage, c.want)
			}
			if strings.Contains(stdout.String()+stderr.String(), emuTestToken) {
				t.Errorf("the token was printed: %s", stderr.String())
			}
		})
	}
}

// TestEmulatorInstancePortInUse: when one instance cannot listen, none is
// served, the error names that instance, and the exit status is 1.
func TestEmulatorInstancePortInUse(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tok := emuTokenFile(t)
	var stdout, stderr bytes.Buffer
	code := runEmulator(context.Background(), []string{
		"--instance", "name=aa,listen=127.0.0.1:0,token-file=" + tok,
		"--instance", "name=bb,listen=" + busy.Addr().String() + ",token-file=" + tok}, &stdout, &stderr)
	if code != exitFailure || !strings.HasPrefix(stderr.String(), "quotesync-emulator bb: listen: ") || stdout.Len() != 0 {
		t.Errorf("exit %d stdout %q stderr %q, want %d, no start line and bb's listen error", code, stdout.String(), stderr.String(), exitFailure)
	}
}

// TestEmulatorInstanceBadSpecBinary: the program exits 2 on a bad
// spec.
func TestEmulatorInstanceBadSpecBinary(t *testing.T) {
	cmd := emuCommand("--instance", "name=aa,listen=127.0.0.1:0,mode=real")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitUsage || !strings.Contains(string(out), `--instance aa: mode "real"`) {
		t.Errorf("%v: %s; want exit %d naming the mode", err, out, exitUsage)
	}
}
