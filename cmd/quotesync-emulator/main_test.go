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
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
)

// emuTestToken is the token of the emulators started here; the tests check
// it is never printed.
const emuTestToken = "verb-test-token-71c2"

// emuBaseURL finds the base URL in the emulator's start line.
var emuBaseURL = regexp.MustCompile(`base URL (http://[0-9.:]+) `)

// emuLockedBuffer is a bytes.Buffer safe for one writer and one reader.
type emuLockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *emuLockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *emuLockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// emuTokenFile writes the test token (with a trailing newline) to a file.
func emuTokenFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte(emuTestToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// emuCall sends an API call with the test token and returns status,
// Location and body.
func emuCall(t *testing.T, method, url, body string) (int, string, []byte) {
	t.Helper()
	return emuDo(t, emuTestToken, method, url, body)
}

// emuDo sends an API call with token and returns status, Location and
// body.
func emuDo(t *testing.T, token, method, url, body string) (int, string, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Location"), data
}

// emuWalk runs the seed workflow against base like curl would: list,
// accept the first request, create a Draft, submit it; it returns the id of
// the accepted request.
func emuWalk(t *testing.T, base, ref string) string {
	t.Helper()
	api := base + "/integrations/repairer"
	status, _, body := emuCall(t, "GET", api+"/requests", "")
	var reqs []struct {
		ID          json.Number `json:"id"`
		ClaimNumber string      `json:"claim_number"`
	}
	if err := json.Unmarshal(body, &reqs); status != 200 || err != nil || len(reqs) == 0 {
		t.Fatalf("list: %d %s (%v)", status, body, err)
	}
	id := reqs[0].ID.String()
	status, loc, body := emuCall(t, "POST", api+"/requests/"+id, `{"referenceId":"`+ref+`","bookingDate":"2025-06-05"}`)
	if status != 201 || loc != api+"/jobs/"+ref || !strings.Contains(string(body), `"id":"`+ref+`"`) {
		t.Fatalf("accept: %d Location %q body %s", status, loc, body)
	}
	status, _, body = emuCall(t, "POST", loc+"/quotes",
		`{"type":"Estimate","status":"Draft","items":[{"id":"L1","type":"Parts","description":"Bumper","quantity":1,"price":412.3750,"total":412.38}]}`)
	if status != 201 || !strings.Contains(string(body), `"price":412.3750`) {
		t.Fatalf("create quote: %d %s", status, body)
	}
	status, _, body = emuCall(t, "PUT", loc+"/quotes/Estimate/status", `{"status":"Submitted"}`)
	if status != 200 || !strings.Contains(string(body), `"status":"Submitted"`) {
		t.Fatalf("submit: %d %s", status, body)
	}
	return id
}

// TestEmulatorInProcess runs the program's body on a free port, walks
// the workflow over HTTP and stops it by cancelling the context.
func TestEmulatorInProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr emuLockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- runEmulator(ctx, []string{"--listen", "127.0.0.1:0", "--token-file", emuTokenFile(t),
			"--seed-requests", "2", "--seed", "3"}, &stdout, &stderr)
	}()
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == ""; {
		if m := emuBaseURL.FindStringSubmatch(stdout.String()); m != nil {
			base = m[1]
			break
		}
		select {
		case code := <-done:
			t.Fatalf("emulator exited with %d: %s %s", code, stdout.String(), stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no start line after 10s; stdout %q stderr %q", stdout.String(), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	emuWalk(t, base, "RO-50001")

	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit code %d, want %d; stderr %s", code, exitOK, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("emulator did not stop within 10s of cancellation")
	}
	if out := stdout.String() + stderr.String(); strings.Contains(out, emuTestToken) {
		t.Errorf("the token was printed: %s", out)
	}
}

// TestEmulatorFlags covers --help, the token sources and flag errors.
func TestEmulatorFlags(t *testing.T) {
	tokenFile := emuTokenFile(t)
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := ln.Addr().String()
	for _, c := range []struct {
		name string
		args []string
		env  string
		code int
		want string // in stderr (in stdout for help, which was asked for)
	}{
		{"Help", []string{"--help"}, "", exitOK, "Example:"},
		{"UnknownFlag", []string{"--port", "1"}, "", exitUsage, "flag provided but not defined"},
		{"ExtraArgument", []string{"--token-file", tokenFile, "now"}, "", exitUsage, "unexpected argument"},
		{"NoToken", []string{}, "", exitUsage, "no token"},
		{"BothTokens", []string{"--token", "x", "--token-file", tokenFile}, "", exitUsage, "give one of them"},
		{"EmptyTokenFile", []string{"--token-file", empty}, "", exitUsage, "empty"},
		{"MissingTokenFile", []string{"--token-file", empty + ".nope"}, "", exitUsage, "read token file"},
		{"NegativeSeed", []string{"--token-file", tokenFile, "--seed-requests", "-1"}, "", exitUsage, "--seed-requests"},
		{"UnknownMode", []string{"--token-file", tokenFile, "--mode", "real"}, "", exitUsage, "--mode"},
		{"ZeroTokenTTL", []string{"--token-file", tokenFile, "--mode", "documented", "--token-ttl", "0s"}, "", exitUsage, "--token-ttl"},
		{"PortInUse", []string{"--listen", busy, "--token", emuTestToken}, "", exitFailure, "listen"},
		{"EnvTokenPortInUse", []string{"--listen", busy}, emuTestToken, exitFailure, "listen"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(emulatorTokenEnv, c.env)
			var stdout, stderr bytes.Buffer
			code := runEmulator(context.Background(), c.args, &stdout, &stderr)
			text := stderr.String()
			if c.name == "Help" {
				text = stdout.String()
			}
			if code != c.code || !strings.Contains(text, c.want) {
				t.Errorf("exit %d output %q, want %d and %q", code, text, c.code, c.want)
			}
			if strings.Contains(stdout.String()+stderr.String(), emuTestToken) {
				t.Errorf("the token was printed")
			}
		})
	}
}

// TestEmulatorBinary runs the program as a process, serves with --state,
// walks the workflow with plain HTTP, stops it with SIGINT, restarts it
// and finds the job again.
func TestEmulatorBinary(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	start := func() (*exec.Cmd, string) {
		cmd, stdout := emuStartBinary(t, []string{emulatorTokenEnv + "=" + emuTestToken}, os.Stderr,
			"--listen", "127.0.0.1:0", "--seed-requests", "1", "--state", state)
		line, err := bufio.NewReader(stdout).ReadString('\n')
		m := emuBaseURL.FindStringSubmatch(line)
		if err != nil || m == nil {
			t.Fatalf("start line %q: %v", line, err)
		}
		go func() { _, _ = io.Copy(io.Discard, stdout) }()
		return cmd, m[1]
	}
	stop := func(cmd *exec.Cmd) { emuStopBinary(t, cmd, syscall.SIGINT) }

	cmd, base := start()
	id := emuWalk(t, base, "RO-1")
	stop(cmd)

	cmd, base = start()
	resp, err := http.Get(base + "/_emulator/state")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Jobs []struct {
			ID, RequestID string
			Quotes        []struct{ Status string }
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil || len(st.Jobs) != 1 || st.Jobs[0].ID != "RO-1" || st.Jobs[0].RequestID != id ||
		len(st.Jobs[0].Quotes) != 1 || st.Jobs[0].Quotes[0].Status != "Submitted" {
		t.Errorf("state after restart %+v (%v): want job RO-1 of request %s with a Submitted quote", st, err, id)
	}
	status, _, body := emuCall(t, "POST", base+"/integrations/repairer/requests/"+id, `{"referenceId":"RO-1"}`)
	if status != 409 || !strings.Contains(string(body), "request_already_accepted") {
		t.Errorf("accept again after restart: %d %s, want 409 request_already_accepted", status, body)
	}
	stop(cmd)
}

// emuStartBinary starts the program as a process of its own (this test
// binary in the role of main, see TestMain) with args and env (added to
// the test's environment), its standard error to stderr, and returns it
// with its standard output. It is killed when the test ends.
func emuStartBinary(t *testing.T, env []string, stderr io.Writer, args ...string) (*exec.Cmd, io.Reader) {
	t.Helper()
	cmd := emuCommand(args...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, stdout
}

// asMainEnv puts the test binary in the role of the program: TestMain
// runs main with the arguments, signals and exit status of a real run.
const asMainEnv = "QUOTESYNC_EMULATOR_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// emuCommand is the program run as a process with args.
func emuCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	return cmd
}

// TestHelp: --help and -h print the same help, with an example and the
// exit status, on standard output and nothing on standard error; a bad
// flag exits 2 naming it.
func TestHelp(t *testing.T) {
	var outs []string
	for _, arg := range []string{"--help", "-h"} {
		var stdout, stderr bytes.Buffer
		cmd := emuCommand(arg)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || stderr.Len() != 0 {
			t.Fatalf("quotesync-emulator %s: %v, stderr %q", arg, err, stderr.String())
		}
		out := stdout.String()
		for _, want := range []string{"Usage: quotesync-emulator", "Example:\n  printf", "Exit status", "-instance"} {
			if !strings.Contains(out, want) {
				t.Errorf("quotesync-emulator %s lacks %q:\n%s", arg, want, out)
			}
		}
		outs = append(outs, out)
	}
	if outs[0] != outs[1] {
		t.Errorf("-h and --help differ")
	}
	out, err := emuCommand("--seed-requests", "-1").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitUsage || !strings.Contains(string(out), "--seed-requests") {
		t.Errorf("--seed-requests -1: %v %s; want exit %d naming the flag", err, out, exitUsage)
	}
}

// emuStopBinary sends sig and wants the binary to exit with status 0
// within 10s.
func emuStopBinary(tb testing.TB, cmd *exec.Cmd, sig os.Signal) {
	tb.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		tb.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			tb.Errorf("binary exited with %v after %v, want status 0", err, sig)
		}
	case <-time.After(10 * time.Second):
		tb.Fatalf("binary did not stop within 10s of %v", sig)
	}
}

// TestEmulatorDocumented serves --mode documented: the start line names
// the token URL, a token is fetched with the client id and the secret (and
// redirect_uri), requests are listed with string ids and claimNumber, and
// a re-sent accept is refused with 400 in plain text.
func TestEmulatorDocumented(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr emuLockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- runEmulator(ctx, []string{"--listen", "127.0.0.1:0", "--token-file", emuTokenFile(t),
			"--mode", "documented", "--client-id", "shop-9", "--token-ttl", "90s", "--seed-requests", "1", "--seed", "3"}, &stdout, &stderr)
	}()
	tokenLine := regexp.MustCompile(`token URL (http://[0-9.:]+/oauth2/token)`)
	var m []string
	for deadline := time.Now().Add(10 * time.Second); m == nil; m = tokenLine.FindStringSubmatch(stdout.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("no token URL after 10s; stdout %q stderr %q", stdout.String(), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	tokenURL := m[1]
	api := emuAPI{t: t, base: strings.TrimSuffix(tokenURL, emulator.TokenPath),
		token: oauthToken(t, tokenURL, "shop-9", emuTestToken, 90*time.Second)}
	status, body := api.call("GET", "/requests", "")
	var reqs []struct {
		ID          string `json:"id"`
		ClaimNumber string `json:"claimNumber"`
	}
	if err := json.Unmarshal([]byte(body), &reqs); status != 200 || err != nil || len(reqs) != 1 || reqs[0].ClaimNumber == "" {
		t.Fatalf("list: %d %s (%v); want one request with a string id and claimNumber", status, body, err)
	}
	for i, want := range []int{201, 400} {
		status, body = api.call("POST", "/requests/"+reqs[0].ID, `{"referenceId":"RO-9"}`)
		if status != want || (i == 1 && strings.TrimSpace(body) != "request already accepted") {
			t.Errorf("accept %d: %d %q, want %d", i+1, status, body, want)
		}
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("exit code %d; stderr %s", code, stderr.String())
	}
	if strings.Contains(stdout.String()+stderr.String(), emuTestToken) {
		t.Errorf("the client secret was printed")
	}
}
