package sync_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.yaml.in/yaml/v3"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// exampleCommand is the notification command config.example.yaml shows
// in its comments (the indented "#   path:" and "#   args:" lines).
func exampleCommand(t *testing.T) qsync.CommandConfig {
	t.Helper()
	data, err := os.ReadFile("../config.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "  #   "); ok && (strings.HasPrefix(rest, "path: ") || strings.HasPrefix(rest, "args: ")) {
			lines = append(lines, rest)
		}
	}
	var c struct {
		Path string   `yaml:"path"`
		Args []string `yaml:"args"`
	}
	if err := yaml.Unmarshal([]byte(strings.Join(lines, "\n")), &c); err != nil || c.Path == "" || len(c.Args) == 0 {
		t.Fatalf("config.example.yaml shows no notification command to run (%v): %q", err, lines)
	}
	return qsync.CommandConfig{Path: c.Path, Args: c.Args, Timeout: 5 * time.Second}
}

// TestExampleCommandQuotesTheRequest: the notification command of
// config.example.yaml, run for request ids that hold spaces, quotes and
// shell metacharacters, is delivered and passes each id on whole as one
// argument: none of it runs as a command.
func TestExampleCommandQuotesTheRequest(t *testing.T) {
	r := newRig(t, rigOptions{})
	cmd := exampleCommand(t)
	dir := t.TempDir()
	bin, got := filepath.Join(dir, "bin"), filepath.Join(dir, "logger-args")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// A logger of our own, first in PATH: it writes its arguments, each
	// ended by a NUL, to a file.
	fake := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done >> '" + got + "'\n"
	if err := os.WriteFile(filepath.Join(bin, "logger"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Chdir(dir) // the command's working directory: where an id run as a command would touch pwned
	pwned := filepath.Join(dir, "pwned")
	ids := []string{
		"R 1",
		"R-2; touch pwned; echo",
		"R-3 $(touch pwned) `touch pwned`",
		`R-4 "quoted" 'single' * ? [a] ~ & | > pwned \ $HOME`,
	}
	o, err := qsync.NewOutbox(r.st, r.db, qsync.NotifyConfig{Command: cmd}, remote.Backoff{Initial: time.Minute, Max: time.Hour}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := r.st.RecordOnce(r.ctx, store.Event{Kind: string(qsync.EventAuthFailing), RequestID: id, Outbox: &store.Outbox{
			Kind: qsync.NoticeAuthFailing, OnceKey: id, Targets: []string{store.TargetCommand}}}); err != nil {
			t.Fatal(err)
		}
	}
	o.Work(r.ctx)

	data, err := os.ReadFile(got)
	if err != nil {
		t.Fatalf("the example command (%s %q) never ran logger: %v", cmd.Path, cmd.Args, err)
	}
	args := strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
	for _, id := range ids {
		want := qsync.NoticeAuthFailing + ": request " + id + " (" + qsync.DefaultInsurer + ")"
		if !slices.Contains(args, want) {
			t.Errorf("logger never got the argument %q; it got %q", want, args)
		}
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Errorf("%s exists: a request id ran as a command", pwned)
	}
	if n := bytes.Count(data, []byte("-t\x00quotesync\x00--\x00")); n != len(ids) {
		t.Errorf("logger ran %d times, want %d (one per notice): %q", n, len(ids), args)
	}
}
