package sampleshop

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/shopspring/decimal"
)

// ErrNoSuchJob: the job number or line is not in the sample shop.
var ErrNoSuchJob = errors.New("no such job or line in the shop")

// Shop plays the shop-management system's part on a database holding the
// sample schema: it creates jobs and edits estimates the way the shop's
// own application would.
type Shop struct {
	db *sql.DB
}

// New returns a Shop working on db (a pool on the shop's database).
func New(db *sql.DB) *Shop {
	return &Shop{db: db}
}

// Line is one estimate line as the shop stores it.
type Line struct {
	LineID      int64 `db:"line_id"` // assigned by AddLine
	LineNo      int   `db:"line_no"` // 0 in AddLine: after the last line
	Code        string
	Description string
	PartNo      string              `db:"part_no"`
	Qty         decimal.Decimal     // NULL reads as 0
	UnitPrice   decimal.NullDecimal `db:"unit_price"` // NULL: price still to be confirmed
	LineTotal   decimal.NullDecimal `db:"line_total"` // NULL: the shop leaves the total to the reader
	Markup      decimal.NullDecimal // NULL: no markup
	OnReport    sql.NullBool        `db:"on_report"` // NULL: the shop does not say
	Supplier    string              // "": none (the item metadata "supplier")
}

// CreateJob creates a job (next number from the counter) with a DRAFT
// estimate for a claim, as the shop's front desk would, and returns its job
// number.
func (s *Shop) CreateJob(ctx context.Context, claim, registration string) (string, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("create job for claim %s: %w", claim, err)
	}
	defer func() { _ = tx.Rollback() }()
	var next int64
	steps := []func() error{
		func() error {
			_, err := tx.ExecContext(ctx, "UPDATE counters SET next_val = next_val + 1 WHERE name = 'job'")
			return err
		},
		func() error {
			return tx.QueryRowContext(ctx, "SELECT next_val FROM counters WHERE name = 'job'").Scan(&next)
		},
		func() error {
			_, err := tx.ExecContext(ctx, "INSERT INTO jobs (job_no, registration, claim_number, status, created_at) VALUES (?, ?, ?, 'OPEN', NOW())",
				jobNo(next), nullIfEmpty(registration), nullIfEmpty(claim))
			return err
		},
		func() error {
			_, err := tx.ExecContext(ctx, "INSERT INTO estimates (job_id, status) SELECT job_id, 'DRAFT' FROM jobs WHERE job_no = ?", jobNo(next))
			return err
		},
		tx.Commit,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return "", fmt.Errorf("create job for claim %s: %w", claim, err)
		}
	}
	return jobNo(next), nil
}

func jobNo(n int64) string { return fmt.Sprintf("RO-%d", n) }

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// FindJob returns the job number of a claim, "" when there is none.
func (s *Shop) FindJob(ctx context.Context, claim string) (string, error) {
	var job string
	err := s.db.QueryRowContext(ctx, "SELECT job_no FROM jobs WHERE claim_number = ? ORDER BY job_id LIMIT 1", claim).Scan(&job)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("find job of claim %s: %w", claim, err)
	}
	return job, nil
}

// AddLine appends a line to the job's estimate and returns it with its
// LineID (and LineNo, when it was 0) filled in.
func (s *Shop) AddLine(ctx context.Context, job string, l Line) (Line, error) {
	added, err := s.AddLines(ctx, job, []Line{l})
	if err != nil {
		return l, err
	}
	return added[0], nil
}

// AddLines appends lines to the job's estimate in one transaction, as a
// shop's program saves new lines together: a pass never reads some without
// the others. A line with LineNo zero takes the next number.
func (s *Shop) AddLines(ctx context.Context, job string, lines []Line) ([]Line, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("add lines to %s: %w", job, err)
	}
	defer func() { _ = tx.Rollback() }()
	var estimate int64
	var last int
	err = tx.QueryRowContext(ctx, `SELECT e.estimate_id, COALESCE(MAX(l.line_no), 0)
FROM estimates e JOIN jobs j ON j.job_id = e.job_id
LEFT JOIN estimate_lines l ON l.estimate_id = e.estimate_id
WHERE j.job_no = ? GROUP BY e.estimate_id`, job).Scan(&estimate, &last)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("add lines to %s: %w", job, ErrNoSuchJob)
	}
	if err != nil {
		return nil, fmt.Errorf("add lines to %s: %w", job, err)
	}
	added := make([]Line, len(lines))
	for i, l := range lines {
		if l.LineNo == 0 {
			last++
			l.LineNo = last
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO estimate_lines
(estimate_id, line_no, op_code, description, part_no, qty, unit_price, line_total, markup, on_report, supplier, deleted, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, NOW(6))`,
			estimate, l.LineNo, nullIfEmpty(l.Code), nullIfEmpty(l.Description), nullIfEmpty(l.PartNo),
			l.Qty, l.UnitPrice, l.LineTotal, l.Markup, l.OnReport, nullIfEmpty(l.Supplier))
		if err != nil {
			return nil, fmt.Errorf("add line to %s: %w", job, err)
		}
		if l.LineID, err = res.LastInsertId(); err != nil {
			return nil, fmt.Errorf("add line to %s: %w", job, err)
		}
		added[i] = l
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("add lines to %s: %w", job, err)
	}
	return added, nil
}

// EditLine stores every field of l over the line l.LineID.
func (s *Shop) EditLine(ctx context.Context, l Line) error {
	return s.exec(ctx, fmt.Sprintf("edit line %d", l.LineID), `UPDATE estimate_lines
SET line_no = ?, op_code = ?, description = ?, part_no = ?, qty = ?, unit_price = ?, line_total = ?,
  markup = ?, on_report = ?, supplier = ?, updated_at = NOW(6)
WHERE line_id = ?`,
		l.LineNo, nullIfEmpty(l.Code), nullIfEmpty(l.Description), nullIfEmpty(l.PartNo), l.Qty, l.UnitPrice,
		l.LineTotal, l.Markup, l.OnReport, nullIfEmpty(l.Supplier), l.LineID)
}

// DeleteLine soft-deletes a line, as the shop's application does.
func (s *Shop) DeleteLine(ctx context.Context, lineID int64) error {
	return s.exec(ctx, fmt.Sprintf("delete line %d", lineID),
		"UPDATE estimate_lines SET deleted = 1, updated_at = NOW(6) WHERE line_id = ?", lineID)
}

// SetFinal marks the job's estimate FINAL (or back to DRAFT).
func (s *Shop) SetFinal(ctx context.Context, job string, final bool) error {
	status := "DRAFT"
	if final {
		status = "FINAL"
	}
	return s.exec(ctx, "set estimate of "+job+" to "+status,
		"UPDATE estimates SET status = ?, updated_at = NOW(6) WHERE job_id = (SELECT job_id FROM jobs WHERE job_no = ?)", status, job)
}

// exec runs one UPDATE that must touch one row.
func (s *Shop) exec(ctx context.Context, what, query string, args ...any) error {
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	} else if n == 0 {
		return fmt.Errorf("%s: %w", what, ErrNoSuchJob)
	}
	return nil
}

// Lines returns the job's live (not soft-deleted) lines by line number.
func (s *Shop) Lines(ctx context.Context, job string) ([]Line, error) {
	var out []Line
	err := sqlx.NewDb(s.db, "mysql").SelectContext(ctx, &out, `SELECT l.line_id, l.line_no, COALESCE(l.op_code, '') AS code,
COALESCE(l.description, '') AS description, COALESCE(l.part_no, '') AS part_no, COALESCE(l.qty, 0) AS qty, l.unit_price,
l.line_total, l.markup, l.on_report, COALESCE(l.supplier, '') AS supplier
FROM estimate_lines l JOIN estimates e ON e.estimate_id = l.estimate_id JOIN jobs j ON j.job_id = e.job_id
WHERE j.job_no = ? AND l.deleted = 0 ORDER BY l.line_no, l.line_id`, job)
	if err != nil {
		return nil, fmt.Errorf("read lines of %s: %w", job, err)
	}
	return out, nil
}

// GenerateJobs adds n jobs (claims GEN-0000001 …) each with a DRAFT
// estimate of linesPerJob valid lines, in a few bulk statements, and
// returns their job numbers. For benchmarks and load tests.
func (s *Shop) GenerateJobs(ctx context.Context, n, linesPerJob int) ([]string, error) {
	var first, maxJobID int64
	if err := s.db.QueryRowContext(ctx, "SELECT next_val FROM counters WHERE name = 'job'").Scan(&first); err != nil {
		return nil, fmt.Errorf("generate jobs: read counter: %w", err)
	}
	if err := s.db.QueryRowContext(ctx, "SELECT COALESCE(MAX(job_id), 0) FROM jobs").Scan(&maxJobID); err != nil {
		return nil, fmt.Errorf("generate jobs: %w", err)
	}
	jobs := make([]string, 0, n)
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if b.Len() == 0 {
			b.WriteString("INSERT INTO jobs (job_no, registration, claim_number, insurer, status) VALUES ")
		} else {
			b.WriteString(", ")
		}
		job := jobNo(first + int64(i))
		jobs = append(jobs, job)
		fmt.Fprintf(&b, "('%s', 'GEN%04d', 'GEN-%07d', 'Tower', 'OPEN')", job, i%10000, first+int64(i))
		if i%1000 == 0 || i == n {
			if _, err := s.db.ExecContext(ctx, b.String()); err != nil {
				return nil, fmt.Errorf("generate jobs: %w", err)
			}
			b.Reset()
		}
	}
	stmts := []string{
		fmt.Sprintf("INSERT INTO estimates (job_id, status) SELECT job_id, 'DRAFT' FROM jobs WHERE job_id > %d", maxJobID),
		fmt.Sprintf("UPDATE counters SET next_val = %d WHERE name = 'job'", first+int64(n)),
	}
	if linesPerJob > 0 {
		var nums []string
		for i := 1; i <= linesPerJob; i++ {
			nums = append(nums, fmt.Sprintf("SELECT %d AS n", i))
		}
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO estimate_lines
(estimate_id, line_no, op_code, description, part_no, qty, unit_price, line_total, markup, on_report, supplier, deleted, updated_at)
SELECT e.estimate_id, d.n,
  CASE d.n %% 6 WHEN 0 THEN 'R&R' WHEN 1 THEN 'RPR' WHEN 2 THEN 'PNT' WHEN 3 THEN 'MECH' WHEN 4 THEN 'PART' ELSE 'SUNDRY' END,
  CONCAT('Generated line ', d.n), CASE WHEN d.n %% 6 = 4 THEN CONCAT('PN-', e.estimate_id, '-', d.n) END,
  1 + (d.n %% 4) * 0.25, 10 + (e.estimate_id %% 100) + d.n * 0.0125, NULL,
  CASE WHEN d.n %% 6 = 4 THEN 2.5 END, d.n %% 2, CASE WHEN d.n %% 6 = 4 THEN 'OEM' END, 0, NOW(6)
FROM estimates e JOIN jobs j ON j.job_id = e.job_id
CROSS JOIN (%s) d
WHERE j.job_id > %d`, strings.Join(nums, " UNION ALL "), maxJobID))
	}
	for _, q := range stmts {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("generate jobs: %w", err)
		}
	}
	return jobs, nil
}

// InsurerStatus reads what the front desk sees of the insurer's side of
// a job (the columns quotesync's write-back fills): "" while nothing was
// written.
func (s *Shop) InsurerStatus(ctx context.Context, job string) (status, note string, err error) {
	var st, n sql.NullString
	err = s.db.QueryRowContext(ctx, "SELECT insurer_status, insurer_note FROM jobs WHERE job_no = ?", job).Scan(&st, &n)
	if err != nil {
		return "", "", fmt.Errorf("read the insurer status of job %s: %w", job, err)
	}
	return st.String, n.String, nil
}
