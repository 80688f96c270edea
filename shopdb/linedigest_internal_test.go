package shopdb

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestRefusedStatement: the server refusing a statement as written turns
// the joined statement off at once; a failure of the moment does not.
func TestRefusedStatement(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&mysql.MySQLError{Number: 1267, Message: "Illegal mix of collations"}, true},
		{fmt.Errorf("read: %w", &mysql.MySQLError{Number: 1064, Message: "syntax"}), true},
		{&mysql.MySQLError{Number: 1305, Message: "FUNCTION CRC32 does not exist"}, true},
		{errNullSums, true},
		{&mysql.MySQLError{Number: 1969, Message: "Query execution was interrupted (max_statement_time exceeded)"}, false},
		{&mysql.MySQLError{Number: 1317, Message: "Query execution was interrupted"}, false},
		{&mysql.MySQLError{Number: 1040, Message: "Too many connections"}, false},
		{context.DeadlineExceeded, false},
		{mysql.ErrInvalidConn, false},
	} {
		if got := refusedStatement(tc.err); got != tc.want {
			t.Errorf("refusedStatement(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestJoinFailed: failures of the moment turn the joined statement off
// only after joinedFailuresOff calls in a row; one it answers in between
// starts the count again; a refusal turns it off at once.
func TestJoinFailed(t *testing.T) {
	db := &DB{pool: &pool{}}
	q := &namedQuery{key: "joined"}
	db.digest.joined = q
	timeout := fmt.Errorf("read: %w", context.DeadlineExceeded)
	for i := 1; i < joinedFailuresOff; i++ {
		db.joinFailed(q, timeout)
	}
	db.joinServed()
	for i := 1; i < joinedFailuresOff; i++ {
		db.joinFailed(q, timeout)
		if db.joinedQuery() != q {
			t.Fatalf("off after %d failures of the moment in a row (the last call it answered reset the count): %q", i, db.digest.joinOff)
		}
	}
	db.joinFailed(q, timeout)
	if db.joinedQuery() != nil {
		t.Fatalf("still on after %d failures in a row", joinedFailuresOff)
	}

	refused := &DB{pool: &pool{}}
	refused.digest.joined = q
	refused.joinFailed(q, &mysql.MySQLError{Number: 1267, Message: "Illegal mix of collations"})
	if refused.joinedQuery() != nil {
		t.Fatal("still on after the server refused the statement")
	}
}
