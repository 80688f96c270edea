package sync

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeExplainsEveryLogLine: every message the engine logs is in the
// README's table of log messages, word for word, so that a person reading
// a log line can look it up.
func TestReadmeExplainsEveryLogLine(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	msgs := []string{msgPassDone, msgPassFailed, msgUnauthorized, msgRecovered, msgInterrupted, msgAdopted, msgAdoptKept, msgPanic}
	for _, l := range logLines {
		msgs = append(msgs, l.msg)
	}
	for _, m := range msgs {
		if !strings.Contains(readme, "`"+m+"`") {
			t.Errorf("README.md does not explain the log message %q", m)
		}
	}
}
