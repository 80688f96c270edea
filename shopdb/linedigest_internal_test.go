package shopdb

import (
	"context"
	"fmt"
	"strings"
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

// TestRefused: a refusal of the joined statement moves to the next form,
// and past the last turns deriving off; a refusal of a statement that is
// no longer the one in use changes nothing.
func TestRefused(t *testing.T) {
	db := &DB{pool: &pool{digest: lineDigest{forms: digestForms[:], known: true}}}
	q := &namedQuery{key: "joined"}
	db.digest.joined = q
	db.refused(&namedQuery{key: "older"}, errNullSums)
	if db.digest.joined != q || db.digest.form != 0 {
		t.Fatalf("a refusal of an older statement changed the one in use")
	}
	refusal := &mysql.MySQLError{Number: 1305, Message: "FUNCTION CRC32 does not exist"}
	db.refused(q, refusal)
	if db.digest.joined != nil || db.digest.form != 1 || !db.derives() {
		t.Fatalf("after one refusal: form %d, joined %v, derives %v; want the next form, to be built", db.digest.form, db.digest.joined, db.derives())
	}
	db.digest.joined = q
	db.refused(q, refusal)
	if form, why := db.DerivedMarkers(); db.derives() || form != "" || why == "" {
		t.Fatalf("after every form was refused: derives %v, form %q, why %q; want off, and why", db.derives(), form, why)
	}
}

// TestAddSumsOrder: two spellings of one job (a case-sensitive collation)
// give the same derived sums whichever row the server sends first.
func TestAddSumsOrder(t *testing.T) {
	a, b := map[string]string{}, map[string]string{}
	for _, v := range []string{"900:17", "12:3"} {
		if err := addSums(a, "RO-1", v); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []string{"12:3", "900:17"} {
		if err := addSums(b, "RO-1", v); err != nil {
			t.Fatal(err)
		}
	}
	if a["RO-1"] != b["RO-1"] || !strings.Contains(a["RO-1"], "+") {
		t.Errorf("sums of two spellings: %q one way, %q the other; want the same, both counted", a["RO-1"], b["RO-1"])
	}
}
