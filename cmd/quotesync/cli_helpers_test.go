package main

// Helpers of the tests that drive the real binary's verbs (check, status,
// retry, run): a sample-shop database, the emulator behind httptest, a
// credentials directory and a config file made from config.example.yaml
// with only the addresses, database and credentials changed.

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/config"

	"go.yaml.in/yaml/v3"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// cliToken is the emulator's token; distinctive, so that the tests can
// prove it never appears in any output.
const cliToken = "tok-SECRET-cli-4e7a91"

// cliEnv is one isolated world for the binary's verbs.
type cliEnv struct {
	t     *testing.T
	bin   string
	DB    *shopdbtest.Database
	Emu   *emulator.Emulator
	Srv   *httptest.Server
	Creds string // the credentials directory ($CREDENTIALS_DIRECTORY)
	Conf  string // the config file
}

// newCLIEnv builds a world; edit (optional) changes the config before it
// is written.
func newCLIEnv(t *testing.T, edit func(fc *config.File)) *cliEnv {
	t.Helper()
	return newCLIEnvOn(t, nil, edit)
}

// newCLIEnvOn is newCLIEnv on a server of the tests' own (nil: the
// shared test server).
func newCLIEnvOn(t *testing.T, srv *shopdbtest.Server, edit func(fc *config.File)) *cliEnv {
	t.Helper()
	e := &cliEnv{t: t, bin: quotesyncBinary(t)}
	if srv != nil {
		e.DB = srv.NewSampleShop(t)
	} else {
		e.DB = shopdbtest.NewSampleShop(t)
	}
	e.Emu, e.Srv = mustEmulator(t, emulator.Options{Token: cliToken, Seed: 7})
	dir := t.TempDir()
	e.Creds = filepath.Join(dir, "credentials")
	if err := os.Mkdir(e.Creds, 0o700); err != nil {
		t.Fatal(err)
	}
	e.writeSecret("token", cliToken)
	e.writeSecret("db-password", e.DB.Config().Password)
	e.Conf = filepath.Join(dir, "config.yaml")
	e.writeConfig(edit)
	return e
}

// writeSecret writes one credential file.
func (e *cliEnv) writeSecret(name, value string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.Creds, name), []byte(value+"\n"), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// writeConfig writes config.example.yaml pointed at this world, with
// quick timings for tests, then edit's changes.
func (e *cliEnv) writeConfig(edit func(fc *config.File)) {
	e.t.Helper()
	fc := loadExample(e.t)
	dbc := e.DB.Config()
	fc.Remote.BaseURL = e.Srv.URL
	fc.Shop.Addr, fc.Shop.User, fc.Shop.Database = dbc.Addr, dbc.User, dbc.Database
	fc.Shop.LockHeartbeat, fc.Shop.LockSessionTimeout = 200*time.Millisecond, 2*time.Second
	fc.Remote.BackoffInitial, fc.Remote.BackoffMax = 5*time.Millisecond, 50*time.Millisecond
	fc.Sync.TimeZone = "UTC"
	if edit != nil {
		edit(fc)
	}
	data, err := yaml.Marshal(fc)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(e.Conf, data, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// environ is the binary's environment: ours plus the credentials directory.
func (e *cliEnv) environ() []string {
	return append(os.Environ(), "CREDENTIALS_DIRECTORY="+e.Creds)
}

// secrets are the strings no output may contain.
func (e *cliEnv) secrets() []string {
	s := []string{cliToken}
	if p := e.DB.Config().Password; len(p) >= 8 && p != e.DB.Config().User {
		s = append(s, p)
	}
	return s
}

// run runs the binary to completion with the world's environment.
func (e *cliEnv) run(args ...string) cliResult {
	e.t.Helper()
	r := cliRun(e.t, e.environ(), e.bin, args...)
	for _, s := range e.secrets() {
		if strings.Contains(r.Stdout+r.Stderr, s) {
			e.t.Errorf("quotesync %s printed a secret:\n%s", strings.Join(args, " "), r)
		}
	}
	return r
}

// cliResult is a finished run of the binary.
type cliResult struct {
	Code           int
	Stdout, Stderr string
}

func (r cliResult) String() string {
	return "exit " + strconv.Itoa(r.Code) + "\n--- stdout\n" + r.Stdout + "--- stderr\n" + r.Stderr
}

// cliRun runs bin with args and env, bounded to a minute.
func cliRun(t *testing.T, env []string, bin string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run %s %v: %v", bin, args, err)
	}
	return cliResult{Code: code, Stdout: out.String(), Stderr: errb.String()}
}

// cliBuffer is a bytes.Buffer safe for a writing process and a reader.
type cliBuffer struct {
	mu  gosync.Mutex
	buf bytes.Buffer
}

func (b *cliBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *cliBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor polls cond every 20ms until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}

// exampleConfigPath is the top-level config.example.yaml.
const exampleConfigPath = "../../config.example.yaml"

// loadExample parses config.example.yaml.
func loadExample(t *testing.T) *config.File {
	t.Helper()
	fc, err := config.Load(exampleConfigPath)
	if err != nil {
		t.Fatalf("config.example.yaml: %v", err)
	}
	return fc
}

// bgProc is a quotesync process a test started in the background. The
// test's end kills it if it still runs, then calls the atEnd functions.
type bgProc struct {
	cmd    *exec.Cmd
	exited chan error // cmd.Wait's result, received once by wait
	done   bool
	err    error
}

// startBackground starts cmd; atEnd runs at the test's end, after the
// process has ended (to check or log its output).
func startBackground(t *testing.T, cmd *exec.Cmd, atEnd func()) *bgProc {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &bgProc{cmd: cmd, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if !p.done {
			_ = cmd.Process.Kill()
			p.err, p.done = <-p.exited, true
		}
		if atEnd != nil {
			atEnd()
		}
	})
	return p
}

// wait waits at most d for the process to end: ended is false when it
// still runs; err is its exit error.
func (p *bgProc) wait(d time.Duration) (ended bool, err error) {
	if p.done {
		return true, p.err
	}
	select {
	case p.err = <-p.exited:
		p.done = true
		return true, p.err
	case <-time.After(d):
		return false, nil
	}
}
