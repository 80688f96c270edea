package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
)

// maxCheckPending bounds how many pending requests check looks up in the
// shop (three short queries each).
const maxCheckPending = 200

// MySQL error numbers check explains.
const (
	errAccessDenied   = 1045 // ER_ACCESS_DENIED_ERROR: user or password
	errDBAccessDenied = 1044 // ER_DBACCESS_DENIED_ERROR: no rights on the database
	errBadDB          = 1049 // ER_BAD_DB_ERROR: unknown database
	// errTableAccessDenied: ER_TABLEACCESS_DENIED_ERROR, a command denied
	// on a table.
	errTableAccessDenied = 1142
)

// checkWorkTypes checks that shop.work_types covers the operation codes of
// the estimates quotesync would push next: the jobs of the requests it
// tracks (not submitted, not gone) and the shop's jobs for the requests
// pending on the remote now (found by find_job, read-only). line_items runs
// over those jobs with the configured mapping, which flags every line whose
// code is not mapped. A shop has no generic "open estimates" query, so
// these are the estimates that matter: any other job is checked by the
// daemon when a request for it arrives (the job is held, with the line
// named, until the code is mapped).
func checkWorkTypes(ctx context.Context, cl *checklist, db *shopdb.DB, workTypes map[string]string, pending []remote.Request) {
	ctx, cancel := context.WithTimeout(ctx, 2*checkTimeout)
	defer cancel()
	cur, _, err := db.SchemaVersion(ctx)
	if err != nil {
		cl.add(checkSkip, "work types", "not checked: %v", err)
		return
	}
	jobs := map[string]bool{}
	var tracked, found int
	var notes []string
	if cur > 0 {
		rows, err := db.ListRequests(ctx, false, 0)
		if err != nil {
			cl.add(checkFail, "work types", "list the tracked requests: %v", err)
			return
		}
		for _, r := range rows {
			if r.JobNumber != "" && !jobs[r.JobNumber] {
				jobs[r.JobNumber] = true
				tracked++
			}
		}
	}
	if len(pending) > maxCheckPending {
		notes = append(notes, fmt.Sprintf("looked up the first %d of %d pending requests", maxCheckPending, len(pending)))
		pending = pending[:maxCheckPending]
	}
	for _, req := range pending {
		nr := shopdb.NewRequest{RequestID: req.ID, ClaimNumber: req.ClaimNumber, Expiry: req.Expiry, RequestJSON: req.Raw}
		job, create, err := db.PlanReserve(ctx, nr)
		switch {
		case errors.Is(err, shopdb.ErrNoJob) || (err == nil && create):
			// no job in the shop yet: no lines to check
		case err != nil:
			cl.add(checkFail, "work types", "look up the shop's job for pending request %s: %v", req.ID, err)
			return
		case !jobs[job]:
			jobs[job] = true
			found++
		}
	}
	list := make([]string, 0, len(jobs))
	for j := range jobs {
		list = append(list, j)
	}
	sort.Strings(list)
	lines, bad, err := db.LineItems(ctx, list)
	if err != nil {
		cl.add(checkFail, "work types", "run shop.queries.line_items over %d jobs: %v", len(list), err)
		return
	}
	codes := map[string]int{}
	for _, ls := range lines {
		for _, l := range ls {
			codes[l.Code]++
		}
	}
	var unmapped, warns []string
	missing := map[string]bool{}
	for _, j := range sortedJobs(bad) {
		var re *shopdb.RowError
		if errors.As(bad[j], &re) && re.UnmappedCode != "" {
			unmapped = append(unmapped, re.Error())
			missing[re.UnmappedCode] = true
			continue
		}
		warns = append(warns, bad[j].Error())
	}
	scope := fmt.Sprintf("%s (%d tracked, %d of pending requests)", plural(len(list), "job"), tracked, found)
	if len(notes) > 0 {
		scope += "; " + strings.Join(notes, "; ")
	}
	switch {
	case len(unmapped) > 0:
		var hint []string
		for _, code := range sortedNames(missing) {
			hint = append(hint, fmt.Sprintf("%q: <work type, e.g. Miscellaneous>", code))
		}
		cl.add(checkFail, "work types", "%d of %s have lines whose code is not under shop.work_types:\n%s\nunder shop.work_types add %s",
			len(unmapped), scope, strings.Join(unmapped, "\n"), strings.Join(hint, ", "))
	case len(list) == 0:
		cl.add(checkOK, "work types", "no estimates to look at yet: quotesync tracks no job, and no pending request has a job in the shop; the daemon checks each job's codes before its first push (mapped codes: %s)",
			strings.Join(sortedNames(workTypes), ", "))
	default:
		cl.add(checkOK, "work types", "every code on %s is mapped; codes seen: %s", scope, codeCounts(codes))
	}
	for _, w := range warns {
		cl.add(checkWarn, "shop data", "%s: the daemon holds this job until the shop fixes the line", w)
	}
}

// codeCounts renders {"PART": 3, "R&R": 2} as "PART ×3, R&R ×2".
func codeCounts(codes map[string]int) string {
	keys := sortedNames(codes)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d", k, codes[k])
	}
	return strings.Join(parts, ", ")
}

func sortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedJobs(m map[string]error) []string { return sortedNames(m) }

// mysqlErrno is the server's error number in err, 0 when none.
func mysqlErrno(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// explainDBError says what a failed connection means and what to do; it
// names the user, the address and where the password comes from, never
// the password.
func explainDBError(err error, set *settings) string {
	sh := set.shop
	from := "no password configured (shop.password_file)"
	if set.passwordFrom != "" {
		from = "the password from " + set.passwordFrom
	}
	var ne *net.OpError
	switch n := mysqlErrno(err); {
	case n == errAccessDenied:
		return fmt.Sprintf("%v\nthe server refused the login: check shop.user (%s) and %s, and that the user may connect from this host", err, sh.User, from)
	case n == errDBAccessDenied:
		return fmt.Sprintf("%v\nuser %s has no rights on database %s: GRANT SELECT, INSERT, UPDATE, CREATE, ALTER, INDEX ON `%s`.* TO the quotesync user", err, sh.User, sh.Database, sh.Database)
	case n == errBadDB:
		return fmt.Sprintf("%v\ndatabase %s does not exist on the server: check shop.database", err, sh.Database)
	case errors.As(err, &ne):
		return fmt.Sprintf("%v\nnothing answers there: check shop.addr and that the database server runs", err)
	}
	return err.Error()
}
