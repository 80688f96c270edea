package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
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

// Unnamed is what an adoption (Adoptable, then Move with the rest) would
// find: the rows written with no insurer (the empty name), by a quotesync
// of before insurers, or by one still running beside a newer one that
// migrated the tables.
type Unnamed struct {
	// Requests counts the requests; Tracked, those whose id the insurer
	// Unnamed was asked about tracks already (an adoption leaves them).
	Requests, Tracked int
	// Others: an event (and with it any delivery) or a setting an
	// adoption renames is there.
	Others bool
}

// Any reports whether an adoption would find anything.
func (u Unnamed) Any() bool { return u.Requests > 0 || u.Others }

// Adoptable counts the requests an adoption would give the insurer.
func (u Unnamed) Adoptable() int { return u.Requests - u.Tracked }

// Unnamed reads, in one statement, what an adoption would find for the
// insurer name ("": none in particular) and the settings it renames;
// nothing when the state tables do not exist yet. It takes no lock: the
// daemon asks it each time it takes the single-instance lock.
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
	// grows): a delivery is written with its event and adopted with it, so
	// an unnamed delivery comes with an unnamed event.
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
	text, args, err := sqlx.In("SELECT insurer, COUNT(*) AS count FROM "+st.t.requests+
		" WHERE phase IN (?) AND insurer NOT IN (?) AND insurer <> '' GROUP BY insurer ORDER BY insurer", strs(phases), names)
	if err != nil {
		return nil, err
	}
	var out []StrandedInsurer
	err = st.x.SelectContext(ctx, &out, text, args...)
	if mysqlErrno(err) == errNoSuchTable {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for i := range out {
		text, args, err := sqlx.In("SELECT request_id FROM "+st.t.requests+" WHERE insurer = ? AND phase IN (?)"+
			" ORDER BY created_at, request_id LIMIT "+strconv.Itoa(max(limit, 1)), out[i].Insurer, strs(phases))
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
	return st.selectRequests(ctx, "read request "+requestID, nil, "SELECT "+requestColumns+" FROM "+st.t.requests+
		" WHERE request_id = ? ORDER BY insurer", requestID)
}
