package webauth

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

const (
	// MaxUsersFileBytes caps a users file: thousands of users.
	MaxUsersFileBytes = 1 << 20
	maxUserName       = 64 // bytes
	// dummyHash is checked against when there are no users (a bcrypt
	// hash of a random string, cost 10 as `quotesync passwd` writes them).
	dummyHash = "$2a$10$w8xp.a0Q6m73fUDjAK4xheoY2baiV1NcQiYFnrqIXZNNXJCQfZ1YK"
	// GoodCost is the lowest bcrypt cost of a users file's hash that is
	// not warned about: the cost `quotesync passwd` writes; `htpasswd -B`
	// writes 5 unless given -C 10.
	GoodCost = bcrypt.DefaultCost
)

// Users are the users of a users file: names and their bcrypt hashes.
type Users struct {
	mode   fs.FileMode // the file's permissions, as read
	hashes map[string][]byte
	costs  map[string]int // each user's hash's cost
	// level is the cost every check of a password spends, whoever the
	// user is: the largest of the file's hashes' costs.
	level int
	// pad holds, for each cost from the file's cheapest to level, a
	// hash of a random string. An unknown user is compared against
	// pad[level]; a user whose hash costs c < level, after their own
	// hash, against pad[c] … pad[level-1]: bcrypt's work doubles with each
	// cost, so 2^c + 2^c + … + 2^(level-1) is 2^level. The time of an
	// answer tells neither which names are users nor whose hash is cheap.
	pad map[int][]byte
	// compare is bcrypt.CompareHashAndPassword; a test counts its work.
	compare func(hash, password []byte) error
}

// LoadUsers reads the users file at path: one "name:hash" line per user
// (the htpasswd format), bcrypt hashes only ($2a$, $2b$, $2y$, as
// `htpasswd -B` and `quotesync passwd` write them); empty lines and lines
// starting with # are skipped. An empty file has no users: nobody can log in.
func LoadUsers(path string) (*Users, error) {
	data, mode, err := readSmall(path, MaxUsersFileBytes, nil)
	var u *Users
	if err == nil {
		u, err = parseUsers(data)
	}
	if err != nil {
		return nil, fmt.Errorf("read users file %s: %w", path, err)
	}
	u.mode = mode
	return u, nil
}

// parseUsers reads a users file's content. Its errors name the line and
// the user, never a hash. tg123/go-htpasswd was weighed: it accepts every
// htpasswd scheme (MD5, SHA-1, crypt), which a login here must refuse, and
// x/crypto/bcrypt checks the hashes on its own.
func parseUsers(data []byte) (*Users, error) {
	u := &Users{hashes: map[string][]byte{}, costs: map[string]int{}, compare: bcrypt.CompareHashAndPassword}
	minCost, maxCost, n := 0, 0, 0
	for line := range strings.Lines(string(data)) {
		n++
		if len(line) >= MaxUsersFileBytes && !strings.HasSuffix(line, "\n") {
			// One line as long as the file may be is not a user's: refused,
			// as bufio.Scanner's buffer of that size refused it.
			return nil, fmt.Errorf("line %d: longer than %d bytes; write users with quotesync passwd", n, MaxUsersFileBytes-1)
		}
		line = strings.TrimSpace(line)
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
			return nil, fmt.Errorf("line %d: user %s: not a bcrypt hash; set the password again with quotesync passwd (or htpasswd -B -C %d)", n, name, GoodCost)
		}
		if minCost == 0 || cost < minCost {
			minCost = cost
		}
		maxCost = max(maxCost, cost)
		if _, dup := u.hashes[name]; dup {
			return nil, fmt.Errorf("line %d: user %s is listed twice; keep one line", n, name)
		}
		u.hashes[name], u.costs[name] = []byte(hash), cost
	}
	if maxCost == 0 { // no users: nobody logs in, and a refusal costs one comparison
		u.level, u.pad = GoodCost, map[int][]byte{GoodCost: []byte(dummyHash)}
		return u, nil
	}
	u.level, u.pad = maxCost, make(map[int][]byte, maxCost-minCost+1)
	for c := minCost; c <= maxCost; c++ {
		h, err := bcrypt.GenerateFromPassword([]byte(rand.Text()), c)
		if err != nil {
			return nil, fmt.Errorf("make the hashes that equalise the time of a refusal: %w", err)
		}
		u.pad[c] = h
	}
	return u, nil
}

// Len is the number of users.
func (u *Users) Len() int { return len(u.hashes) }

// Check reports whether name is a user (known) and password is theirs
// (ok). Every check does the work of one bcrypt comparison at the file's
// highest cost, whoever the user is and whatever the password (see
// Users.pad): its time tells nothing of the name.
func (u *Users) Check(name, password string) (known, ok bool) {
	pw := []byte(password)
	if u == nil {
		_ = bcrypt.CompareHashAndPassword([]byte(dummyHash), pw)
		return false, false
	}
	hash, known := u.hashes[name]
	if !known {
		_ = u.compare(u.pad[u.level], pw)
		return false, false
	}
	ok = u.compare(hash, pw) == nil
	for c := u.costs[name]; c < u.level; c++ {
		_ = u.compare(u.pad[c], pw)
	}
	return true, ok
}

// Weak returns the users whose hash's cost is below GoodCost, sorted.
func (u *Users) Weak() []string {
	if u == nil {
		return nil
	}
	var out []string
	for name, c := range u.costs {
		if c < GoodCost {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// OpenToOthers returns the file's permissions, as read, and whether any
// group or other bit is set: the hashes stand in for the passwords, and
// whoever may write the file may add a user.
func (u *Users) OpenToOthers() (fs.FileMode, bool) {
	if u == nil {
		return 0, false
	}
	return u.mode, u.mode&0o077 != 0
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
// 64 bytes, not UTF-8, starting with # (a comment line), or holding a
// colon, a space or a control character: every name it accepts is read
// back from the line SetPassword writes.
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
	case strings.ContainsFunc(name, func(r rune) bool { return r == ':' || unicode.IsSpace(r) || !unicode.IsPrint(r) }):
		return fmt.Errorf("user name %q: no colon, space or control character, please", name)
	}
	return nil
}

// readSmall reads the file at path, of at most limit bytes, after check
// (nil: none) of its permissions: those of the file opened, not of a name
// that may change after. Its errors do not name the file: the caller does.
func readSmall(path string, limit int64, check func(fs.FileMode) error) ([]byte, fs.FileMode, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, unwrapPath(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, unwrapPath(err)
	}
	if check != nil {
		if err := check(fi.Mode().Perm()); err != nil {
			return nil, 0, err
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(data)) > limit {
		err = fmt.Errorf("larger than %d KiB: is this the right file?", limit>>10)
	}
	return data, fi.Mode().Perm(), unwrapPath(err)
}

// unwrapPath drops the path of an *os.PathError; the caller names it.
func unwrapPath(err error) error {
	if pe, ok := errors.AsType[*os.PathError](err); ok {
		return pe.Err
	}
	return err
}
