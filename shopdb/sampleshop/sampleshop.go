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
	_ "embed" // the schema and the sample data
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

// WorkTypes maps the sample shop's operation codes to the remote's work
// types.
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
			FindJob: `SELECT j.job_no AS job
FROM jobs j
WHERE j.claim_number = :claim_number AND j.status <> 'CANCELLED'`,
			CreateJob: []string{
				`UPDATE counters SET next_val = next_val + 1 WHERE name = 'job'`,
				`INSERT INTO jobs (job_no, registration, claim_number, status, created_at)
SELECT CONCAT('RO-', c.next_val), :registration, :claim_number, 'OPEN', NOW()
FROM counters c WHERE c.name = 'job'`,
				`INSERT INTO estimates (job_id, status)
SELECT j.job_id, 'DRAFT'
FROM jobs j JOIN counters c ON j.job_no = CONCAT('RO-', c.next_val)
WHERE c.name = 'job'`,
				`SELECT CONCAT('RO-', c.next_val) AS job FROM counters c WHERE c.name = 'job'`,
			},
			BookingDate: `SELECT j.booking_date FROM jobs j WHERE j.job_no = :job`,
			ReleaseJob: []string{
				`UPDATE jobs SET status = 'CANCELLED'
WHERE job_no = :job AND :job_created = 1
  AND NOT EXISTS (SELECT 1 FROM estimates e JOIN estimate_lines l ON l.estimate_id = e.estimate_id
                  WHERE e.job_id = jobs.job_id AND l.deleted = 0)`,
			},
			LineItems: `SELECT j.job_no AS job, l.line_id, l.line_no, l.op_code AS code, l.description,
       l.part_no AS part_number, l.qty AS quantity, l.unit_price AS price, l.line_total AS total,
       l.markup, l.on_report AS is_on_report, l.supplier AS meta_supplier
FROM jobs j
JOIN estimates e ON e.job_id = j.job_id
JOIN estimate_lines l ON l.estimate_id = e.estimate_id
WHERE j.job_no IN (:jobs) AND l.deleted = 0`,
			EstimateState: `SELECT j.job_no AS job,
       MAX(CASE WHEN e.status = 'FINAL' THEN 1 ELSE 0 END) AS final,
       CONCAT(MAX(e.status), '|', MAX(e.updated_at), '|',
              SUM(CASE WHEN l.deleted = 0 THEN 1 ELSE 0 END), '|',
              COALESCE(MAX(l.updated_at), '-')) AS marker
FROM jobs j
JOIN estimates e ON e.job_id = j.job_id
LEFT JOIN estimate_lines l ON l.estimate_id = e.estimate_id
WHERE j.job_no IN (:jobs)
GROUP BY j.job_no`,
			ShopChanged: `SELECT (SELECT MAX(updated_at) FROM estimate_lines) AS lines_changed,
       (SELECT COUNT(*) FROM estimates) AS estimate_count,
       (SELECT MAX(updated_at) FROM estimates) AS estimates_changed`,
			SampleJobs: `SELECT j.job_no AS job, j.claim_number, j.registration
FROM jobs j
WHERE j.claim_number IS NOT NULL AND j.status <> 'CANCELLED'
ORDER BY j.job_id DESC
LIMIT 20`,
		},
		Params:    map[string]string{"registration": "vehicle.registration"},
		WorkTypes: WorkTypes(),
	}
}
