package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	gosync "sync"
	"testing"
)

// The tests that run the real binary share one build: bin/quotesync from
// `make test` (QUOTESYNC_BIN), or one built here once per test process.
var (
	binOnce gosync.Once
	binPath string
	binErr  error
	binDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// quotesyncBinary returns the path of a quotesync binary built from this
// tree.
func quotesyncBinary(tb testing.TB) string {
	tb.Helper()
	binOnce.Do(func() {
		if p := os.Getenv("QUOTESYNC_BIN"); p != "" {
			binPath = p
			if _, err := os.Stat(p); err != nil {
				binErr = err
			}
			return
		}
		binDir, binErr = os.MkdirTemp("", "quotesync-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "quotesync")
		goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
		out, err := exec.Command(goTool, "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = &buildError{err: err, out: string(out)}
		}
	})
	if binErr != nil {
		tb.Fatalf("build the quotesync binary: %v", binErr)
	}
	return binPath
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }
