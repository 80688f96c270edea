package main

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeExplainsCommandLogLines: every message the command itself
// logs is in the README's table of log messages, word for word.
func TestReadmeExplainsCommandLogLines(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
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
			t.Errorf("README.md does not explain the log message %q", m)
		}
	}
}
