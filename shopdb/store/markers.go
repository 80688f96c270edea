package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"
	"github.com/quotesync/quotesync/shopdb/internal/server"
)

// MarkerUpdate is the change marker to remember for one row, written only
// while the row is still at Version.
type MarkerUpdate struct {
	RequestID string
	Version   int64
	Marker    string
}

// Bounds of one UpdateMarkers statement, in bytes as sent (arguments
// interpolated, escaped). The server refuses a statement larger than its
// max_allowed_packet (and drops the connection), so:
//
//   - up to markerAskBytes a statement is sent without asking: a quarter of
//     4 MiB, the smallest default max_allowed_packet of the servers
//     quotesync supports (MySQL 5.7; MariaDB 10.2+ has 16 MiB, MySQL 8
//     64 MiB). 10,000 markers of the sample mapping take about 0.8 MB;
//   - a larger one asks the server once (SELECT @@max_allowed_packet) and
//     stays within half of it, and within markerMaxBytes: far under the
//     driver's own limit (64 MiB, past which it would stop interpolating
//     and prepare the statement), and a bound on what one statement holds
//     in the server's memory.
const (
	markerAskBytes = 1 << 20
	markerMaxBytes = 16 << 20
)

// markerBatch is how many rows a statement writes where the server has no
// JSON_TABLE (updateMarkersCase). 500 rows keep its CASE short (each row it
// writes compares its id with every WHEN) and its size under
// markerAskBytes: about 0.8 MB when every id and marker has its column's
// full length in 4-byte characters, 60 kB for the sample mapping's.
const markerBatch = 500

// markerStatement is UpdateMarkers' statement (kept as shared.markerSQL).
// JSON_TABLE reads the rows from one JSON array argument of [request_id,
// version, marker] arrays, so the server parses one short statement
// whatever the number of rows (a derived table of 10,000 SELECTs joined
// with UNION ALL costs MariaDB more to parse than the update itself, and
// grows faster than the rows; on go-mysql-server it takes seconds for
// 300). Explicit:
//
//   - utf8mb4_bin on the JSON columns, the requests table's collation: the
//     join compares ids as the primary key does (MySQL 8 would otherwise
//     give the columns its default collation and refuse to compare them);
//   - LONGTEXT, so that no id or marker is cut to a column's length (a cut
//     id could match another row; a marker longer than pushed_marker is
//     refused, ER_DATA_TOO_LONG, as Update refuses it);
//   - STRAIGHT_JOIN from the JSON rows to the table, so that each row is
//     looked up by its primary key whatever the optimizer guesses of the
//     JSON's size.
//
// A row whose version moved matches nothing and is not written; the
// server counts the rows changed, and every row written changes (version
// + 1). An id given twice at the same version writes that row once, with
// one of its markers.
func (st *Store) markerStatement() string {
	return "UPDATE JSON_TABLE(?, '$[*]' COLUMNS (" +
		"id LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[0]', " +
		"v BIGINT PATH '$[1]', " +
		"m LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[2]')) AS d " +
		"STRAIGHT_JOIN " + st.t.requests + " AS t ON t.insurer = ? AND t.request_id = d.id AND t.version = d.v " +
		"SET t.pushed_marker = d.m, t.version = t.version + 1, t.updated_at = ?"
}

// markerSQLSlack is room in a statement for what is neither its text nor
// the JSON array: the insurer (at most 32 bytes, 34 quoted), the
// updated_at argument (28 bytes quoted) and the packet's command byte.
const markerSQLSlack = 100

// UpdateMarkers writes the PushedMarker of many rows of db's insurer (with
// Version+1 and UpdatedAt now), compare-and-set on each row's version: a
// row that changed meanwhile is left as it is (the next pass looks at it
// again) and not counted. It returns how many rows were written. No event
// is recorded: a marker is bookkeeping, not a change of phase.
//
// All the rows go in one statement (markerStatement), split only where one
// would exceed its byte bound (see markerAskBytes). A server without
// JSON_TABLE (MariaDB before 10.6, MySQL 5.7, the demo's go-mysql-server)
// refuses the statement's syntax once; from then on this DB writes
// markerBatch rows per statement instead (updateMarkersCase).
func (st *Store) UpdateMarkers(ctx context.Context, us []MarkerUpdate) (int, error) {
	us, err := textMarkers(us)
	if err != nil {
		return 0, err
	}
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	written := 0
	var buf []byte
	for len(us) > 0 && !st.markerCase.Load() {
		var n, used int
		n, used, buf, err = st.updateMarkersJSON(ctx, us, buf)
		if refusedSyntax(err) {
			// Nothing was written: the server refused it before running it.
			st.markerCase.Store(true)
			break
		}
		if err != nil {
			return written, fmt.Errorf("update change markers: %w", err)
		}
		written += n
		us = us[used:]
	}
	n, err := st.updateMarkersCase(ctx, us)
	return written + n, err
}

// textMarkers checks that us is text the requests table can hold: a
// marker that is not UTF-8 (a binary column's bytes) is an error, as the
// server would refuse it, but one that names the fix; an id that is not
// UTF-8 is no row's id, and is left out (in JSON it would break the
// whole array). us is copied only when an id is left out.
func textMarkers(us []MarkerUpdate) ([]MarkerUpdate, error) {
	var out []MarkerUpdate
	for i, u := range us {
		if !utf8.ValidString(u.Marker) {
			return nil, fmt.Errorf("update change markers: request %s: marker %+q is not UTF-8 text: "+
				"make shop.queries.estimate_state return text (HEX() of a binary column, for example)", u.RequestID, u.Marker)
		}
		switch {
		case !utf8.ValidString(u.RequestID) && out == nil:
			out = append(make([]MarkerUpdate, 0, len(us)), us[:i]...)
		case !utf8.ValidString(u.RequestID):
		case out != nil:
			out = append(out, u)
		}
	}
	if out == nil {
		return us, nil
	}
	return out, nil
}

// updateMarkersJSON writes as many of us as fit in one statement and
// returns how many rows it wrote, how many of us it sent, and buf (reused
// for the JSON array).
func (st *Store) updateMarkersJSON(ctx context.Context, us []MarkerUpdate, buf []byte) (written, used int, _ []byte, _ error) {
	stmt := st.markerSQL
	limit, known := int(st.markerBytes.Load()), true
	if limit == 0 {
		limit, known = markerAskBytes, false
	}
	buf, used = markerDoc(buf, us, limit-len(stmt)-markerSQLSlack)
	if used < len(us) && !known {
		limit = st.askMarkerBytes(ctx)
		buf, used = markerDoc(buf, us, limit-len(stmt)-markerSQLSlack)
	}
	res, err := st.x.ExecContext(ctx, stmt, string(buf), st.insurer, now())
	if err != nil {
		return 0, 0, buf, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, 0, buf, err
	}
	return int(n), used, buf, nil
}

// askMarkerBytes reads the server's max_allowed_packet once and returns
// the bound of one statement it gives (see markerAskBytes). When the server
// does not answer, markerAskBytes, for this call only.
func (st *Store) askMarkerBytes(ctx context.Context) int {
	var packet int64
	if err := st.x.GetContext(ctx, &packet, "SELECT @@max_allowed_packet"); err != nil || packet <= 0 {
		return markerAskBytes
	}
	limit := int(min(packet/2, markerMaxBytes))
	st.markerBytes.Store(int64(limit))
	return limit
}

// markerDoc puts in buf the JSON array of the first rows of us that fit in
// max bytes once escaped as a string literal (always at least one), and
// returns it and how many rows it holds.
func markerDoc(buf []byte, us []MarkerUpdate, max int) ([]byte, int) {
	buf = append(buf[:0], '[')
	size := 3 // the brackets and the literal's quotes
	for i, u := range us {
		start := len(buf)
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, '[')
		buf = appendJSONString(buf, u.RequestID)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, u.Version, 10)
		buf = append(buf, ',')
		buf = appendJSONString(buf, u.Marker)
		buf = append(buf, ']')
		cost := literalLen(buf[start:])
		if i > 0 && size+cost > max {
			return append(buf[:start], ']'), i
		}
		size += cost
	}
	return append(buf, ']'), len(us)
}

// literalLen is the length of b in a string literal as the driver
// interpolates it: escaped with backslashes (with NO_BACKSLASH_ESCAPES it
// doubles only quotes, which is shorter).
func literalLen(b []byte) int {
	n := len(b)
	for _, c := range b {
		switch c {
		case 0, '\n', '\r', '\\', '\'', '"', 0x1a:
			n++
		}
	}
	return n
}

// appendJSONString appends s, UTF-8 text (see textMarkers), to b as a JSON
// string. Characters from U+0020 up are written as they are (the server
// reads the JSON as utf8mb4): the shortest string JSON can make.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// updateMarkersCase writes us in statements of markerBatch rows, each a
// CASE on the request id: the form every MySQL-compatible server takes.
func (st *Store) updateMarkersCase(ctx context.Context, us []MarkerUpdate) (int, error) {
	written := 0
	for len(us) > 0 {
		batch := us[:min(len(us), markerBatch)]
		us = us[len(batch):]
		var cases strings.Builder
		args := make([]any, 0, 4*len(batch)+1)
		for _, u := range batch {
			cases.WriteString(" WHEN ? THEN ?")
			args = append(args, u.RequestID, u.Marker)
		}
		args = append(args, now(), st.insurer)
		keys := placeholders(len(batch), "(?, ?)")
		for _, u := range batch {
			args = append(args, u.RequestID, u.Version)
		}
		res, err := st.x.ExecContext(ctx, "UPDATE "+st.t.requests+" SET pushed_marker = CASE request_id"+cases.String()+
			" END, version = version + 1, updated_at = ? WHERE insurer = ? AND (request_id, version) IN ("+keys+")", args...)
		if err != nil {
			return written, fmt.Errorf("update change markers: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return written, fmt.Errorf("update change markers: %w", err)
		}
		written += int(n)
	}
	return written, nil
}

// refusedSyntax reports whether err is the server refusing a statement's
// syntax, as a server without JSON_TABLE (or without its column
// collations) refuses markerStatement's.
func refusedSyntax(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	switch me.Number {
	case server.ErrParse, server.ErrSyntax:
		return true
	case server.ErrUnknown:
		return strings.Contains(me.Message, "syntax error")
	}
	return false
}
