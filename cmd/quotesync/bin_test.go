package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	gosync "sync"
	"syscall"
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
	if out := os.Getenv(maxRSSEnv); out != "" {
		os.Exit(runMeasured(out, os.Args[1:]))
	}
	code := m.Run()
	stopModeServers()
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

// maxRSSEnv puts the test binary in the role of runMeasured: it runs its
// arguments as a command and writes the command's peak RSS into the file
// the variable names.
const maxRSSEnv = "QUOTESYNC_TEST_MAXRSS_FILE"

// runMeasured runs args and writes its peak resident set (KiB) to out. It
// exists because a child's ru_maxrss starts at its parent's high-water
// mark: Go starts children with vfork, and exec carries the shared
// memory's peak over. The test process grows under -race while other
// tests run; with this fresh process in between, the figure is the
// command's own peak or this process's start-up peak (about 35 MiB under
// -race), whichever is larger, and no longer depends on the other tests.
func runMeasured(out string, args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	if err := os.WriteFile(out, []byte(strconv.FormatInt(rss, 10)), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	return cmd.ProcessState.ExitCode()
}

// measured returns a command that runs bin with args through runMeasured,
// and a function that reads the peak RSS (KiB) once it has run.
func measured(ctx context.Context, tb testing.TB, bin string, args ...string) (*exec.Cmd, func() int64) {
	tb.Helper()
	out := filepath.Join(tb.TempDir(), "maxrss")
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{bin}, args...)...)
	cmd.Env = append(os.Environ(), maxRSSEnv+"="+out)
	return cmd, func() int64 {
		b, err := os.ReadFile(out)
		if err != nil {
			tb.Fatalf("read the peak RSS of %s: %v", bin, err)
		}
		n, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			tb.Fatalf("read the peak RSS of %s: %v", bin, err)
		}
		return n
	}
}
