// Package sync is quotesync's reconciler: it turns the remote integration
// service and the shop database into the workflow the workshop asked for.
//
// Every pass lists the pending quote requests, accepts new ones with a job
// number from the shop (committed locally as "reserved" before the accept
// call), pushes each accepted job's Estimate as a Draft whenever the shop's
// lines change, and changes its status to Submitted, once, when the shop
// marks the estimate final. Everything a crash or a fault can leave behind is
// repaired by the next pass.
//
// The state machine of a tracked request lives in one place, machine.go: its
// phases, the transitions allowed between them, the reasons and the intents,
// as tables. The decisions (decide_accept.go, decide_reserve.go,
// decide_push.go, retry.go) are pure functions from the rows, the shop's
// facts, the remote's answers, the clock and chance to plans and changes
// (plan.go); the executor (exec.go) performs them: it checks each change
// against the table, writes it with its event and its deliveries in one
// transaction, and hands the event to the observers (the log, the metrics,
// the outbox, the demo, tests). Every write of a request's state goes
// through it, `quotesync retry`'s, the moves between insurers, the markers
// and the notices too. A dry run is the same decisions, their plans printed
// instead of performed. ARCHITECTURE.md at the top of the repository draws
// the whole.
//
// The engine reads the shop through the integrator's mapping (Shop:
// package shopdb) and keeps its own state in quotesync's store (Store:
// package shopdb/store), on the same connection pool. Open assembles the
// daemon (database, remote clients, engines) for the command, the demo and
// the tests alike.
//
// The package shadows the standard library's sync: import it under an alias
// such as qsync.
package sync
