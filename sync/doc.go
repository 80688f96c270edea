// Package sync is quotesync's reconciler: it turns the remote integration
// service and the shop database into the workflow the workshop asked for.
//
// Every pass lists the pending quote requests, accepts new ones with a job
// number from the shop (committed locally as "reserved" before the accept
// call), pushes each accepted job's Estimate as a Draft whenever the shop's
// lines change, and changes its status to Submitted, once, when the shop
// marks the estimate final. Everything a crash or a fault can leave behind is
// repaired by the next pass; see DESIGN.md for the state machine and the
// rules that make it safe.
//
// The package shadows the standard library's sync: import it under an alias
// such as qsync.
package sync
