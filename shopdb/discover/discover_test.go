package discover_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/discover"
	"github.com/quotesync/quotesync/shopdb/discover/testshops"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// propose builds the shop in a fresh database and proposes its mapping.
func propose(t testing.TB, shop testshops.Shop, final []string, overrides map[string]string) (*discover.Proposal, discover.Queries, *shopdbtest.Database) {
	t.Helper()
	ctx := context.Background()
	d := shopdbtest.NewDatabase(t)
	if err := shop.Apply(ctx, d.SQL); err != nil {
		t.Fatal(err)
	}
	s, err := discover.Read(ctx, d.SQL.DB, discover.Options{SkipPrefix: shopdb.DefaultTablePrefix})
	if err != nil {
		t.Fatal(err)
	}
	sm, err := discover.NewSampler(ctx, d.SQL.DB, s.Server, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sm.Close()
	p, err := discover.Propose(ctx, s, sm, overrides, final)
	if err != nil {
		t.Fatal(err)
	}
	return p, p.Queries(), d
}

func chosen(p *discover.Proposal, role string) string {
	c, _ := p.Choice(role)
	return c.Chosen
}

// TestProposals: on each schema the winners are the ones a person who
// knows it would pick, and the guesses are marked.
func TestProposals(t *testing.T) {
	type want struct {
		roles     map[string]string
		guessed   []string // roles that must be marked as guesses
		numbering string
		prefix    string
		width     int
		holdsNext bool
		marker    bool // estimate_state has a marker column
		shopChg   bool // shop_changed is written
	}
	cases := map[string]want{
		"sample": {roles: map[string]string{
			discover.RoleJobTable: "jobs", discover.RoleJobNumber: "job_no", discover.RoleClaim: "claim_number",
			discover.RoleRegistration: "registration", discover.RoleBookingDate: "booking_date", discover.RoleLineTable: "estimate_lines",
			discover.RoleLineID: "line_id", discover.RoleLineNo: "line_no", discover.RoleCode: "op_code", discover.RoleDescription: "description",
			discover.RoleQuantity: "qty", discover.RolePrice: "unit_price", discover.RoleTotal: "line_total", discover.RolePartNumber: "part_no",
			discover.RoleSoftDelete: "deleted", discover.RoleLineUpdated: "updated_at", discover.RoleStatus: "estimates.status"},
			guessed: []string{discover.RoleStatus}, numbering: "counter", prefix: "RO-", marker: true, shopChg: true},
		"repairorder": {roles: map[string]string{
			discover.RoleJobTable: "ro_header", discover.RoleJobNumber: "ro_number", discover.RoleClaim: "ins_claim_no",
			discover.RoleRegistration: "rego", discover.RoleLineTable: "ro_lines", discover.RoleLineNo: "seq", discover.RoleCode: "labour_type",
			discover.RoleDescription: "descr", discover.RoleQuantity: "hours_or_qty", discover.RolePrice: "unit_amt", discover.RoleTotal: "ext_amt",
			discover.RolePartNumber: "part_num", discover.RoleSoftDelete: "del_flag", discover.RoleStatus: "ro_header.ro_status"},
			guessed: []string{discover.RoleLineTable, discover.RoleStatus}, numbering: "counter", prefix: "RO-", width: 6},
		"denormalised": {roles: map[string]string{
			discover.RoleJobTable: "workorders", discover.RoleJobNumber: "wo_no", discover.RoleClaim: "claim",
			discover.RoleRegistration: "plate", discover.RoleLineTable: "wo_items", discover.RoleLineNo: "line", discover.RoleCode: "op",
			discover.RoleDescription: "text", discover.RoleQuantity: "qty", discover.RolePrice: "price", discover.RoleTotal: "total",
			discover.RoleSoftDelete: "", discover.RoleLineUpdated: "modified", discover.RoleStatus: "workorders.state"},
			guessed: []string{discover.RoleLineTable}, numbering: "auto_increment", marker: true, shopChg: true},
		"reserved": {roles: map[string]string{
			discover.RoleJobTable: "Order", discover.RoleJobNumber: "Number", discover.RoleClaim: "ClaimRef",
			discover.RoleRegistration: "Kenteken", discover.RoleLineTable: "OrderLine", discover.RoleLineNo: "Position", discover.RoleCode: "Type",
			discover.RoleDescription: "Desc", discover.RoleQuantity: "Menge", discover.RolePrice: "Stückpreis", discover.RoleTotal: "",
			discover.RoleSoftDelete: "Deleted", discover.RoleStatus: "Order.Status"},
			guessed: []string{discover.RoleNumbering}, numbering: "max_plus_one", prefix: "A"},
		"flat": {roles: map[string]string{
			discover.RoleJobTable: "quote_lines", discover.RoleJobNumber: "job_no", discover.RoleClaim: "claim_no",
			discover.RoleRegistration: "rego", discover.RoleLineTable: "quote_lines", discover.RoleLineID: "line_id", discover.RoleLineNo: "line_no",
			discover.RoleCode: "op", discover.RoleDescription: "description", discover.RoleQuantity: "qty", discover.RolePrice: "rate",
			discover.RoleTotal: "amount", discover.RoleSoftDelete: "deleted", discover.RoleLineUpdated: "changed_at",
			discover.RoleStatus: "quote_lines.quote_status", discover.RoleNumbering: "none"},
			guessed: []string{discover.RoleJobTable, discover.RoleStatus}, marker: true, shopChg: true},
	}
	for _, shop := range append([]testshops.Shop{testshops.Sample}, testshops.Shops...) {
		w := cases[shop.Name]
		t.Run(shop.Name, func(t *testing.T) {
			p, q, _ := propose(t, shop, shop.Final, nil)
			for role, name := range w.roles {
				if got := chosen(p, role); got != name {
					t.Errorf("%s = %q, want %q", role, got, name)
				}
			}
			for _, role := range w.guessed {
				if c, _ := p.Choice(role); !c.Guess {
					t.Errorf("%s (%s) is not marked as a guess", role, c.Chosen)
				}
			}
			n := p.Numbering
			if n.Method != w.numbering || n.Prefix != w.prefix || n.Width != w.width || n.HoldsNext != w.holdsNext {
				t.Errorf("numbering = %s prefix %q width %d next %v; want %s %q %d %v", n.Method, n.Prefix, n.Width, n.HoldsNext, w.numbering, w.prefix, w.width, w.holdsNext)
			}
			if got := strings.Contains(q.EstimateState, "AS marker"); got != w.marker {
				t.Errorf("estimate_state has a marker: %v, want %v:\n%s", got, w.marker, q.EstimateState)
			}
			if got := q.ShopChanged != ""; got != w.shopChg {
				t.Errorf("shop_changed written: %v, want %v:\n%s", got, w.shopChg, q.ShopChanged)
			}
			if !strings.Contains(q.EstimateState, "AS final") {
				t.Errorf("a confirmed final value writes no final column:\n%s", q.EstimateState)
			}
			for _, f := range shop.Final {
				for _, stmt := range q.CreateJob {
					if strings.Contains(stmt, discover.Literal(f)) {
						t.Errorf("create_job writes the final value %s into a new job:\n%s", f, stmt)
					}
				}
			}
		})
	}
}

// TestNeverGuessesFinal: without a confirmed value, estimate_state has no
// final column (nothing is submitted) and says so, naming the values.
func TestNeverGuessesFinal(t *testing.T) {
	p, q, _ := propose(t, testshops.Sample, nil, nil)
	if strings.Contains(q.EstimateState, "final") {
		t.Errorf("estimate_state guesses final:\n%s", q.EstimateState)
	}
	found := false
	for _, n := range q.Notes["estimate_state"] {
		found = found || n.Check && strings.Contains(n.Text, "submits nothing") && strings.Contains(n.Text, "FINAL ×1")
	}
	if !found {
		t.Errorf("no CHECK note about final: %+v", q.Notes["estimate_state"])
	}
	if len(p.Final) != 0 {
		t.Errorf("Final = %v", p.Final)
	}
}

// TestOverrides: a choice given wins, the rest follows it; a name that is
// not a column is an error naming it.
func TestOverrides(t *testing.T) {
	p, q, _ := propose(t, testshops.Sample, nil, map[string]string{discover.RoleStatus: "jobs.status", discover.RoleTotal: discover.None})
	if got := chosen(p, discover.RoleStatus); got != "jobs.status" {
		t.Errorf("status = %q", got)
	}
	if p.Total != nil || strings.Contains(q.LineItems, "AS total") {
		t.Errorf("total chosen none, but line_items reads one:\n%s", q.LineItems)
	}
	ctx := context.Background()
	d := shopdbtest.NewSampleShop(t)
	s, err := discover.Read(ctx, d.SQL.DB, discover.Options{SkipPrefix: shopdb.DefaultTablePrefix})
	if err != nil {
		t.Fatal(err)
	}
	_, err = discover.Propose(ctx, s, nil, map[string]string{discover.RoleQuantity: "no_such"}, nil)
	if err == nil || !strings.Contains(err.Error(), `"no_such" is not a column of estimate_lines`) {
		t.Errorf("err = %v", err)
	}
	if _, err := discover.Read(ctx, d.SQL.DB, discover.Options{}); err != nil {
		t.Fatal(err)
	}
	if len(s.Tables) == 0 || s.Table("quotesync_requests") != nil {
		t.Errorf("quotesync's own tables are not left out: %d tables", len(s.Tables))
	}
}

// TestNothingJobLike: a database without jobs says what was looked for.
func TestNothingJobLike(t *testing.T) {
	ctx := context.Background()
	d := shopdbtest.NewDatabase(t)
	if _, err := d.SQL.ExecContext(ctx, "CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(80))"); err != nil {
		t.Fatal(err)
	}
	s, err := discover.Read(ctx, d.SQL.DB, discover.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = discover.Propose(ctx, s, nil, nil, nil)
	var nj *discover.NoJobsError
	if !errors.As(err, &nj) || nj.Tables != 1 || !strings.Contains(err.Error(), "quotesync looks for a job table") {
		t.Errorf("err = %v", err)
	}
}

func TestIdent(t *testing.T) {
	for in, want := range map[string]string{
		"jobs": "jobs", "job_no2": "job_no2", "order": "`order`", "Desc": "`Desc`", "OrderLine": "`OrderLine`",
		"Stückpreis": "`Stückpreis`", "line no": "`line no`", "a`b": "`a``b`", "time:stamp": "`time::stamp`", "2nd": "`2nd`",
	} {
		if got := discover.Ident(in); got != want {
			t.Errorf("Ident(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestLiteral(t *testing.T) {
	for in, want := range map[string]string{
		"FINAL": "'FINAL'", "F": "'F'", "": "''", "O'Brien": "_utf8mb4 X'4F27427269656E'", `a\b`: "_utf8mb4 X'615C62'",
		"10:30": "_utf8mb4 X'31303A3330'", "Ü": "_utf8mb4 X'C39C'", "a?b": "_utf8mb4 X'613F62'",
	} {
		if got := discover.Literal(in); got != want {
			t.Errorf("Literal(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestLiteralsReadBack: every literal form reads back as the value on the
// server, through the mapping's named-parameter binder.
func TestLiteralsReadBack(t *testing.T) {
	d := shopdbtest.NewDatabase(t)
	for _, v := range []string{"FINAL", "O'Brien", `a\b`, "10:30", "Müller", "a?b", "x`y", "\x1b[2J"} {
		var got string
		q := strings.ReplaceAll("SELECT "+discover.Literal(v), "::", ":")
		if err := d.SQL.QueryRowContext(context.Background(), q).Scan(&got); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got != v {
			t.Errorf("%s reads back as %q, want %q", q, got, v)
		}
	}
}

// BenchmarkInit500Tables measures reading and ranking a schema of 500
// tables of 40 columns (a large shop system) with its two job tables
// and their lines among them: Read, Propose (with samples) and Queries.
//
//	go test -run '^$' -bench Init500Tables -benchtime 5x ./shopdb/discover/
func BenchmarkInit500Tables(b *testing.B) {
	ctx := context.Background()
	d := shopdbtest.NewDatabase(b)
	if err := testshops.Sample.Apply(ctx, d.SQL); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 500; i++ {
		cols := []string{"id INT NOT NULL AUTO_INCREMENT PRIMARY KEY"}
		for c := 1; c < 40; c++ {
			typ := []string{"VARCHAR(40)", "INT", "DECIMAL(12,4)", "DATETIME"}[c%4]
			name := []string{"name", "code", "amount", "created", "ref", "status", "note", "qty", "value", "flag"}[c%10]
			cols = append(cols, fmt.Sprintf("%s_%d %s NULL", name, c, typ))
		}
		stmt := fmt.Sprintf("CREATE TABLE t%03d_%s (%s) ENGINE=InnoDB", i, []string{"stock", "supplier", "invoice", "payroll", "audit"}[i%5], strings.Join(cols, ", "))
		if _, err := d.SQL.ExecContext(ctx, stmt); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := discover.Read(ctx, d.SQL.DB, discover.Options{SkipPrefix: shopdb.DefaultTablePrefix})
		if err != nil {
			b.Fatal(err)
		}
		sm, err := discover.NewSampler(ctx, d.SQL.DB, s.Server, 0)
		if err != nil {
			b.Fatal(err)
		}
		p, err := discover.Propose(ctx, s, sm, nil, nil)
		sm.Close()
		if err != nil {
			b.Fatal(err)
		}
		if p.Job.Name != "jobs" || p.Lines.Name != "estimate_lines" || len(s.Tables) < 500 {
			b.Fatalf("chose %s and %s among %d tables", p.Job.Name, p.Lines.Name, len(s.Tables))
		}
		_ = p.Queries()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
}

// TestNamesThatCannotBeWritten: a name holding a line separator (which
// YAML readers take for a line break) is never chosen; a name with a
// colon is sampled and written (doubled for the mapping's binder).
func TestNamesThatCannotBeWritten(t *testing.T) {
	ctx := context.Background()
	d := shopdbtest.NewDatabase(t)
	for _, stmt := range []string{
		"CREATE TABLE jobs (job_id INT AUTO_INCREMENT PRIMARY KEY, job_no VARCHAR(20) NOT NULL UNIQUE, `claim\u2028number` VARCHAR(40), claim_ref VARCHAR(40), `state:code` VARCHAR(10) NOT NULL)",
		"CREATE TABLE job_lines (line_id INT AUTO_INCREMENT PRIMARY KEY, job_id INT NOT NULL, line_no INT, op_code VARCHAR(8), description VARCHAR(80), qty DECIMAL(9,2), price DECIMAL(9,2))",
		"INSERT INTO jobs (job_no, claim_ref, `state:code`) VALUES ('J-1', 'C-1', 'OPEN'), ('J-2', 'C-2', 'DONE')",
	} {
		if _, err := d.SQL.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	s, err := discover.Read(ctx, d.SQL.DB, discover.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sm, err := discover.NewSampler(ctx, d.SQL.DB, s.Server, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sm.Close()
	p, err := discover.Propose(ctx, s, sm, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Choices {
		for _, o := range append(c.Options, c.Chosen, c.RunnerUp) {
			if strings.ContainsRune(o, '\u2028') {
				t.Errorf("%s offers %q", c.Role, o)
			}
		}
	}
	if got := chosen(p, discover.RoleClaim); got != "claim_ref" {
		t.Errorf("claim = %q, want claim_ref", got)
	}
	if got := chosen(p, discover.RoleStatus); got != "jobs.state:code" || len(p.StatusValues) != 2 {
		t.Errorf("status = %q with values %v; want jobs.state:code with its two values", got, p.StatusValues)
	}
}
