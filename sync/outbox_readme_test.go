package sync

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeExplainsDeliveryLogLines: the outbox's log messages are in
// the README's table too.
func TestReadmeExplainsDeliveryLogLines(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{msgDeliveryFailed, msgDeliveryRecovered, msgDelivered, msgOutboxFailed} {
		if !strings.Contains(string(data), "`"+m+"`") {
			t.Errorf("README.md does not explain the log message %q", m)
		}
	}
}
