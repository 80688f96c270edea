package webauth

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/google/renameio/v2"
	"golang.org/x/crypto/bcrypt"
)

// Bounds of a password, in bytes: bcrypt reads at most 72.
const (
	MinPasswordBytes = 8
	MaxPasswordBytes = 72
)

// CheckPassword says what is wrong with a new password.
func CheckPassword(password []byte) error {
	switch {
	case len(password) < MinPasswordBytes:
		return fmt.Errorf("the password is %d bytes long; use at least %d", len(password), MinPasswordBytes)
	case len(password) > MaxPasswordBytes:
		return fmt.Errorf("the password has %d bytes; bcrypt reads at most %d", len(password), MaxPasswordBytes)
	case bytes.ContainsAny(password, "\r\n"):
		return errors.New("the password holds a line break")
	}
	return nil
}

// SetPassword adds user with password to the users file at path, or
// changes their password, keeping every other line as it is, and reports
// whether the user is new. A reader sees the old file or the new, never
// half of one (writeAtomic).
func SetPassword(path, user string, password []byte) (added bool, err error) {
	if err := CheckUserName(user); err != nil {
		return false, err
	}
	if err := CheckPassword(password); err != nil {
		return false, err
	}
	hash, err := bcrypt.GenerateFromPassword(password, bcrypt.DefaultCost)
	if err != nil {
		return false, fmt.Errorf("hash the password: %w", err)
	}
	old, _, err := readSmall(path, MaxUsersFileBytes, nil)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("read users file %s: %w", path, err)
	}
	content, added := withUser(old, user, string(hash))
	if err := writeAtomic(path, content); err != nil {
		return false, fmt.Errorf("write users file %s: %w", path, err)
	}
	return added, nil
}

// withUser is a users file's content with user's line set to hash: the
// line replaced where it was, or added at the end.
func withUser(old []byte, user, hash string) ([]byte, bool) {
	line := user + ":" + hash
	var out []string
	added := true
	for l := range strings.Lines(string(old)) {
		if name, _, ok := strings.Cut(strings.TrimSpace(l), ":"); ok && name == user {
			if added {
				out = append(out, line+"\n")
			}
			added = false // a second line of the same user is dropped
			continue
		}
		if !strings.HasSuffix(l, "\n") {
			l += "\n"
		}
		out = append(out, l)
	}
	if added {
		out = append(out, line+"\n")
	}
	return []byte(strings.Join(out, "")), added
}

// writeAtomic replaces path by content (renameio: a temporary file in the
// same directory, synced, renamed), mode 0600 and the old file's owner.
func writeAtomic(path string, content []byte) error {
	t, err := renameio.NewPendingFile(path, renameio.WithTempDir(filepath.Dir(path)), renameio.WithStaticPermissions(0o600))
	if err != nil {
		return unwrapPath(err)
	}
	defer func() { _ = t.Cleanup() }()
	if fi, err := os.Stat(path); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && (int(st.Uid) != os.Geteuid() || int(st.Gid) != os.Getegid()) {
			if err := t.Chown(int(st.Uid), int(st.Gid)); err != nil {
				return fmt.Errorf("keep the file's owner (uid %d, gid %d; run as root or as that user): %w", st.Uid, st.Gid, unwrapPath(err))
			}
		}
	}
	if _, err := t.Write(content); err != nil {
		return err
	}
	if err := t.CloseAtomicallyReplace(); err != nil {
		return unwrapPath(err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil { // the rename itself on disk
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
