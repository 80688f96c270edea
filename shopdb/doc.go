// Package shopdb is everything quotesync does with SQL, on the shop's
// MySQL or MariaDB database:
//
//   - the mapping: the integrator's named queries (Config.Queries) that find
//     or create the job for a request, read its booking date, its estimate
//     lines (validated into Line values, decimal end to end) and whether its
//     estimate is final;
//   - quotesync's own state, in tables with a configurable prefix created
//     by embedded, versioned migrations (Migrate): one row per remote
//     request (Request), written by Insert and moved by compare-and-set
//     (Update), an append-only event log, and a few settings. shopdb stores
//     the phase, reason and intent columns as the reconciler (package sync)
//     gives them: it knows none of their values;
//   - the single-instance lock (AcquireLock) for an HA pair.
//
// Batched reads cost one statement whatever the number of jobs:
// OpenRequests, JobStates and LineItems each send one query, so an idle
// pass over 10,000 jobs costs a constant number of round trips (RoundTrips
// counts them). Arguments are interpolated by the driver, so there is no
// prepare round trip and no 65,535-placeholder limit on "IN (:jobs)".
// UpdateMarkers writes any number of rows' markers in one statement too
// (JSON_TABLE; CASE statements of 500 rows on servers without it).
//
// Every transaction runs at READ COMMITTED (set per session when a
// connection opens, in SQL that MariaDB 10.11 and MySQL 8 both accept).
// InTx gives the reconciler one transaction in which it reads a request's
// row, runs find_job, create_job, booking_date or release_job and writes
// the row: a connection lost half-way leaves neither a job nor a row
// behind.
//
// Portability notes (MariaDB 10.11, MySQL 8, go-mysql-server for the demo):
// DDL commits implicitly on all of them, hence one statement per migration
// step; GET_LOCK names are limited to 64 characters on MySQL 8 (long names
// are hashed); request JSON is kept in MEDIUMTEXT, not JSON, so that MySQL
// does not reorder it.
//
// shopdb never logs: it returns errors, and the caller decides. The
// password never appears in errors or in Config.String.
package shopdb
