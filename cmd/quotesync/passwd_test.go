package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/sys/unix"

	"github.com/quotesync/quotesync/cmd/internal/webauth"
)

// TestPasswdPipe: `quotesync passwd` (the real binary) with the password
// on a pipe adds a user whose hash bcrypt accepts, changes it again, keeps
// the other lines (a comment, a user htpasswd -B wrote), writes mode
// 0600, and never prints the password; a short one is refused (exit 2)
// and leaves the file as it was.
func TestPasswdPipe(t *testing.T) {
	t.Parallel()
	bin := quotesyncBinary(t)
	path := filepath.Join(t.TempDir(), "users")
	const others = "# front desk\ncarol:$2y$05$CzJRAKNoQuQXnAEhMsfHIuXVQsBC68s.N4hf5MIvknSc/8DPjrSg2\n"
	if err := os.WriteFile(path, []byte(others), 0o640); err != nil {
		t.Fatal(err)
	}
	passwd := func(user, stdin string) cliResult {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "passwd", "--file", path, user)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		r := cliResult{Stdout: out.String(), Stderr: errb.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			r.Code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(r.Stdout+r.Stderr, "pw-") {
			t.Errorf("passwd printed the password:\n%s", r)
		}
		return r
	}
	if r := passwd("frontdesk", "pw-first-1\n"); r.Code != exitOK || !strings.Contains(r.Stdout, "added frontdesk") {
		t.Fatalf("add: %s", r)
	}
	if r := passwd("frontdesk", "pw-second-2\r\n"); r.Code != exitOK || !strings.Contains(r.Stdout, "changed the password of frontdesk") {
		t.Fatalf("change: %s", r)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rest, hash, ok := strings.Cut(string(data), "frontdesk:")
	if !ok || rest != others {
		t.Fatalf("the file after two changes:\n%s", data)
	}
	if err := bcrypt.CompareHashAndPassword([]byte(strings.TrimSpace(hash)), []byte("pw-second-2")); err != nil {
		t.Errorf("the hash does not accept the new password: %v", err)
	}
	u, err := webauth.LoadUsers(path)
	if err != nil || u.Len() != 2 {
		t.Fatalf("the daemon's reading of the file: %v, %v", u, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %04o, want 0600", fi.Mode().Perm())
	}
	if r := passwd("frontdesk", "pw-7\n"); r.Code != exitUsage || !strings.Contains(r.Stderr, "at least 8") {
		t.Errorf("a short password: %s", r)
	}
	if r := passwd("front:desk", "pw-long-enough\n"); r.Code != exitUsage || !strings.Contains(r.Stderr, "no colon") {
		t.Errorf("a name with a colon: %s", r)
	}
	if r := passwd("#admin", "pw-long-enough\n"); r.Code != exitUsage || !strings.Contains(r.Stderr, "starts a comment in the users file") {
		t.Errorf("a name that starts with #: %s", r)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
		t.Error("a refused password changed the file")
	}
}

// TestPasswdTerminal: on a terminal (a pseudo-terminal here) passwd asks
// twice and the terminal does not echo what is typed; two different
// entries write nothing.
func TestPasswdTerminal(t *testing.T) {
	t.Parallel()
	bin := quotesyncBinary(t)
	path := filepath.Join(t.TempDir(), "users")
	run := func(first, second string) (cliResult, string) {
		t.Helper()
		master, slave := openPTY(t)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "passwd", "--file", path, "frontdesk")
		var out, errb cliBuffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		echoed := make(chan string, 1)
		go func() { b, _ := io.ReadAll(master); echoed <- string(b) }()
		for i, entry := range []string{first, second} {
			prompt := []string{"New password for frontdesk: ", "Again: "}[i]
			// Type only once the prompt is out and echo is off.
			if !waitFor(10*time.Second, func() bool { return strings.Contains(errb.String(), prompt) && !echoOn(t, slave) }) {
				t.Fatalf("no prompt %q with echo off; stderr %q", prompt, errb.String())
			}
			if _, err := master.WriteString(entry + "\n"); err != nil {
				t.Fatal(err)
			}
		}
		err := cmd.Wait()
		_ = slave.Close()
		r := cliResult{Stdout: out.String(), Stderr: errb.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			r.Code = ee.ExitCode()
		}
		_ = master.Close()
		return r, <-echoed
	}
	r, echoed := run("pw-typed-here-1", "pw-typed-here-1")
	if r.Code != exitOK {
		t.Fatalf("passwd on a terminal: %s", r)
	}
	if strings.Contains(echoed+r.Stdout+r.Stderr, "pw-typed") {
		t.Errorf("the password was echoed or printed: terminal %q\n%s", echoed, r)
	}
	u, err := webauth.LoadUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := u.Check("frontdesk", "pw-typed-here-1"); !ok {
		t.Error("the typed password does not log in")
	}
	before, _ := os.ReadFile(path)
	r, _ = run("pw-typed-here-2", "pw-typed-here-3")
	if r.Code != exitUsage || !strings.Contains(r.Stderr, "differ") {
		t.Errorf("two different entries: %s", r)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("two different entries changed the file")
	}
}

// openPTY opens a pseudo-terminal pair.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("name the pseudo-terminal: %v", err)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the pseudo-terminal's end: %v", err)
	}
	t.Cleanup(func() { _ = master.Close(); _ = slave.Close() })
	return master, slave
}

// echoOn reports whether the terminal echoes what is typed.
func echoOn(t *testing.T, tty *os.File) bool {
	tio, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatalf("read the terminal's settings: %v", err)
	}
	return tio.Lflag&unix.ECHO != 0
}
