package store

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
)

// eventColumns are the columns of an Event (its fields' db names).
const eventColumns = "id, insurer, request_id, job, kind, from_phase, to_phase, reason, route, status, attempt, " +
	"duration_ms * 1000000 AS duration, items, hash, COALESCE(message, '') AS message, `at`"

// The columns an event is written with, and one row's placeholders.
const (
	eventInsert = " (insurer, request_id, job, kind, from_phase, to_phase, reason, route, status, attempt, duration_ms, items, hash, message, `at`)"
	eventValues = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)

// eventArgs are the values of ev's row (eventInsert), with ev's defaults
// filled in: now for At, st's insurer for Insurer.
func (st *Store) eventArgs(ev *Event) ([]any, error) {
	if ev.Kind == "" {
		return nil, fmt.Errorf("record event: kind is empty")
	}
	if ev.At.IsZero() {
		ev.At = now()
	}
	ev.Insurer = cmp.Or(ev.Insurer, st.insurer)
	return []any{ev.Insurer, ev.RequestID, ev.Job, ev.Kind, ev.From, ev.To, ev.Reason, ev.Route, ev.Status, ev.Attempt,
		ev.Duration.Milliseconds(), ev.Items, ev.Hash, st.keepText(ev.Message), normTime(ev.At)}, nil
}

// insertEvent appends ev (ID is assigned by the database) and queues its
// deliveries.
func (st *Store) insertEvent(ctx context.Context, x queryer, ev Event) error {
	args, err := st.eventArgs(&ev)
	if err != nil {
		return err
	}
	res, err := x.ExecContext(ctx, "INSERT INTO "+st.t.events+eventInsert+" VALUES "+eventValues, args...)
	if err != nil {
		return fmt.Errorf("record %s event of request %s: %w", ev.Kind, ev.RequestID, err)
	}
	if ev.Outbox == nil || len(ev.Outbox.Targets) == 0 {
		return nil
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("record %s event of request %s: read its id: %w", ev.Kind, ev.RequestID, err)
	}
	ev.At = normTime(ev.At)
	return st.queueDeliveries(ctx, x, id, ev)
}

// insertEvents appends evs: those that queue no delivery in one statement
// (the events of a move of many requests), the others one by one (each
// delivery needs its event's id).
func (st *Store) insertEvents(ctx context.Context, x queryer, evs []Event) error {
	var args []any
	n := 0
	for _, ev := range evs {
		if ev.Outbox != nil && len(ev.Outbox.Targets) > 0 {
			if err := st.insertEvent(ctx, x, ev); err != nil {
				return err
			}
			continue
		}
		a, err := st.eventArgs(&ev)
		if err != nil {
			return err
		}
		args = append(args, a...)
		n++
	}
	if n == 0 {
		return nil
	}
	_, err := x.ExecContext(ctx, "INSERT INTO "+st.t.events+eventInsert+" VALUES "+placeholders(n, eventValues), args...)
	return wrapf(err, "record %d events", n)
}

// Events returns the newest events first, at most limit (<= 0: no limit),
// of one request of db's insurer, or of every insurer's requests when
// requestID is "".
func (st *Store) Events(ctx context.Context, requestID string, limit int) ([]Event, error) {
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	q := "SELECT " + eventColumns + " FROM " + st.t.events
	var args []any
	if requestID != "" {
		q += " WHERE insurer = ? AND request_id = ?"
		args = append(args, st.insurer, requestID)
	}
	q += " ORDER BY id DESC"
	if limit > 0 {
		q += " LIMIT " + strconv.Itoa(limit)
	}
	out, err := st.queryEvents(ctx, q, args...)
	return out, wrapf(err, "read events")
}

// queryEvents runs query, which selects eventColumns, and scans its rows.
func (st *Store) queryEvents(ctx context.Context, query string, args ...any) ([]Event, error) {
	var out []Event
	err := st.x.SelectContext(ctx, &out, query, args...)
	if mysqlErrno(err) == errNoSuchTable {
		err = ErrNoStateTables
	}
	return out, err
}
