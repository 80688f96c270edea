package sync

import (
	"os"
	"strings"
	"testing"
)

// TestLogsPageExplainsEveryLogLine: every message the engine logs is in
// the table of log messages of docs/logs.md, word for word, so that a
// person reading a log line can look it up.
func TestLogsPageExplainsEveryLogLine(t *testing.T) {
	data, err := os.ReadFile("../docs/logs.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	msgs := []string{msgPassDone, msgPassFailed, msgUnauthorized, msgRecovered, msgInterrupted, msgAdopted, msgAdoptKept, msgPanic}
	for _, l := range logLines {
		msgs = append(msgs, l.msg)
	}
	for _, m := range msgs {
		if !strings.Contains(page, "`"+m+"`") {
			t.Errorf("docs/logs.md does not explain the log message %q", m)
		}
	}
}

// TestLogsPageNamesEveryField: every field key the engine's log lines
// carry is named on docs/logs.md, so a log pipeline can be written from it.
func TestLogsPageNamesEveryField(t *testing.T) {
	data, err := os.ReadFile("../docs/logs.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{fieldInsurer, fieldRequest, fieldClaim, fieldJob, fieldPhase, fieldFrom, fieldReason,
		fieldDetail, fieldAttempt, fieldStatus, fieldDuration, fieldRoute, fieldNext, fieldItems, fieldReleased,
		fieldInferred, fieldStreak} {
		if !strings.Contains(string(data), "`"+f+"`") {
			t.Errorf("docs/logs.md does not name the log field %q", f)
		}
	}
}
