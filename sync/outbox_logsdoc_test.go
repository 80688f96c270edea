package sync

import (
	"os"
	"strings"
	"testing"
)

// TestLogsPageExplainsDeliveryLogLines: the outbox's log messages are in
// the table of docs/logs.md too.
func TestLogsPageExplainsDeliveryLogLines(t *testing.T) {
	data, err := os.ReadFile("../docs/logs.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{msgDeliveryFailed, msgDeliveryRecovered, msgDelivered, msgOutboxFailed} {
		if !strings.Contains(string(data), "`"+m+"`") {
			t.Errorf("docs/logs.md does not explain the log message %q", m)
		}
	}
}
