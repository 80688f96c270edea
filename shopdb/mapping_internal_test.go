package shopdb

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"
	"github.com/quotesync/quotesync/shopdb/internal/server"
)

// TestScanNamedAgreesWithSqlx: the names scanNamed finds are the ones sqlx
// binds at run time, in order.
func TestScanNamedAgreesWithSqlx(t *testing.T) {
	queries := []string{
		"SELECT 1",
		"SELECT * FROM jobs WHERE claim_number = :claim_number",
		"SELECT :a, :b.c, :a FROM t WHERE x IN (:jobs)",
		"SELECT job FROM t WHERE t.at = :expiry AND reg = :registration",
		"SELECT '10::30', @v := 1, :request_id",
		"UPDATE t SET a = :x_1 WHERE b = :y2",
		"SELECT x FROM t WHERE a = :last",
		"SELECT CONCAT(:p, '-', :q)",
	}
	for _, q := range queries {
		bound, names, err := scanNamed(q)
		if err != nil {
			t.Errorf("scanNamed(%q): %v", q, err)
			continue
		}
		vals := map[string]any{}
		for _, n := range names {
			vals[n] = "<" + n + ">"
		}
		sqlxText, args, err := sqlx.Named(q, vals)
		if err != nil {
			t.Errorf("sqlx.Named(%q): %v", q, err)
			continue
		}
		var sqlxNames []string
		for _, a := range args {
			sqlxNames = append(sqlxNames, strings.Trim(a.(string), "<>"))
		}
		if diff := cmp.Diff(sqlxNames, names); diff != "" {
			t.Errorf("names of %q (-sqlx +scanNamed):\n%s", q, diff)
		}
		if bound != sqlxText {
			t.Errorf("text of %q: scanNamed %q, sqlx %q", q, bound, sqlxText)
		}
	}
}

func TestJSONPath(t *testing.T) {
	raw := `{"id": 7, "vehicle": {"registration": "KLM123", "year": 2019, "new": false,
		"owner": null, "tags": ["a", "b"], "dims": {"l": 1}}, "claimNumber": "C-1"}`
	vals, err := requestParams("", NewRequest{RequestID: "7", RequestJSON: []byte(raw)}, map[string]string{
		"reg": "vehicle.registration", "year": "vehicle.year", "new": "vehicle.new", "owner": "vehicle.owner",
		"tag": "vehicle.tags.1", "tag9": "vehicle.tags.9", "dims": "vehicle.dims", "missing": "accident.when",
		"deep": "vehicle.registration.x", "claim": "claimNumber",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"request_id": "7", "claim_number": "", "expiry": nil, "insurer": "",
		"reg": "KLM123", "year": "2019", "new": false, "owner": nil, "tag": "b", "tag9": nil,
		"dims": `{"l":1}`, "missing": nil, "deep": nil, "claim": "C-1",
	}
	if diff := cmp.Diff(want, vals); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
	exp := time.Date(2031, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600))
	vals, err = requestParams("", NewRequest{RequestID: "8", ClaimNumber: "C", Expiry: exp}, map[string]string{"reg": "vehicle.registration"})
	if err != nil || vals["reg"] != nil || !vals["expiry"].(time.Time).Equal(exp) {
		t.Errorf("params without JSON = %v, %v; want reg NULL and the expiry", vals, err)
	}
}

func TestTruth(t *testing.T) {
	cases := []struct {
		in   any
		want bool
		err  bool
	}{
		{nil, false, false}, {int64(1), true, false}, {int64(0), false, false}, {[]byte("1"), true, false},
		{[]byte("0"), false, false}, {[]byte("2.0"), true, false}, {"true", true, false}, {"FALSE", false, false},
		{"Y", true, false}, {"n", false, false}, {true, true, false}, {"maybe", false, true},
	}
	for _, c := range cases {
		got, err := truth(c.in)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("truth(%#v) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

func TestText(t *testing.T) {
	at := time.Date(2025, 7, 1, 9, 0, 0, 120000000, time.UTC)
	cases := []struct {
		in   any
		want string
		ok   bool
	}{
		{nil, "", false}, {[]byte("x"), "x", true}, {int64(-3), "-3", true}, {uint64(3), "3", true},
		{float64(1.25), "1.25", true}, {at, "2025-07-01 09:00:00.12", true}, {true, "1", true},
	}
	for _, c := range cases {
		if got, ok := text(c.in); got != c.want || ok != c.ok {
			t.Errorf("text(%#v) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestExplainConnect: a failed connection says what to try, naming the
// settings as they were given: the keys of shop:, or --dsn; never the
// password.
func TestExplainConnect(t *testing.T) {
	fromDSN, err := ConfigFromDSN("shop@tcp(db.lan:3306)/workshop")
	if err != nil {
		t.Fatal(err)
	}
	fromDSN.Password = "pw-7f3a"
	yaml := Config{User: "shop", Database: "workshop", Password: "pw-7f3a", PasswordFrom: "file /etc/quotesync/db-password"}
	denied := &mysql.MySQLError{Number: server.ErrAccessDenied, Message: "Access denied for user 'shop'"}
	noDB := &mysql.MySQLError{Number: server.ErrBadDB, Message: "Unknown database 'workshop'"}
	down := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	for _, tc := range []struct {
		c    Config
		err  error
		want []string
	}{
		{yaml, denied, []string{"check shop.user (shop) and the password from file /etc/quotesync/db-password"}},
		{fromDSN, denied, []string{"check the user in --dsn (shop) and no password given (--password-file, or the variable QUOTESYNC_DB_PASSWORD)"}},
		{yaml, noDB, []string{"check shop.database"}},
		{fromDSN, noDB, []string{"check its name in --dsn"}},
		{yaml, down, []string{"check shop.addr", "no firewall"}},
		{fromDSN, down, []string{"check the host and port in --dsn", "bind-address"}},
	} {
		if tc.c.fromDSN {
			tc.c.Password = ""
		}
		got := explainConnect(tc.err, tc.c).Error()
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("explainConnect(%v) = %q, want it to say %q", tc.err, got, w)
			}
		}
		if strings.Contains(got, "pw-7f3a") {
			t.Errorf("explainConnect(%v) shows the password: %q", tc.err, got)
		}
	}
	if fromDSN.Addr != "db.lan:3306" || fromDSN.User != "shop" || fromDSN.Database != "workshop" {
		t.Errorf("ConfigFromDSN = %+v", fromDSN)
	}
}
