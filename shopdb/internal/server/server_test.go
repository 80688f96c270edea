package server

import (
	"strings"
	"testing"
)

func TestLockName(t *testing.T) {
	if got := LockName("quotesync.shop.quotesync_"); got != "quotesync.shop.quotesync_" {
		t.Errorf("short name changed: %q", got)
	}
	long := "quotesync." + strings.Repeat("d", 64) + ".quotesync_"
	got := LockName(long)
	if len(got) > 64 || got == LockName(long+"x") {
		t.Errorf("LockName(long) = %q: longer than 64 or not distinct", got)
	}
}
