package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"
)

// Rekey says what moves with an insurer's requests besides them: what the
// insurer From has that no request of its holds, and what is keyed by its
// name beside its rows (see MoveRest).
type Rekey struct {
	// From is the insurer whose rest moves; "" for the rows written before
	// insurers had names.
	From string
	// Settings: a setting's name, its new name. A setting under the new
	// name already wins: the old one stays as it is.
	Settings map[string]string
	// OnceKeys: a prefix of the outbox's once keys, its new prefix, in the
	// deliveries given to the insurer. A key held under the new prefix
	// already wins: the old one is released.
	OnceKeys map[string]string
}

// Adopted counts what a move gave an insurer (Move, MoveRest).
type Adopted struct {
	Requests, Events, Deliveries, Settings int
	// Kept are the ids of the requests left unnamed because the insurer
	// tracks a request with the same id already, sorted.
	Kept []string
}

// Any reports whether anything was adopted.
func (a Adopted) Any() bool { return a.Requests+a.Events+a.Deliveries+a.Settings > 0 }

// moveBatch is how many requests one statement of Move moves.
const moveBatch = 500

// Move moves rows (requests as read, of one insurer) to the insurer to,
// each with its event of evs (recorded as to's, after the row), in one
// transaction: the rows (compare-and-set on each one's version: ErrStale
// when one changed meanwhile, and nothing moves; Version+1 and UpdatedAt
// now), their events and their deliveries, and, when rest is set, what of
// rest.From is left (as MoveRest gives it). ErrExists when to tracks a
// request with the id of one of them already. It returns the rows as
// stored, and what moved.
//
// Only the insurer of a row changes. The executor (package sync) is its
// one caller: it checks each move against the state machine first, and
// reports the events once they are durable.
func (st *Store) Move(ctx context.Context, rows []Request, to string, evs []Event, rest *Rekey) ([]Request, Adopted, error) {
	if err := CheckInsurerName(to); err != nil {
		return nil, Adopted{}, fmt.Errorf("move requests: %w", err)
	}
	if len(evs) != len(rows) {
		return nil, Adopted{}, fmt.Errorf("move requests: %d events for %d requests", len(evs), len(rows))
	}
	parent := ctx
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	at := now()
	saved := make([]Request, len(rows))
	for i, r := range rows {
		saved[i] = r
		saved[i].Insurer, saved[i].Version, saved[i].UpdatedAt = to, r.Version+1, at
	}
	var a Adopted
	err := st.inTx(ctx, func(tx *sqlx.Tx) error {
		a = Adopted{Requests: len(rows)}
		for start := 0; start < len(rows); start += moveBatch {
			end := min(start+moveBatch, len(rows))
			if err := st.moveRows(ctx, tx, rows[start:end], to, at, &a); err != nil {
				return err
			}
			recorded := make([]Event, 0, end-start)
			for i := start; i < end; i++ {
				if evs[i].Kind != "" {
					ev := evs[i]
					ev.Insurer = to
					recorded = append(recorded, eventOf(ev, rows[i], saved[i]))
				}
			}
			if err := st.insertEvents(ctx, tx, recorded); err != nil {
				return err
			}
		}
		if rest != nil {
			return st.rekey(ctx, tx, to, *rest, &a)
		}
		return nil
	})
	if err != nil {
		return nil, Adopted{}, fmt.Errorf("move %s to insurer %s: %w", movedWhat(rows), to, st.explainWait(parent, err))
	}
	return saved, a, nil
}

// movedWhat names the requests of a move in its error.
func movedWhat(rows []Request) string {
	switch len(rows) {
	case 0:
		return "nothing"
	case 1:
		return fmt.Sprintf("request %s of insurer %q", rows[0].RequestID, rows[0].Insurer)
	}
	return fmt.Sprintf("%d requests of insurer %q", len(rows), rows[0].Insurer)
}

// moveRows moves rows, their events and their deliveries to the insurer
// to in tx, one statement each.
func (st *Store) moveRows(ctx context.Context, tx *sqlx.Tx, rows []Request, to string, at any, a *Adopted) error {
	keys := make([]any, 0, 3*len(rows))
	pairs := make([]any, 0, 2*len(rows))
	for _, r := range rows {
		keys = append(keys, r.Insurer, r.RequestID, r.Version)
		pairs = append(pairs, r.Insurer, r.RequestID)
	}
	res, err := tx.ExecContext(ctx, "UPDATE "+st.t.requests+" SET insurer = ?, version = version + 1, updated_at = ?"+
		" WHERE (insurer, request_id, version) IN ("+placeholders(len(rows), "(?, ?, ?)")+")", append([]any{to, at}, keys...)...)
	if mysqlErrno(err) == errDupEntry {
		return fmt.Errorf("insurer %s tracks a request with the id of one of them already: %w", to, ErrExists)
	}
	if err != nil {
		return err
	}
	if n, err := affected(res); err != nil || n != len(rows) {
		if err != nil {
			return err
		}
		return fmt.Errorf("%d of %d rows changed since they were read: %w", len(rows)-n, len(rows), ErrStale)
	}
	for _, u := range a.moved(st) {
		if err := execAdd(ctx, tx, u.n, "UPDATE "+u.table+" SET insurer = ? WHERE (insurer, request_id) IN ("+
			placeholders(len(rows), "(?, ?)")+")", append([]any{to}, pairs...)...); err != nil {
			return fmt.Errorf("give the rows of %s to insurer %s: %w", u.table, to, err)
		}
	}
	return nil
}

// moved pairs the tables whose rows move with a request with a's counts.
func (a *Adopted) moved(st *Store) []tableCount {
	return []tableCount{{st.t.events, &a.Events}, {st.t.outbox, &a.Deliveries}}
}

type tableCount struct {
	table string
	n     *int
}

// execAdd runs query in tx and adds the rows it changed to *n.
func execAdd(ctx context.Context, tx *sqlx.Tx, n *int, query string, args ...any) error {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	k, err := affected(res)
	*n += k
	return err
}

// placeholders is n copies of one, comma-separated.
func placeholders(n int, one string) string {
	return strings.TrimSuffix(strings.Repeat(one+", ", n), ", ")
}

// MoveRest gives the insurer to what of rk.From is left once its requests
// are moved (Move, request by request), in one transaction: the events and
// deliveries of rk.From that no request of rk.From holds (those of no
// request, such as an auth_failing notice, and any written for a request
// after it moved), and what rk rekeys. None of it is a request's state.
func (st *Store) MoveRest(ctx context.Context, to string, rk Rekey) (Adopted, error) {
	var a Adopted
	if err := CheckInsurerName(to); err != nil {
		return a, fmt.Errorf("move the rest of insurer %s: %w", rk.From, err)
	}
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	err := st.inTx(ctx, func(tx *sqlx.Tx) error {
		a = Adopted{}
		return st.rekey(ctx, tx, to, rk, &a)
	})
	if err != nil {
		return Adopted{}, fmt.Errorf("move the rest of insurer %s to %s: %w", rk.From, to, err)
	}
	return a, nil
}

// rekey gives to, in tx, the events and deliveries of rk.From that no
// request of rk.From holds, the once keys rk names in to's deliveries,
// and the settings rk names.
func (st *Store) rekey(ctx context.Context, tx *sqlx.Tx, to string, rk Rekey, a *Adopted) error {
	from := rk.From
	for _, u := range a.moved(st) {
		if err := execAdd(ctx, tx, u.n, "UPDATE "+u.table+" x SET insurer = ? WHERE insurer = ? AND NOT EXISTS (SELECT 1 FROM "+
			st.t.requests+" r WHERE r.insurer = ? AND r.request_id = x.request_id)", to, from, from); err != nil {
			return fmt.Errorf("give the rows of %s to insurer %s: %w", u.table, to, err)
		}
	}
	for _, old := range slices.Sorted(maps.Keys(rk.OnceKeys)) {
		// The prefixes are ASCII: LEFT and SUBSTRING count characters.
		nw := rk.OnceKeys[old]
		if _, err := tx.ExecContext(ctx, "UPDATE IGNORE "+st.t.outbox+" SET once_key = CONCAT(?, SUBSTRING(once_key, ?))"+
			" WHERE insurer = ? AND LEFT(once_key, ?) = ?", nw, len(old)+1, to, len(old), old); err != nil {
			return fmt.Errorf("rename the notice keys %s…: %w", old, err)
		}
		if _, err := tx.ExecContext(ctx, "UPDATE "+st.t.outbox+" SET once_key = NULL WHERE insurer = ? AND LEFT(once_key, ?) = ?",
			to, len(old), old); err != nil {
			return fmt.Errorf("release the notice keys %s…: %w", old, err)
		}
	}
	for _, old := range slices.Sorted(maps.Keys(rk.Settings)) {
		if err := execAdd(ctx, tx, &a.Settings, "UPDATE IGNORE "+st.t.settings+" SET name = ? WHERE name = ?", rk.Settings[old], old); err != nil {
			return fmt.Errorf("rename setting %s: %w", old, err)
		}
	}
	return nil
}

// Adoptable returns what Move would give the insurer name of the rows
// written with no insurer (the empty name): the requests, oldest first,
// without their RequestJSON, and the ids of those it leaves (kept,
// sorted), whose id name tracks already.
//
// A request whose id name tracks already (an older quotesync still
// running beside a newer one recorded its own copy) is left unnamed, with
// its events and deliveries. Nothing is lost that way: both rows stay for
// a person to compare, the insurer's row is the one its passes work on,
// and the job number the copy holds stays held (the unique key on
// job_number). Refusing every row instead would leave the other requests
// to no insurer, where a pass would take a request it has no row for as
// new and accept it again.
func (st *Store) Adoptable(ctx context.Context, name string) (rows []Request, kept []string, err error) {
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	if err := st.x.SelectContext(ctx, &kept, "SELECT u.request_id FROM "+st.t.requests+" u JOIN "+st.t.requests+
		" n ON n.insurer = ? AND n.request_id = u.request_id WHERE u.insurer = '' ORDER BY u.request_id", name); err != nil {
		return nil, nil, fmt.Errorf("look for the requests insurer %s tracks already: %w", name, err)
	}
	rows, err = queryRequestsInto(ctx, st.x, nil, "SELECT "+lightColumns+" FROM "+st.t.requests+" u WHERE insurer = ''"+
		" AND NOT EXISTS (SELECT 1 FROM "+st.t.requests+" n WHERE n.insurer = ? AND n.request_id = u.request_id)"+
		" ORDER BY created_at, request_id", name)
	if err != nil {
		return nil, nil, fmt.Errorf("read the requests written before insurers: %w", err)
	}
	return rows, kept, nil
}
