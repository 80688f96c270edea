package webauth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// TestLoadUsers reads the hashes htpasswd -B ($2y$) and Go ($2a$) write,
// skips comments and empty lines, and refuses what is not a users file,
// naming the line and the user but never a hash.
func TestLoadUsers(t *testing.T) {
	t.Parallel()
	// htpasswd -nbB carol carol-password-1 (apache2-utils 2.4.71), cost 5.
	const carol = "carol:$2y$05$CzJRAKNoQuQXnAEhMsfHIuXVQsBC68s.N4hf5MIvknSc/8DPjrSg2"
	h, err := bcrypt.GenerateFromPassword([]byte("dave-password-1"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(path, []byte("# front desk\n\n"+carol+"\n  dave:"+string(h)+"  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	u, err := LoadUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := u.Len(), 2; got != want {
		t.Fatalf("%d users, want %d", got, want)
	}
	for _, tt := range []struct {
		user, password string
		known, ok      bool
	}{
		{"dave", "dave-password-1", true, true},
		{"dave", "dave-password-2", true, false},
		{"carol", "carol-password-1", true, true},
		{"carol", "", true, false},
		{"erin", "dave-password-1", false, false},
	} {
		if known, ok := u.Check(tt.user, tt.password); known != tt.known || ok != tt.ok {
			t.Errorf("Check(%s) = %t, %t; want %t, %t", tt.user, known, ok, tt.known, tt.ok)
		}
	}
	if hash, err := bcrypt.Cost([]byte(strings.TrimPrefix(carol, "carol:"))); err != nil || hash != 5 {
		t.Fatalf("the $2y$ hash does not parse: %d, %v", hash, err)
	}

	for name, tt := range map[string]struct{ content, want string }{
		"APR1":      {"frank:$apr1$abc$def\n", "line 1: user frank: not a bcrypt hash"},
		"SHA":       {"\nfrank:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n", "line 2: user frank: not a bcrypt hash"},
		"NoColon":   {"frank\n", "line 1: not name:hash"},
		"Twice":     {carol + "\n" + carol + "\n", "line 2: user carol is listed twice"},
		"SpaceName": {"fr ank:" + string(h) + "\n", "line 1: user name"},
		"WholeFile": {"dave:" + string(h) + strings.Repeat(" ", MaxUsersFileBytes-5-len(h)), "line 1: longer than 1048575 bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parseUsers([]byte(tt.content))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "$") {
				t.Errorf("error %q shows a hash", err)
			}
		})
	}
	if _, err := LoadUsers(filepath.Join(t.TempDir(), "none")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestSetPassword: a new user is added with a hash bcrypt accepts, a
// known one changed in place; the other lines (comments, users
// htpasswd wrote) stay as they were; the file is 0600 and nothing is
// left beside it.
func TestSetPassword(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "users")
	const before = "# the front desk\ncarol:$2y$05$CzJRAKNoQuQXnAEhMsfHIuXVQsBC68s.N4hf5MIvknSc/8DPjrSg2\nzed:$2a$04$abcdefghijklmnopqrstuu5Y7FvHc1h5rTq5kU6.ZrN2Zyr1w5ni6"
	if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	added, err := SetPassword(path, "dave", []byte("dave-password-1"))
	if err != nil || !added {
		t.Fatalf("add dave: %t, %v", added, err)
	}
	added, err = SetPassword(path, "carol", []byte("carol-password-2"))
	if err != nil || added {
		t.Fatalf("change carol: %t, %v", added, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 4 || lines[0] != "# the front desk" || !strings.HasPrefix(lines[1], "carol:$2a$") ||
		lines[2] != strings.Split(before, "\n")[2] || !strings.HasPrefix(lines[3], "dave:$2a$") {
		t.Fatalf("the file after two changes:\n%s", data)
	}
	for user, pw := range map[string]string{"carol": "carol-password-2", "dave": "dave-password-1"} {
		for _, l := range lines {
			if hash, ok := strings.CutPrefix(l, user+":"); ok {
				if err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)); err != nil {
					t.Errorf("%s's hash does not accept the password: %v", user, err)
				}
			}
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("mode %o, want 600", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the directory, want only the users file", len(entries))
	}

	for name, tt := range map[string]struct {
		user, password, want string
	}{
		"Short":      {"erin", "short", "at least 8"},
		"Long":       {"erin", strings.Repeat("x", 73), "at most 72"},
		"Colon":      {"er:in", "erin-password", "no colon"},
		"Empty":      {"", "erin-password", "empty"},
		"Control":    {"er\x1bin", "erin-password", "control"},
		"LineBreak":  {"erin", "erin-pass\nword", "line break"},
		"LongName":   {strings.Repeat("e", 65), "erin-password", "at most 64"},
		"NotUTF8":    {"er\xffin", "erin-password", "UTF-8"},
		"SpaceInUse": {"erin smith", "erin-password", "no colon, space"},
		"Comment":    {"#erin", "erin-password", "starts a comment"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := SetPassword(path, tt.user, []byte(tt.password)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(data) {
		t.Error("a refused change changed the file")
	}
	if _, err := SetPassword(filepath.Join(dir, "new", "users"), "erin", []byte("erin-password")); err == nil {
		t.Error("a users file in a directory that does not exist was written")
	}
}

// FuzzUserNameRoundTrip: every user name CheckUserName accepts (so
// `quotesync passwd` writes it) is read back by parseUsers from the
// line SetPassword writes, as the only user, with its hash.
func FuzzUserNameRoundTrip(f *testing.F) {
	for _, s := range []string{"frontdesk", "#admin", "a#b", "ä-desk", "x\u00a0y", "\ufeffdesk", "desk\r", ";desk", "-desk"} {
		f.Add(s)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte("any-password-1"), bcrypt.MinCost)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if CheckUserName(name) != nil {
			return
		}
		content, _ := withUser([]byte("# the front desk\n"), name, string(hash))
		u, err := parseUsers(content)
		if err != nil {
			t.Fatalf("user name %q accepted, but its file is refused: %v", name, err)
		}
		if u.Len() != 1 || string(u.hash(name)) != string(hash) {
			t.Fatalf("user name %q accepted, but not read back from its file (%d users)", name, u.Len())
		}
	})
}

// TestUnknownUserTakesAsLong: an unknown user name is refused as slowly
// as a known one's wrong password, whatever cost the file's hashes have
// (htpasswd -B writes cost 5, the tests cost 4): the time of an answer
// does not tell which names are users. The dummy hash has the largest
// cost of the file.
func TestUnknownUserTakesAsLong(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "users")
	h, err := bcrypt.GenerateFromPassword([]byte("dave-password-1"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("dave:"+string(h)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	u, err := LoadUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	// fastest is the quickest of a few checks: the least disturbed by
	// whatever else the machine does.
	fastest := func(user string) time.Duration {
		best := time.Hour
		for range 7 {
			start := time.Now()
			u.Check(user, "not-the-password")
			best = min(best, time.Since(start))
		}
		return best
	}
	known, unknown := fastest("dave"), fastest("erin")
	if unknown > 4*known {
		t.Errorf("an unknown user is refused in %v, a known user's wrong password in %v: the time tells which names are users", unknown, known)
	}

	// A file of several costs: an unknown user costs the largest.
	const carol = "carol:$2y$05$CzJRAKNoQuQXnAEhMsfHIuXVQsBC68s.N4hf5MIvknSc/8DPjrSg2"
	mixed, err := parseUsers([]byte("dave:" + string(h) + "\n" + carol + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cost, err := bcrypt.Cost(mixed.pad[mixed.level]); err != nil || cost != 5 {
		t.Errorf("the hash unknown users are checked against, in a file of costs 4 and 5: cost %d (%v), want 5", cost, err)
	}
}

// TestRefusalCostsTheSameWork: every check of a password does the same
// bcrypt work, the work of one comparison at the file's highest cost,
// whoever the user is (unknown, or known with a hash of any cost) and
// whether the password is right or wrong: a user whose hash is cheap
// (htpasswd -B writes cost 5) is not told apart by a faster refusal. The
// work is counted by cost (bcrypt's doubles with each), not timed.
func TestRefusalCostsTheSameWork(t *testing.T) {
	t.Parallel()
	var file strings.Builder
	for _, u := range []struct {
		name string
		cost int
	}{{"four", 4}, {"five", 5}, {"seven", 7}} {
		h, err := bcrypt.GenerateFromPassword([]byte(u.name+"-password-1"), u.cost)
		if err != nil {
			t.Fatal(err)
		}
		file.WriteString(u.name + ":" + string(h) + "\n")
	}
	for _, f := range []struct {
		name, content string
		level         int
	}{{"Costs4To7", file.String(), 7}, {"NoUsers", "# nobody yet\n", GoodCost}} {
		t.Run(f.name, func(t *testing.T) {
			u, err := parseUsers([]byte(f.content))
			if err != nil {
				t.Fatal(err)
			}
			work, costs := 0, []int(nil)
			u.compare = func(hash, password []byte) error {
				c, err := bcrypt.Cost(hash)
				if err != nil {
					t.Fatalf("compared against a hash that is not one: %v", err)
				}
				work, costs = work+1<<c, append(costs, c)
				return bcrypt.CompareHashAndPassword(hash, password)
			}
			for _, tt := range []struct{ user, password string }{
				{"nobody", "wrong-password"},
				{"four", "wrong-password"}, {"four", "four-password-1"},
				{"five", "wrong-password"}, {"five", "five-password-1"},
				{"seven", "wrong-password"}, {"seven", "seven-password-1"},
			} {
				work, costs = 0, nil
				known, ok := u.Check(tt.user, tt.password)
				if !known && u.Len() > 0 && tt.user != "nobody" {
					continue // the NoUsers file has none of them
				}
				if want := 1 << f.level; work != want {
					t.Errorf("Check(%s, %s) = %t, %t did the work of %d (costs %v), want %d: one comparison at cost %d",
						tt.user, tt.password, known, ok, work, costs, want, f.level)
				}
			}
		})
	}
}

// TestWeakUsers: the users whose hash is below GoodCost are named.
func TestWeakUsers(t *testing.T) {
	t.Parallel()
	const carol = "carol:$2y$05$CzJRAKNoQuQXnAEhMsfHIuXVQsBC68s.N4hf5MIvknSc/8DPjrSg2" // htpasswd -B
	u, err := parseUsers([]byte(carol + "\nzed:" + dummyHash + "\nalice:" + strings.TrimPrefix(carol, "carol:") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(u.Weak(), ","), "alice,carol"; got != want {
		t.Errorf("Weak() = %s, want %s (zed's hash is cost 10)", got, want)
	}
}
