// Package sampleshop is a realistic sample shop-management schema (embedded
// SQL), its sample data, the shopdb mapping that fits it, and Shop, which
// plays the shop's part in tests and in the demo.
//
// The schema is what SMS databases really look like: job numbers such as
// RO-50001 allocated from a counter table, one estimate per job (DRAFT or
// FINAL), estimate lines with operation codes (R&R, RPR, PNT, MECH, PART,
// SUNDRY), DECIMAL(12,4) unit prices, nullable line totals and soft-deleted
// lines. The SQL is plain enough for MariaDB 10.11, MySQL 8 and
// go-mysql-server (the zero-setup demo): no triggers, stored procedures,
// window functions or CHECK constraints, and no multi-statement strings.
package sampleshop

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"strings"

	"github.com/quotesync/quotesync/shopdb"
)

// Claims of the sample data, and the jobs they belong to.
const (
	// ClaimDraft: job RO-50001, a DRAFT estimate with four lines (a fifth is
	// soft-deleted), unit prices with four decimals, some totals NULL.
	ClaimDraft = "CLM-1001"
	JobDraft   = "RO-50001"
	// ClaimFinal: job RO-50002, a FINAL estimate with four lines.
	ClaimFinal = "CLM-1002"
	JobFinal   = "RO-50002"
	// ClaimNoLines: job RO-50003, an estimate with no lines yet.
	ClaimNoLines = "CLM-1003"
	JobNoLines   = "RO-50003"
	// JobWalkIn: RO-50004 has no claim number (a private job).
	JobWalkIn = "RO-50004"
	// ClaimBadLine: job RO-50005, one line has no unit price yet: the
	// mapping rejects the job until the shop fills it in.
	ClaimBadLine = "CLM-1005"
	JobBadLine   = "RO-50005"
)

var (
	//go:embed schema.sql
	schemaSQL string
	//go:embed data.sql
	dataSQL string
)

// Execer runs one statement: *sql.DB, *sql.Conn, *sql.Tx and their sqlx
// forms all are.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Apply creates the sample schema in the current database and loads the
// sample data (see the Claim constants), one statement at a time.
func Apply(ctx context.Context, db Execer) error {
	if err := Run(ctx, db, "create sample schema", schemaSQL); err != nil {
		return err
	}
	return Run(ctx, db, "load sample data", dataSQL)
}

// Run runs the statements of script (see Statements) one at a time; what
// names it in the error.
func Run(ctx context.Context, db Execer, what, script string) error {
	for i, stmt := range Statements(script) {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%s: statement %d: %w", what, i+1, err)
		}
	}
	return nil
}

// Statements splits a script into statements: lines starting with "--" are
// comments, and a statement ends with ";" at the end of a line.
func Statements(script string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(script, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(trimmed, ";") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// WorkTypes maps the sample shop's operation codes to remote work types.
func WorkTypes() map[string]string {
	return map[string]string{
		"R&R":    "RemoveReplaceLabour",
		"RPR":    "RepairLabour",
		"PNT":    "RefinishLabour",
		"MECH":   "MechanicalLabour",
		"PART":   "Parts",
		"SUNDRY": "Miscellaneous",
	}
}

// Mapping returns the shopdb mapping for the sample schema: Queries,
// Params and WorkTypes set, the connection fields left for the caller.
//
// find_job looks the claim number up; create_job bumps the job counter,
// inserts the job and its DRAFT estimate and returns the new number (the
// counter row lock serialises concurrent creations, and a rollback undoes
// the bump, so numbers have no gaps); line_items leaves out soft-deleted
// lines; estimate_state's marker changes with the estimate's status and
// time stamp, the number of live lines and the newest line change (an edit
// or a soft delete bumps updated_at); shop_changed moves with any line or
// estimate change (the updated_at indexes make its MAXes one index probe;
// lines are never deleted outright, so only estimates are counted).
func Mapping() shopdb.Config {
	return shopdb.Config{
		Queries: shopdb.Queries{
			FindJob:       mappingSQL("find_job"),
			CreateJob:     Statements(mappingSQL("create_job")),
			BookingDate:   mappingSQL("booking_date"),
			ReleaseJob:    Statements(mappingSQL("release_job")),
			LineItems:     mappingSQL("line_items"),
			EstimateState: mappingSQL("estimate_state"),
			ShopChanged:   mappingSQL("shop_changed"),
			SampleJobs:    mappingSQL("sample_jobs"),
		},
		Params:    map[string]string{"registration": "vehicle.registration"},
		WorkTypes: WorkTypes(),
	}
}

//go:embed mapping/*.sql
var mappingFiles embed.FS

// mappingSQL is the text of mapping/name.sql: a statement, or those of
// create_job and release_job, each ending with ";" at a line end.
func mappingSQL(name string) string {
	b, err := mappingFiles.ReadFile("mapping/" + name + ".sql")
	if err != nil {
		panic(err) // embedded: a name that is not there is a typo
	}
	return strings.TrimSpace(string(b))
}
