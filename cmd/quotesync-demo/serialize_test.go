package main

import "testing"

func TestTableless(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  bool
	}{
		{"KILL CONNECTION 12", true},
		{"  kill 12", true},
		{"SELECT GET_LOCK(?, 0)", true},
		{"select IS_USED_LOCK('qs') = CONNECTION_ID()", true},
		{"SELECT LAST_INSERT_ID()", true},
		{"SET SESSION wait_timeout = 30", true},
		{"SET TRANSACTION ISOLATION LEVEL READ COMMITTED", true},
		{"SELECT next_val FROM counters FOR UPDATE", false},
		{"SELECT (SELECT MAX(id) FROM jobs)", false},
		{"SET @n = (SELECT COUNT(*) FROM jobs)", false},
		{"UPDATE counters SET next_val = 1", false},
		{"START TRANSACTION", false},
		{"COMMIT", false},
		{"INSERT INTO jobs VALUES (1)", false},
		{"", false},
	} {
		if got := tableless(tc.query); got != tc.want {
			t.Errorf("tableless(%q) = %v, want %v", tc.query, got, tc.want)
		}
	}
}
