package shopdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Setting returns the value stored under name in quotesync's settings
// table; ok is false when there is none (or the table does not exist yet).
func (db *DB) Setting(ctx context.Context, name string) (value string, ok bool, err error) {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	err = db.x.GetContext(ctx, &value, "SELECT value FROM "+db.t.settings+" WHERE name = ?", name)
	switch {
	case errors.Is(err, sql.ErrNoRows), mysqlErrno(err) == errNoSuchTable:
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("read setting %s: %w", name, err)
	}
	return value, true, nil
}

// PutSetting stores value under name, replacing what was there.
func (db *DB) PutSetting(ctx context.Context, name, value string) error {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	_, err := db.x.ExecContext(ctx, "INSERT INTO "+db.t.settings+" (name, value, updated_at) VALUES (?, ?, ?)"+
		" ON DUPLICATE KEY UPDATE value = VALUES(value), updated_at = VALUES(updated_at)", name, value, now())
	if err != nil {
		return fmt.Errorf("store setting %s: %w", name, err)
	}
	return nil
}

// JobHolder returns the row (without its RequestJSON) that holds job,
// whatever its insurer: a job number is held by one request at most
// across all insurers. A zero Request when none holds it.
func (db *DB) JobHolder(ctx context.Context, job string) (Request, error) {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	r, err := jobHolder(ctx, db, db.x, job)
	if err != nil {
		return Request{}, fmt.Errorf("find the request that holds job %s: %w", job, err)
	}
	return r, nil
}

// jobHolder is JobHolder on x.
func jobHolder(ctx context.Context, db *DB, x queryer, job string) (Request, error) {
	rs, err := db.queryRequests(ctx, x, "SELECT "+lightColumns+" FROM "+db.t.requests+" WHERE job_number = ?", job)
	if err != nil || len(rs) == 0 {
		return Request{}, err
	}
	return rs[0], nil
}
