package webauth

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

// MaxUsersFileBytes caps a users file: a line is about 70 bytes, so this
// holds thousands of users.
const MaxUsersFileBytes = 1 << 20

// maxUserName caps a user name, in bytes.
const maxUserName = 64

// dummyHash is checked against when there are no users (a bcrypt hash of
// a random string, cost 10 as `quotesync passwd` writes them).
const dummyHash = "$2a$10$w8xp.a0Q6m73fUDjAK4xheoY2baiV1NcQiYFnrqIXZNNXJCQfZ1YK"

// Users are the users of a users file: names and their bcrypt hashes.
type Users struct {
	path   string
	hashes map[string][]byte
	// dummy is checked against when the user is unknown, so that an
	// unknown user takes as long to refuse as a wrong password: a hash
	// of a random string, of the largest cost of the file's hashes
	// (`htpasswd -B` writes cost 5, `quotesync passwd` 10).
	dummy []byte
}

// LoadUsers reads the users file at path: one "name:hash" line per user
// (the htpasswd format), bcrypt hashes only ($2a$, $2b$, $2y$, as
// `htpasswd -B` and `quotesync passwd` write them); empty lines and lines
// starting with # are skipped. An empty file has no users: nobody can
// log in.
func LoadUsers(path string) (*Users, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read users file %s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxUsersFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read users file %s: %w", path, unwrapPath(err))
	}
	if len(data) > MaxUsersFileBytes {
		return nil, fmt.Errorf("read users file %s: larger than %d KiB: is this the right file?", path, MaxUsersFileBytes>>10)
	}
	u, err := parseUsers(data)
	if err != nil {
		return nil, fmt.Errorf("read users file %s: %w", path, err)
	}
	u.path = path
	return u, nil
}

// parseUsers reads a users file's content. Its errors name the line and
// the user, never a hash. tg123/go-htpasswd was weighed: it accepts every
// htpasswd scheme (MD5, SHA-1, crypt), which a login here must refuse, and
// x/crypto/bcrypt checks the hashes on its own.
func parseUsers(data []byte) (*Users, error) {
	u := &Users{hashes: map[string][]byte{}, dummy: []byte(dummyHash)}
	maxCost := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), MaxUsersFileBytes)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, hash, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: not name:hash; write users with quotesync passwd", n)
		}
		if err := CheckUserName(name); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		cost, err := bcrypt.Cost([]byte(hash))
		if err != nil {
			return nil, fmt.Errorf("line %d: user %s: not a bcrypt hash; set the password again with quotesync passwd (or htpasswd -B)", n, name)
		}
		maxCost = max(maxCost, cost)
		if _, dup := u.hashes[name]; dup {
			return nil, fmt.Errorf("line %d: user %s is listed twice; keep one line", n, name)
		}
		u.hashes[name] = []byte(hash)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if maxCost > 0 {
		dummy, err := bcrypt.GenerateFromPassword([]byte(rand.Text()), maxCost)
		if err != nil {
			return nil, fmt.Errorf("make the hash that unknown users are checked against: %w", err)
		}
		u.dummy = dummy
	}
	return u, nil
}

// Path is the file the users were read from.
func (u *Users) Path() string { return u.path }

// Len is the number of users.
func (u *Users) Len() int { return len(u.hashes) }

// Check reports whether name is a user (known) and password is theirs
// (ok). An unknown name costs a bcrypt comparison as long as the
// costliest user's.
func (u *Users) Check(name, password string) (known, ok bool) {
	hash, dummy := []byte(nil), []byte(dummyHash)
	if u != nil {
		hash, known = u.hashes[name]
		dummy = u.dummy
	}
	if !known {
		_ = bcrypt.CompareHashAndPassword(dummy, []byte(password))
		return false, false
	}
	return true, bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil
}

// hash is name's stored hash, nil for an unknown user. Sessions are
// signed over it, so a new password ends the old sessions.
func (u *Users) hash(name string) []byte {
	if u == nil {
		return nil
	}
	return u.hashes[name]
}

// CheckUserName says what is wrong with a user name: empty, longer than
// 64 bytes, not UTF-8, starting with # (a comment line of the users
// file, which parseUsers skips), or holding a colon, a space or a
// control character (the file's separators, and what a log or a page
// could not show plainly): every name it accepts is read back from the
// line SetPassword writes.
func CheckUserName(name string) error {
	switch {
	case name == "":
		return errors.New("the user name is empty")
	case len(name) > maxUserName:
		return fmt.Errorf("user name of %d bytes: at most %d", len(name), maxUserName)
	case !utf8.ValidString(name):
		return errors.New("the user name is not UTF-8 text")
	case strings.HasPrefix(name, "#"):
		return fmt.Errorf("user name %q: a # at its start starts a comment in the users file, where the user could never log in; choose a name without it", name)
	}
	for _, r := range name {
		if r == ':' || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return fmt.Errorf("user name %q: no colon, space or control character, please", name)
		}
	}
	return nil
}

// unwrapPath drops the path of an *os.PathError; the caller names it.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
