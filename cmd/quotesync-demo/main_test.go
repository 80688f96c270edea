package main

import (
	"bytes"
	"context"
	"database/sql"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe to write and read from two goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRunServeMySQL(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	code := make(chan int, 1)
	go func() { code <- run(ctx, []string{"--serve-mysql"}, &stdout, &stderr) }()

	dsnLine := regexp.MustCompile(`DSN: (\S+)`)
	var dsn string
	for deadline := time.Now().Add(10 * time.Second); dsn == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := dsnLine.FindStringSubmatch(stdout.String()); m != nil {
			dsn = m[1]
		}
	}
	if dsn == "" {
		t.Fatalf("no DSN printed; stdout %q stderr %q", stdout.String(), stderr.String())
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var jobs int
	if err := db.QueryRow("SELECT COUNT(*) FROM jobs").Scan(&jobs); err != nil {
		t.Fatalf("query the printed DSN: %v", err)
	}
	if got, want := jobs, 5; got != want {
		t.Errorf("the sample shop has %d jobs, want %d", got, want)
	}
	_ = db.Close()

	cancel()
	select {
	case got := <-code:
		if got != 0 {
			t.Errorf("exit code %d, want 0; stderr %q", got, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	if !strings.HasSuffix(stdout.String(), "stopped\n") {
		t.Errorf("stdout %q, want it to end with \"stopped\"", stdout.String())
	}
	if stderr.String() != "" {
		t.Errorf("stderr %q, want nothing (GMS logging must stay quiet)", stderr.String())
	}
}

func TestRunFlags(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		wantStderr string
	}{
		{[]string{"-nope"}, 2, "Usage: quotesync-demo"},
		{[]string{"--help"}, 0, "--timeout 60s"},
		{[]string{"extra"}, 2, `unexpected argument "extra"`},
		{[]string{"--timeout", "0s"}, 2, "--timeout: must be positive"},
	} {
		var stdout, stderr syncBuffer
		if got := run(context.Background(), tc.args, &stdout, &stderr); got != tc.code {
			t.Errorf("run %q: exit code %d, want %d", tc.args, got, tc.code)
		}
		if !strings.Contains(stderr.String(), tc.wantStderr) {
			t.Errorf("run %q: stderr %q, want it to contain %q", tc.args, stderr.String(), tc.wantStderr)
		}
		if stdout.String() != "" {
			t.Errorf("run %q: stdout %q, want nothing", tc.args, stdout.String())
		}
	}
}

// TestProductionBinaryHasNoEmbeddedServer guards the reason this command is
// a binary of its own: cmd/quotesync must not link go-mysql-server (about
// 65 MB) or anything that only it brings.
func TestProductionBinaryHasNoEmbeddedServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-e", "-deps", "-f", "{{.ImportPath}}",
		"github.com/quotesync/quotesync/cmd/quotesync").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list gave %d packages, want the dependency list of cmd/quotesync", len(deps))
	}
	for _, dep := range deps {
		for _, banned := range []string{"github.com/dolthub/", "github.com/sirupsen/logrus", "github.com/tetratelabs/wazero"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("cmd/quotesync imports %s; keep the embedded server in cmd/quotesync-demo", dep)
			}
		}
	}
}
