package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// envJournalStream is the variable systemd sets, to "DEVICE:INODE" of the
// stream, when a service's standard output or error is connected to the
// journal.
const envJournalStream = "JOURNAL_STREAM"

// journalLine is one line as journald stores it from a stream with
// SyslogLevelPrefix= on: the priority of a leading "<N>" (6, info, when
// there is none) and the rest as MESSAGE.
type journalLine struct {
	Priority int
	Prefixed bool
	Message  string
}

// readAsJournald splits a stream's bytes into lines and reads each one's
// priority prefix the way journald does: '<', one digit 0-7, '>'.
func readAsJournald(data string) []journalLine {
	var out []journalLine
	for _, l := range strings.Split(strings.TrimRight(data, "\n"), "\n") {
		jl := journalLine{Priority: prioInfo, Message: l}
		if len(l) >= 3 && l[0] == '<' && l[1] >= '0' && l[1] <= '7' && l[2] == '>' {
			jl = journalLine{Priority: int(l[1] - '0'), Prefixed: true, Message: l[3:]}
		}
		out = append(out, jl)
	}
	return out
}

// fileStream returns "DEVICE:INODE" of path, as systemd writes it into
// $JOURNAL_STREAM.
func fileStream(t *testing.T, path string) string {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
}

// runLogsTo runs the binary with its standard error (where `once` logs)
// written to a file, JOURNAL_STREAM set to stream (the file's own, or
// another's), and returns what it wrote there.
func runLogsTo(t *testing.T, e *cliEnv, stream func(logPath string) string, args ...string) string {
	t.Helper()
	r := runStreamTo(t, e.bin, e.environ(), stream, args...)
	if r.Code != exitOK {
		t.Fatalf("quotesync %v: %s", args, r)
	}
	return r.Stderr
}

// runStreamTo runs bin to completion with its standard error written to a
// file and JOURNAL_STREAM set to stream (the file's own, or another's).
func runStreamTo(t *testing.T, bin string, env []string, stream func(stderrPath string) string, args ...string) cliResult {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "stderr")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(env, envJournalStream+"="+stream(logPath))
	cmd.Stderr = f
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("quotesync %v: %v", args, err)
	}
	return cliResult{Code: cmd.ProcessState.ExitCode(), Stdout: string(out), Stderr: MustRead(t, logPath)}
}

// MustRead returns the content of path.
func MustRead(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// TestJournalPriorities runs the real binary with its log stream being
// "the journal" (JOURNAL_STREAM names the file it writes to) and reads the
// lines as journald would: every line carries the priority of its level
// (a held job's warning <4>, an accept <6>) and the
// rest of the line is zap's JSON with its fields. With JOURNAL_STREAM
// naming another stream, the lines are plain JSON.
func TestJournalPriorities(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, nil)
	e.Emu.AddRequests(emulator.SeedRequest{ClaimNumber: sampleshop.ClaimBadLine}, emulator.SeedRequest{ClaimNumber: sampleshop.ClaimDraft})

	out := runLogsTo(t, e, func(p string) string { return fileStream(t, p) },
		"once", "--config", e.Conf, "--log-level", "debug")
	want := map[string]int{"job held": prioWarning, "request accepted": prioInfo}
	seen := map[string]bool{}
	byPrio := map[int]int{}
	for i, jl := range readAsJournald(out) {
		byPrio[jl.Priority]++
		if !jl.Prefixed {
			t.Errorf("line %d has no priority prefix: %q", i+1, jl.Message)
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(jl.Message), &m); err != nil {
			t.Errorf("line %d: MESSAGE is not zap's JSON: %v: %q", i+1, err, jl.Message)
			continue
		}
		var lvl zapcore.Level
		if err := lvl.UnmarshalText([]byte(fmt.Sprint(m["level"]))); err != nil {
			t.Errorf("line %d: level %v: %v", i+1, m["level"], err)
		} else if got, want := jl.Priority, syslogPriority(lvl); got != want {
			t.Errorf("line %d (%s %q): priority <%d>, want <%d>", i+1, lvl, m["msg"], got, want)
		}
		msg, _ := m["msg"].(string)
		if p, ok := want[msg]; ok && !seen[msg] {
			seen[msg] = true
			if jl.Priority != p {
				t.Errorf("%q logged at <%d>, want <%d>", msg, jl.Priority, p)
			}
			if msg == "job held" && m["claim"] != sampleshop.ClaimBadLine {
				t.Errorf("job held line lost its fields: %v", m)
			}
		}
	}
	for msg := range want {
		if !seen[msg] {
			t.Errorf("no %q line in:\n%s", msg, out)
		}
	}
	if byPrio[prioInfo] == 0 || byPrio[prioWarning] == 0 {
		t.Errorf("lines by priority %v: want info and warning lines", byPrio)
	}

	t.Run("OtherStream", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "journal")
		if err := os.WriteFile(other, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		out := runLogsTo(t, e, func(string) string { return fileStream(t, other) },
			"once", "--config", e.Conf, "--log-level", "debug")
		lines := readAsJournald(out)
		if len(lines) == 0 || lines[0].Message == "" {
			t.Fatalf("no log lines")
		}
		for i, jl := range lines {
			if jl.Prefixed || !json.Valid([]byte(jl.Message)) {
				t.Errorf("line %d is not plain JSON: %q", i+1, jl.Message)
			}
		}
	})
}

// TestJournalStartError: under the journal, why the daemon stops before
// it runs (a bad flag, a configuration it cannot use, a database it cannot
// reach) is filed at err: every line it writes to standard error carries
// "<3>", so `journalctl -p err -u quotesync` shows it. Under another
// stream the same lines are plain.
func TestJournalStartError(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, nil)
	badKey := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(badKey, append([]byte(MustRead(t, e.Conf)), "no_such_key: 1\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	noDB := filepath.Join(t.TempDir(), "config.yaml")
	e.writeConfig(func(fc *config.File) { fc.Shop.Addr = "127.0.0.1:1" })
	if err := os.Rename(e.Conf, noDB); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string // in the first line
	}{
		{"BadFlag", []string{"run", "--no-such-flag"}, exitUsage, "no-such-flag"},
		{"BadConfig", []string{"run", "--config", badKey}, exitUsage, "no_such_key"},
		{"NoDatabase", []string{"run", "--config", noDB}, exitFailure, "127.0.0.1:1"},
		{"UnknownVerb", []string{"runn"}, exitUsage, "runn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runStreamTo(t, e.bin, e.environ(), func(p string) string { return fileStream(t, p) }, tt.args...)
			if r.Code != tt.code {
				t.Fatalf("exit %d, want %d:\n%s", r.Code, tt.code, r)
			}
			lines := readAsJournald(r.Stderr)
			if !strings.Contains(lines[0].Message, tt.want) {
				t.Errorf("first line %q does not name %q", lines[0].Message, tt.want)
			}
			for i, jl := range lines {
				if !jl.Prefixed || jl.Priority != prioErr {
					t.Errorf("line %d at <%d> (prefixed %v), want <%d>: %q", i+1, jl.Priority, jl.Prefixed, prioErr, jl.Message)
				}
				if strings.HasPrefix(jl.Message, "<") {
					t.Errorf("line %d has two prefixes: %q", i+1, jl.Message)
				}
			}

			other := filepath.Join(t.TempDir(), "journal")
			if err := os.WriteFile(other, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			r = runStreamTo(t, e.bin, e.environ(), func(string) string { return fileStream(t, other) }, tt.args...)
			for i, jl := range readAsJournald(r.Stderr) {
				if jl.Prefixed {
					t.Errorf("under another stream, line %d has a prefix: <%d>%s", i+1, jl.Priority, jl.Message)
				}
			}
		})
	}
}

func TestSyslogPriority(t *testing.T) {
	for _, tt := range []struct {
		l    zapcore.Level
		want int
	}{
		{zapcore.DebugLevel, 7}, {zapcore.InfoLevel, 6}, {zapcore.WarnLevel, 4},
		{zapcore.ErrorLevel, 3}, {zapcore.DPanicLevel, 2}, {zapcore.FatalLevel, 2},
	} {
		if got := syslogPriority(tt.l); got != tt.want {
			t.Errorf("syslogPriority(%s) = %d, want %d", tt.l, got, tt.want)
		}
	}
}

// TestToJournal: standard error is the journal's stream when
// $JOURNAL_STREAM names its device and inode, and only then; a malformed
// value names no stream, and a writer that is not standard output or
// error never is one.
func TestToJournal(t *testing.T) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(os.Stderr.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	stderr := fmt.Sprintf("%d:%d", st.Dev, st.Ino)
	other := filepath.Join(t.TempDir(), "other")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(other)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tt := range []struct {
		name, stream string
		w            io.Writer
		want         bool
	}{
		{"Stderr", stderr, os.Stderr, true},
		{"Unset", "", os.Stderr, false},
		{"NoColon", "12", os.Stderr, false},
		{"BadDevice", "a:1", os.Stderr, false},
		{"BadInode", "1:b", os.Stderr, false},
		{"OtherStream", fileStream(t, other), os.Stderr, false},
		{"HugeNumbers", strconv.Itoa(1<<40) + ":7", os.Stderr, false},
		{"NotStdio", fileStream(t, other), f, false},
		{"Buffer", stderr, new(bytes.Buffer), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(envJournalStream, tt.stream)
			if got := toJournal(tt.w); got != tt.want {
				t.Errorf("toJournal with %s=%q = %v, want %v", envJournalStream, tt.stream, got, tt.want)
			}
		})
	}
}

// TestJournalOutsideTextKeepsErr: text that did not come from the logger
// cannot choose its priority. An error that quotes a value holding
// "\n<0>" (here a job number, as the shop or a paste gives it) keeps its
// newline (termtext.Lines), but the line it starts is filed at err like
// the rest of the error: journald broadcasts an emerg line to every
// terminal. The "<0>" stays in the message.
func TestJournalOutsideTextKeepsErr(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, nil)
	r := runStreamTo(t, e.bin, e.environ(), func(p string) string { return fileStream(t, p) },
		"preview", "--config", e.Conf, "RO-NOPE\n<0>EMERG")
	if r.Code != exitFailure {
		t.Fatalf("exit %d, want %d:\n%s", r.Code, exitFailure, r)
	}
	lines := readAsJournald(r.Stderr)
	if len(lines) < 2 || !strings.HasPrefix(lines[1].Message, "<0>EMERG") {
		t.Errorf("the value's second line is not a line of its own with its text kept: %+v", lines)
	}
	for i, jl := range lines {
		if !jl.Prefixed || jl.Priority != prioErr {
			t.Errorf("line %d at <%d> (prefixed %v), want <%d>: %q", i+1, jl.Priority, jl.Prefixed, prioErr, jl.Message)
		}
	}
}
