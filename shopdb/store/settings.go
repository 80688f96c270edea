package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Setting returns the value stored under name in quotesync's settings
// table; ok is false when there is none (or the table does not exist yet).
func (st *Store) Setting(ctx context.Context, name string) (value string, ok bool, err error) {
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	err = st.x.GetContext(ctx, &value, "SELECT value FROM "+st.t.settings+" WHERE name = ?", name)
	switch {
	case errors.Is(err, sql.ErrNoRows), mysqlErrno(err) == errNoSuchTable:
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("read setting %s: %w", name, err)
	}
	return value, true, nil
}

// PutSetting stores value under name, replacing what was there.
func (st *Store) PutSetting(ctx context.Context, name, value string) error {
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	_, err := st.x.ExecContext(ctx, "INSERT INTO "+st.t.settings+" (name, value, updated_at) VALUES (?, ?, ?)"+
		" ON DUPLICATE KEY UPDATE value = VALUES(value), updated_at = VALUES(updated_at)", name, value, now())
	return wrapf(err, "store setting %s", name)
}

// JobHolder returns the row (without its RequestJSON) that holds job,
// whatever its insurer: a job number is held by one request at most
// across all insurers. A zero Request when none holds it.
func (st *Store) JobHolder(ctx context.Context, job string) (Request, error) {
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	r, err := jobHolder(ctx, st, st.x, job)
	if err != nil {
		return Request{}, fmt.Errorf("find the request that holds job %s: %w", job, err)
	}
	return r, nil
}

// jobHolder is JobHolder on x.
func jobHolder(ctx context.Context, st *Store, x queryer, job string) (Request, error) {
	rs, err := queryRequestsInto(ctx, x, nil, "SELECT "+lightColumns+" FROM "+st.t.requests+" WHERE job_number = ?", job)
	if err != nil || len(rs) == 0 {
		return Request{}, err
	}
	return rs[0], nil
}
