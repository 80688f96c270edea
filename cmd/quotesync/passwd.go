package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/webauth"
)

const passwdHelp = `Usage: quotesync passwd [--file FILE] USER

Adds USER to the users file of the status page's login (metrics.users_file),
or sets a new password for USER. The password is asked for twice, without
echo, when standard input is a terminal; otherwise (a script) the first
line of standard input is the password, so keep it out of the command line:

  printf '%s\n' "$PASSWORD" | quotesync passwd --file /etc/quotesync/users frontdesk

A password has 8 to 72 bytes; a user name has no colon, space or control
character and does not start with # (a comment in the file). The file
gets one "USER:bcrypt-hash" line per user, of bcrypt cost 10: the format
of 'htpasswd -B -C 10', which works too ('htpasswd -B' alone writes cost
5, which the daemon and check warn about). The other lines stay as they
are. The file is written
whole beside the old one and renamed over it, with mode 0600 and the old
file's owner: the user quotesync runs as must own it
(once: install -o quotesync -g quotesync -m 0600 /dev/null FILE).

The running daemon reads the file again on 'systemctl reload quotesync'
(SIGHUP); a new password ends that user's sessions.

Exit status: 0 written, 1 the file could not be read or written, 2 bad
flags, user name or password (or the two entries differ).

Example:
  sudo quotesync passwd frontdesk

Flags:
`

// maxPasswordLine caps the line read from a non-terminal standard input.
const maxPasswordLine = 1 << 10

func runPasswd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := verbFlags("passwd", passwdHelp)
	file := fs.String("file", config.DefaultUsersFile, "the users `file` (metrics.users_file)")
	user, code, ok := parseOneArg(fs, "the user name", args, stdout, stderr)
	if !ok {
		return code
	}
	if err := webauth.CheckUserName(user); err != nil {
		return fail(stderr, exitUsage, "passwd", err)
	}
	password, err := readNewPassword(os.Stdin, stderr, user)
	if err != nil {
		return fail(stderr, exitUsage, "passwd", err)
	}
	if err := webauth.CheckPassword(password); err != nil {
		return fail(stderr, exitUsage, "passwd", err)
	}
	added, err := webauth.SetPassword(*file, user, password)
	clear(password)
	if err != nil {
		return fail(stderr, exitFailure, "passwd", err)
	}
	what := "changed the password of"
	if added {
		what = "added"
	}
	fmt.Fprintf(stdout, "%s %s in %s; 'systemctl reload quotesync' makes the running daemon read it\n", what, user, *file)
	return exitOK
}

// readNewPassword reads the password: typed twice without echo on a
// terminal (prompts on stderr), else the first line of in.
func readNewPassword(in *os.File, stderr io.Writer, user string) ([]byte, error) {
	fd := int(in.Fd())
	if !term.IsTerminal(fd) {
		line, err := bufio.NewReaderSize(io.LimitReader(in, maxPasswordLine), maxPasswordLine).ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read the password from standard input: %w", err)
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			return nil, errors.New("no password on standard input; pipe one line, or run it on a terminal")
		}
		return line, nil
	}
	fmt.Fprintf(stderr, "New password for %s: ", user)
	first, err := term.ReadPassword(fd)
	fmt.Fprintln(stderr)
	if err != nil {
		return nil, fmt.Errorf("read the password: %w", err)
	}
	fmt.Fprint(stderr, "Again: ")
	second, err := term.ReadPassword(fd)
	fmt.Fprintln(stderr)
	if err != nil {
		return nil, fmt.Errorf("read the password: %w", err)
	}
	if !bytes.Equal(first, second) {
		return nil, errors.New("the two entries differ; nothing was written")
	}
	clear(second)
	return first, nil
}
