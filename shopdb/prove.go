package shopdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// SampleJob is one row of shop.queries.sample_jobs: a job of the shop,
// its claim number and the values of the other parameters find_job reads
// (by parameter name), as a request for that job would carry them.
type SampleJob struct {
	Job    string
	Claim  string
	Values map[string]string
}

// MaxSampleJobs bounds how many rows of sample_jobs are read.
const MaxSampleJobs = 20

// HasSampleJobs reports whether shop.queries.sample_jobs is configured.
func (db *DB) HasSampleJobs() bool { return db.q.sampleJobs != nil }

// SampleJobs runs sample_jobs in a read-only transaction: at most
// MaxSampleJobs jobs. Its columns are job, claim_number and any of
// shop.params' names; others are an error.
func (db *DB) SampleJobs(ctx context.Context) ([]SampleJob, error) {
	q := db.q.sampleJobs
	if q == nil {
		return nil, nil
	}
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	tx, err := db.x.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("begin read-only transaction: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	rows, err := q.query(ctx, tx, nil)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", q.key, explainPrivilege(err, db.cfg))
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("read columns of %s: %w", q.key, err)
	}
	allowed := append([]string{"job", ParamClaimNumber}, sortedKeys(db.cfg.Params)...)
	idx, err := columnIndex(q.key, cols, []string{"job", ParamClaimNumber}, allowed[2:])
	if err != nil {
		return nil, err
	}
	var out []SampleJob
	enough := errors.New("enough sample jobs")
	err = scanRows(rows, q.key, func(vals []any) error {
		if len(out) == MaxSampleJobs {
			return enough
		}
		s := SampleJob{Values: map[string]string{}}
		s.Job, _ = text(vals[idx["job"]])
		s.Claim, _ = text(vals[idx[ParamClaimNumber]])
		for _, name := range allowed[2:] {
			if i, ok := idx[name]; ok {
				if v, ok := text(vals[i]); ok {
					s.Values[name] = v
				}
			}
		}
		if strings.TrimSpace(s.Job) != "" {
			out = append(out, s)
		}
		return nil
	})
	if err != nil && err != enough {
		return nil, err
	}
	return out, nil
}

// SampleRequest is the request that should find s's job: its claim
// number, an expiry a day ahead, and a request document holding each of
// s's values at the path shop.params gives its name.
func (db *DB) SampleRequest(s SampleJob) NewRequest {
	doc := map[string]any{}
	for name, path := range db.cfg.Params {
		v, ok := s.Values[name]
		if !ok {
			continue
		}
		cur := doc
		parts := strings.Split(path, ".")
		for _, p := range parts[:len(parts)-1] {
			next, ok := cur[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[p] = next
			}
			cur = next
		}
		cur[parts[len(parts)-1]] = v
	}
	raw, _ := json.Marshal(doc) // strings and maps always marshal
	return NewRequest{RequestID: probe, ClaimNumber: s.Claim, Expiry: now().Add(24 * time.Hour), RequestJSON: raw}
}
