package sync

import "testing"

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n          int
		word, want string
	}{
		{1, "job", "1 job"}, {0, "job", "0 jobs"}, {3, "guess line", "3 guess lines"},
		{2, "pass", "2 passes"}, {2, "delivery", "2 deliveries"}, {1, "delivery", "1 delivery"},
		{2, "day", "2 days"}, {2, "y", "2 ys"},
	} {
		if got := Plural(c.n, c.word); got != c.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", c.n, c.word, got, c.want)
		}
	}
}
