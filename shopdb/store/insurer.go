package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"

	"github.com/jmoiron/sqlx"
)

// MaxInsurerLen is the longest insurer name: the width of the insurer
// columns of quotesync's tables.
const MaxInsurerLen = 32

// insurerPattern is what an insurer name may hold.
var insurerPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// CheckInsurerName refuses a name that cannot key an insurer's state:
// one to 32 letters, digits, "-" or "_".
func CheckInsurerName(name string) error {
	if !insurerPattern.MatchString(name) {
		return fmt.Errorf("%q is not an insurer name: use 1 to %d letters, digits, - or _ (it keys the insurer's state: choose it for good)", name, MaxInsurerLen)
	}
	return nil
}

// UnnamedRequests counts the requests written before insurers had names
// (insurer ”): Adopt gives them to one; 0 when the state tables do not
// exist yet.
func (st *Store) UnnamedRequests(ctx context.Context) (int, error) {
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	var n int
	err := st.x.GetContext(ctx, &n, "SELECT COUNT(*) FROM "+st.t.requests+" WHERE insurer = ''")
	if mysqlErrno(err) == errNoSuchTable {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("count the requests written before insurers: %w", err)
	}
	return n, nil
}

// Unnamed is what Adopt would find: the rows written with no insurer
// (the empty name), by a quotesync of before insurers, or by one still
// running beside a newer one that migrated the tables.
type Unnamed struct {
	// Requests counts the requests; Tracked, those whose id the insurer
	// Unnamed was asked about tracks already (Adopt leaves them).
	Requests, Tracked int
	// Others: an event (and with it any delivery) or a setting Adopt
	// renames is there.
	Others bool
}

// Any reports whether Adopt would find anything.
func (u Unnamed) Any() bool { return u.Requests > 0 || u.Others }

// Adoptable counts the requests Adopt would give the insurer.
func (u Unnamed) Adoptable() int { return u.Requests - u.Tracked }

// Unnamed reads, in one statement, what Adopt would find for the insurer
// name ("": none in particular) and the settings it renames; nothing when
// the state tables do not exist yet. It takes no lock: the daemon asks it
// each time it takes the single-instance lock.
func (st *Store) Unnamed(ctx context.Context, name string, settings []string) (Unnamed, error) {
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	tracked, args := "0", []any{}
	if name != "" {
		tracked = "(SELECT COUNT(*) FROM " + st.t.requests + " u JOIN " + st.t.requests +
			" n ON n.insurer = ? AND n.request_id = u.request_id WHERE u.insurer = '')"
		args = append(args, name)
	}
	// Every read is of an index (the outbox has none on insurer, and
	// grows): a delivery is written with its event, and Adopt gives them
	// away together, so an unnamed delivery comes with an unnamed event.
	q := "SELECT (SELECT COUNT(*) FROM " + st.t.requests + " WHERE insurer = ''), " + tracked + ", " +
		"EXISTS (SELECT 1 FROM " + st.t.events + " WHERE insurer = '')"
	if len(settings) > 0 {
		q += " OR EXISTS (SELECT 1 FROM " + st.t.settings + " WHERE name IN (?))"
		args = append(args, settings)
	}
	text, args, err := sqlx.In(q, args...)
	if err != nil {
		return Unnamed{}, err
	}
	var u Unnamed
	err = st.x.QueryRowContext(ctx, text, args...).Scan(&u.Requests, &u.Tracked, &u.Others)
	if mysqlErrno(err) == errNoSuchTable {
		return Unnamed{}, nil
	}
	if err != nil {
		return Unnamed{}, fmt.Errorf("look for the rows written without an insurer: %w", err)
	}
	return u, nil
}

// Rekey says how what is keyed by an insurer's name beside its rows
// changes with them (Adopt, MoveRest).
type Rekey struct {
	// Settings: a setting's name, its new name. A setting under the new
	// name already wins: the old one stays as it is.
	Settings map[string]string
	// OnceKeys: a prefix of the outbox's once keys, its new prefix, in the
	// deliveries given to the insurer. A key held under the new prefix
	// already wins: the old one is released.
	OnceKeys map[string]string
}

// Adopted counts what Adopt or MoveRest gave an insurer.
type Adopted struct {
	Requests, Events, Deliveries, Settings int
	// Kept are the ids of the requests left unnamed because the insurer
	// tracks a request with the same id already, sorted.
	Kept []string
}

// Any reports whether anything was adopted.
func (a Adopted) Any() bool { return a.Requests+a.Events+a.Deliveries+a.Settings > 0 }

// Adopt gives the rows written with no insurer (the empty name) to the
// insurer name, in one transaction: the requests, the events and
// deliveries but those of a request left unnamed, and what rk rekeys.
// Running it again adopts nothing.
//
// A request whose id name tracks already (an older quotesync still
// running beside a newer one recorded its own copy) is left unnamed, with
// its events and deliveries, and named in Kept; the others are adopted.
// Nothing is lost that way: both rows stay for a person to compare, the
// insurer's row is the one its passes work on, and the job number the
// copy holds stays held (the unique key on job_number). Refusing every
// row instead would leave the other requests to no insurer, where a pass
// would take a request it has no row for as new and accept it again.
func (st *Store) Adopt(ctx context.Context, name string, rk Rekey) (Adopted, error) {
	var a Adopted
	if err := CheckInsurerName(name); err != nil {
		return a, fmt.Errorf("adopt the rows written before insurers: %w", err)
	}
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	err := st.inTx(ctx, func(tx *sqlx.Tx) error {
		a = Adopted{}
		if err := tx.SelectContext(ctx, &a.Kept, "SELECT u.request_id FROM "+st.t.requests+" u JOIN "+st.t.requests+
			" n ON n.insurer = ? AND n.request_id = u.request_id WHERE u.insurer = '' ORDER BY u.request_id", name); err != nil {
			return fmt.Errorf("look for the requests insurer %s tracks already: %w", name, err)
		}
		q, args := "UPDATE "+st.t.requests+" SET insurer = ? WHERE insurer = ''", []any{name}
		if len(a.Kept) > 0 {
			q, args = q+" AND request_id NOT IN (?)", append(args, a.Kept)
		}
		text, args, err := sqlx.In(q, args...)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, text, args...)
		if mysqlErrno(err) == errDupEntry {
			return fmt.Errorf("adopt the requests: insurer %s recorded a request with the id of one of them meanwhile: try again: %w", name, ErrStale)
		}
		if err != nil {
			return fmt.Errorf("adopt the requests: %w", err)
		}
		if a.Requests, err = affected(res); err != nil {
			return err
		}
		return st.rekey(ctx, tx, "", name, rk, &a)
	})
	if err != nil {
		return Adopted{}, err
	}
	return a, nil
}

// MoveRest gives the insurer to what of the insurer from is left once its
// requests are moved (Move, request by request), in one transaction: the
// events and deliveries of from that no request of from holds (those of
// no request, such as an auth_failing notice, and any written for a
// request after it moved), and what rk rekeys.
func (st *Store) MoveRest(ctx context.Context, from, to string, rk Rekey) (Adopted, error) {
	var a Adopted
	if err := CheckInsurerName(to); err != nil {
		return a, fmt.Errorf("move the rest of insurer %s: %w", from, err)
	}
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	err := st.inTx(ctx, func(tx *sqlx.Tx) error {
		a = Adopted{}
		return st.rekey(ctx, tx, from, to, rk, &a)
	})
	if err != nil {
		return Adopted{}, fmt.Errorf("move the rest of insurer %s to %s: %w", from, to, err)
	}
	return a, nil
}

// rekey gives to, in tx, the events and deliveries of from that no
// request of from holds, the once keys rk names in to's deliveries, and
// the settings rk names.
func (st *Store) rekey(ctx context.Context, tx *sqlx.Tx, from, to string, rk Rekey, a *Adopted) error {
	for _, u := range []struct {
		table string
		n     *int
	}{{st.t.events, &a.Events}, {st.t.outbox, &a.Deliveries}} {
		res, err := tx.ExecContext(ctx, "UPDATE "+u.table+" x SET insurer = ? WHERE insurer = ? AND NOT EXISTS (SELECT 1 FROM "+
			st.t.requests+" r WHERE r.insurer = ? AND r.request_id = x.request_id)", to, from, from)
		if err != nil {
			return fmt.Errorf("give the rows of %s to insurer %s: %w", u.table, to, err)
		}
		if *u.n, err = affected(res); err != nil {
			return err
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
		res, err := tx.ExecContext(ctx, "UPDATE IGNORE "+st.t.settings+" SET name = ? WHERE name = ?", rk.Settings[old], old)
		if err != nil {
			return fmt.Errorf("rename setting %s: %w", old, err)
		}
		n, err := affected(res)
		if err != nil {
			return err
		}
		a.Settings += n
	}
	return nil
}

func affected(res sql.Result) (int, error) {
	n, err := res.RowsAffected()
	return int(n), err
}

// StrandedInsurer is an insurer no longer configured that still has live
// requests: how many, and the first of them.
type StrandedInsurer struct {
	Insurer  string
	Count    int
	Requests []string // at most the limit Stranded was given, oldest first
}

// Stranded returns the insurers not among names (and not ”) with
// requests in one of phases, each with up to limit of their request ids;
// none when the state tables do not exist yet.
func (st *Store) Stranded(ctx context.Context, names []string, phases []Phase, limit int) ([]StrandedInsurer, error) {
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	if len(names) == 0 || len(phases) == 0 {
		return nil, errors.New("read the requests of insurers no longer configured: no insurer or no phase given")
	}
	text, args, err := sqlx.In("SELECT insurer, COUNT(*) FROM "+st.t.requests+
		" WHERE phase IN (?) AND insurer NOT IN (?) AND insurer <> '' GROUP BY insurer ORDER BY insurer", phaseStrings(phases), names)
	if err != nil {
		return nil, err
	}
	var out []StrandedInsurer
	rows, err := st.x.QueryContext(ctx, text, args...)
	if mysqlErrno(err) == errNoSuchTable {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var s StrandedInsurer
		if err := rows.Scan(&s.Insurer, &s.Count); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		text, args, err := sqlx.In("SELECT request_id FROM "+st.t.requests+" WHERE insurer = ? AND phase IN (?)"+
			" ORDER BY created_at, request_id LIMIT "+strconv.Itoa(max(limit, 1)), out[i].Insurer, phaseStrings(phases))
		if err != nil {
			return nil, err
		}
		if err := st.x.SelectContext(ctx, &out[i].Requests, text, args...); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RequestsByID returns the rows of a request id under every insurer (two
// insurers' services may use one id), ordered by insurer; none when no
// insurer tracks it.
func (st *Store) RequestsByID(ctx context.Context, requestID string) ([]Request, error) {
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	rs, err := st.queryRequests(ctx, st.x, "SELECT "+requestColumns+" FROM "+st.t.requests+
		" WHERE request_id = ? ORDER BY insurer", requestID)
	if mysqlErrno(err) == errNoSuchTable {
		err = ErrNoStateTables
	}
	if err != nil {
		return nil, fmt.Errorf("read request %s: %w", requestID, err)
	}
	return rs, nil
}

// Move moves cur, a request of db's insurer, to the insurer to, with ev
// (recorded as to's), in one transaction: its row (compare-and-set on
// cur's version: ErrStale when it changed meanwhile; Version+1 and
// UpdatedAt now), its events and its deliveries. ErrExists when to has a
// request with the same id already. It returns the row as stored.
func (st *Store) Move(ctx context.Context, cur Request, to string, ev Event) (Request, error) {
	if err := CheckInsurerName(to); err != nil {
		return Request{}, fmt.Errorf("move request %s: %w", cur.RequestID, err)
	}
	parent := ctx
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	next := cur
	next.Insurer, next.Version, next.UpdatedAt = to, cur.Version+1, now()
	err := st.inTx(ctx, func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE "+st.t.requests+" SET insurer = ?, version = version + 1, updated_at = ?"+
			" WHERE insurer = ? AND request_id = ? AND version = ?", to, next.UpdatedAt, st.insurer, cur.RequestID, cur.Version)
		if mysqlErrno(err) == errDupEntry {
			return fmt.Errorf("insurer %s tracks a request %s already: %w", to, cur.RequestID, ErrExists)
		}
		if err != nil {
			return err
		}
		if n, err := affected(res); err != nil || n == 0 {
			return cmp.Or(err, ErrStale)
		}
		for _, table := range []string{st.t.events, st.t.outbox} {
			if _, err := tx.ExecContext(ctx, "UPDATE "+table+" SET insurer = ? WHERE insurer = ? AND request_id = ?",
				to, st.insurer, cur.RequestID); err != nil {
				return err
			}
		}
		ev.Insurer = to
		return st.recordEvent(ctx, tx, ev, cur, next)
	})
	if err != nil {
		return Request{}, fmt.Errorf("move request %s from insurer %s to %s: %w", cur.RequestID, st.insurer, to, st.explainWait(parent, err))
	}
	return next, nil
}
