// Package store is quotesync's own state in the shop's MySQL or MariaDB
// database, in tables beside the shop's with a configurable prefix
// (shop.table_prefix), created by embedded, versioned migrations
// (Migrate):
//
//   - one row per remote request (Request), written by Insert and moved
//     by compare-and-set (Update), an append-only event log, the outbox of
//     what each event delivers (the shop's write-back, notifications), and
//     a few settings. The store keeps the phase, reason and intent columns
//     as the reconciler (package sync) gives them: it knows none of their
//     values;
//   - the single-instance lock (AcquireLock) for an HA pair.
//
// Its methods are the only SQL that writes quotesync's tables (a test
// reads every other package's statements to keep it so). Of them, the
// writes of a request's state (Insert, Update, a Tx's, Move,
// UpdateMarkers, RecordOnce) are the executor's (package sync), which
// checks each change against the state machine first and reports it to
// the observers; the rest is not a request's state: the outbox's marks
// (Deliver, DeliveryFailed, ReleaseOnce), the settings (PutSetting), what
// an insurer keeps beside its requests (MoveRest) and the migrations'
// records (Migrate).
//
// The store lives on package shopdb's connection (New takes a *shopdb.DB)
// and knows nothing of the mapping's statements. Where one transaction
// spans both, the store opens it: InTx locks the request's row, the
// mapping's job statements run on Tx.SQL (shopdb.DB.Jobs), and the row is
// written in it; Deliver marks a delivery done in the transaction the
// mapping's write-back statement runs in.
//
// Batched reads and writes cost one statement whatever the number of rows:
// OpenRequests, and UpdateMarkers (JSON_TABLE; see it for servers without).
//
// Portability notes (MariaDB 10.11, MySQL 8, go-mysql-server for the demo):
// DDL commits implicitly on all of them, hence one statement per migration
// step; GET_LOCK names are limited to 64 characters on MySQL 8 (long names
// are hashed); request JSON is kept in MEDIUMTEXT, not JSON, so that MySQL
// does not reorder it.
//
// The store never logs: it returns errors, and the caller decides.
package store
