package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestVerbHelp: every verb's --help (and -h) exits 0 and shows an example
// and the exit codes on standard output, with nothing on standard error;
// so does the top-level help.
func TestVerbHelp(t *testing.T) {
	bin := quotesyncBinary(t)
	names := make([]string, 0, len(verbs))
	for name := range verbs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range append(names, "") {
		t.Run("Verb_"+name, func(t *testing.T) {
			args := []string{"--help"}
			if name != "" {
				args = []string{name, "--help"}
			}
			r := cliRun(t, os.Environ(), bin, args...)
			out := r.Stdout
			if r.Code != exitOK {
				t.Fatalf("quotesync %s --help: %s", name, r)
			}
			if r.Stderr != "" {
				t.Errorf("quotesync %s --help wrote to standard error (help asked for goes to standard output):\n%s", name, r.Stderr)
			}
			short := append(args[:len(args)-1:len(args)-1], "-h")
			if h := cliRun(t, os.Environ(), bin, short...); h.Code != exitOK || h.Stdout != r.Stdout {
				t.Errorf("quotesync %s -h: exit %d, want the same help as --help on standard output", name, h.Code)
			}
			if !strings.Contains(out, "Example:") || !strings.Contains(out, "quotesync "+name) {
				t.Errorf("quotesync %s --help shows no example:\n%s", name, out)
			}
			if !strings.Contains(out, "Exit status") {
				t.Errorf("quotesync %s --help does not document the exit status:\n%s", name, out)
			}
		})
	}
}

// TestVersionFlag: --version is the version verb.
func TestVersionFlag(t *testing.T) {
	bin := quotesyncBinary(t)
	a, b := cliRun(t, os.Environ(), bin, "--version"), cliRun(t, os.Environ(), bin, "version")
	if a.Code != exitOK || a.Stdout != b.Stdout || !strings.HasPrefix(a.Stdout, "quotesync ") {
		t.Errorf("quotesync --version: %s; want exit 0 and the output of quotesync version (%q)", a, b.Stdout)
	}
}

// TestBadCommandLine: unknown verbs, unknown flags and stray arguments exit
// 2 with a message saying what to run instead.
func TestBadCommandLine(t *testing.T) {
	bin := quotesyncBinary(t)
	tests := []struct {
		args []string
		want string
	}{
		{nil, "Usage: quotesync"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"run", "--no-such-flag"}, "flag provided but not defined"},
		{[]string{"once", "--dry-run=maybe"}, "invalid boolean value"},
		{[]string{"check", "--config"}, "flag needs an argument"},
		{[]string{"status", "--limit", "-3"}, "--limit"},
		{[]string{"status", "extra"}, `unexpected argument "extra"`},
		{[]string{"retry"}, "request id is missing"},
		{[]string{"retry", "1", "2"}, "one request id"},
		{[]string{"version", "--json"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, "_"), func(t *testing.T) {
			r := cliRun(t, os.Environ(), bin, tt.args...)
			if r.Code != exitUsage {
				t.Errorf("exit %d, want 2:\n%s", r.Code, r)
			}
			if !strings.Contains(r.Stderr, tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, r)
			}
		})
	}
}

// TestBadConfigFile: a file that does not parse or validate stops every
// verb that reads it with exit status 2, naming the line or the key, and
// never echoing a secret written into it.
func TestBadConfigFile(t *testing.T) {
	bin := quotesyncBinary(t)
	example, err := os.ReadFile(exampleConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	const literal = "tok-LITERAL-SECRET-d00d"
	tests := []struct {
		name, from, to string
		want           []string
	}{
		{"UnknownKey", "  max_attempts: 4\n", "  max_attempts: 4\n  max_atempts: 5\n", []string{"unknown key max_atempts", "line "}},
		{"WrongType", "  concurrency: 4\n", "  concurrency: lots\n", []string{"line ", "lots"}},
		{"LiteralSecret", "    file: ${CREDENTIALS_DIRECTORY}/token\n", "    value: " + literal + "\n", []string{"remote.token.value", "must not be written in the YAML"}},
		{"NonLoopbackMetrics", `  listen: ""` + "\n", "  listen: 0.0.0.0:9464\n", []string{"metrics.listen", "not a loopback address"}},
	}
	dir := t.TempDir()
	env := append(os.Environ(), "CREDENTIALS_DIRECTORY="+dir)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(string(example), tt.from) {
				t.Fatalf("config.example.yaml has no %q to replace", tt.from)
			}
			conf := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(conf, []byte(strings.Replace(string(example), tt.from, tt.to, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, verb := range []string{"check", "once", "run", "status", "retry"} {
				args := []string{verb, "--config", conf}
				if verb == "retry" {
					args = append(args, "17")
				}
				r := cliRun(t, env, bin, args...)
				out := r.Stdout + r.Stderr
				if r.Code != exitUsage {
					t.Errorf("%s: exit %d, want 2:\n%s", verb, r.Code, r)
				}
				for _, w := range tt.want {
					if !strings.Contains(out, w) {
						t.Errorf("%s: output lacks %q:\n%s", verb, w, out)
					}
				}
				if strings.Contains(out, literal) {
					t.Errorf("%s: output echoes the literal token:\n%s", verb, out)
				}
			}
		})
	}
	t.Run("MissingFile", func(t *testing.T) {
		r := cliRun(t, env, bin, "status", "--config", filepath.Join(dir, "nope.yaml"))
		if r.Code != exitUsage || !strings.Contains(r.Stderr, "does not exist") || !strings.Contains(r.Stderr, "config.example.yaml") {
			t.Errorf("missing file: %s", r)
		}
	})
}
