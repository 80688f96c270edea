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

// JobHolder returns the request whose row holds job, "" when none does.
func (db *DB) JobHolder(ctx context.Context, job string) (string, error) {
	ctx, cancel := db.timeout(ctx)
	defer cancel()
	var holder string
	err := db.x.GetContext(ctx, &holder, "SELECT request_id FROM "+db.t.requests+" WHERE job_number = ?", job)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("find the request that holds job %s: %w", job, err)
	}
	return holder, nil
}
