// Package shopdb is quotesync's connection to the shop's MySQL or MariaDB
// database and the integrator's mapping of the shop's tables: the named
// queries (Config.Queries) that find or create the job for a request, read
// its booking date, its estimate lines (validated into Line values,
// decimal end to end) and whether its estimate is final, and the
// write-back statements; `quotesync init`'s discovery of an unknown schema
// is its sub-package discover. quotesync's own tables are the store's
// (package store), on the pool Open makes; shopdb knows nothing of them.
//
// Batched reads cost one statement whatever the number of jobs: JobStates
// and Lines each send one query, so an idle pass over 10,000 jobs costs a
// constant number of round trips (shopdbtest.Trips counts them in tests).
// Arguments are interpolated by the driver, so there is no prepare round
// trip and no 65,535-placeholder limit on "IN (:jobs)".
//
// Every transaction runs at READ COMMITTED (set per session when a
// connection opens, in SQL that MariaDB 10.11 and MySQL 8 both accept).
// The job statements (Jobs) and the write-back (WriteBack) run in a
// transaction the store opens, in which it writes its own row: a
// connection lost half-way leaves neither a job nor a row behind.
//
// shopdb never logs: it returns errors, and the caller decides. The
// password never appears in errors or in Config.String.
package shopdb
