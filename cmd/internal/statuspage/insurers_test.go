package statuspage

import "testing"

// TestNameInsurers: insurers are named when several are configured, or
// when a request shown is not the lone configured insurer's; a request
// written before insurers had names counts as the lone insurer's.
func TestNameInsurers(t *testing.T) {
	for _, c := range []struct {
		configured, seen []string
		want             bool
	}{
		{nil, nil, false},
		{nil, []string{"aa", "aa"}, false},
		{nil, []string{"aa", "bb"}, true},
		{nil, []string{"", "aa"}, false},
		{[]string{"default"}, []string{"default", ""}, false},
		{[]string{"aa"}, nil, false},
		{[]string{"aa"}, []string{"aa", "bb"}, true},
		{[]string{"aa"}, []string{"bb"}, true},
		{[]string{"aa", "bb"}, nil, true},
		{[]string{"aa", "bb"}, []string{"aa"}, true},
	} {
		if got := NameInsurers(c.configured, c.seen...); got != c.want {
			t.Errorf("NameInsurers(%q, %q) = %t, want %t", c.configured, c.seen, got, c.want)
		}
	}
	if got, want := CommandArg("bb", "7301", true), "--insurer bb 7301"; got != want {
		t.Errorf("CommandArg named = %q, want %q", got, want)
	}
	if got, want := CommandArg("bb", "7301", false), "7301"; got != want {
		t.Errorf("CommandArg not named = %q, want %q", got, want)
	}
}
