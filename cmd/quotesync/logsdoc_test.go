package main

import (
	"os"
	"strings"
	"testing"
)

// TestLogsPageExplainsCommandLogLines: every message the command itself
// logs is in the table of log messages of docs/logs.md, word for word.
func TestLogsPageExplainsCommandLogLines(t *testing.T) {
	data, err := os.ReadFile("../../docs/logs.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{msgStarted, msgReady, msgStopping, msgStopped, msgStopTimeout, msgStartFailed,
		msgSchedulerDied, msgReloading, msgReloaded, msgReloadRejected, msgLogFormatKept, msgMetricsListen,
		msgMetricsFailed, msgMetricsRebind, msgMetricsLost, msgDriver, msgNotifyFailed, msgWatchdogHeld, msgWatchdogResumed,
		msgSyncNow, msgControlListen, msgControlOff, msgClusterNode,
		msgListenerAuth, msgListenerOpenDeprecated, msgListenerNoUsers, msgListenerCertExpired,
		msgListenerOpen, msgListenerInClear, msgListenerUsersOpen, msgListenerWeakHashes} {
		if !strings.Contains(string(data), "`"+m+"`") {
			t.Errorf("docs/logs.md does not explain the log message %q", m)
		}
	}
}
