// Package emulator is an in-memory implementation of the Repairer Quotation
// Integration Service (the insurer's API quotesync talks to), for tests,
// the demo and integrators. It follows the seed specification; where the
// seed is silent it makes the choices written down in remote/openapi.yaml
// (each marked x-seed-open) and below. It keeps its own wire types and
// never imports package remote, so that a field name wrong in the client
// cannot hide on both sides.
//
// # Use
//
//	emu, err := emulator.New(emulator.Options{Token: "devtoken", Seed: 1})
//	srv := httptest.NewServer(emu)            // API root: srv.URL + emulator.APIPrefix
//	emu.AddRequests(emulator.SeedRequest{ClaimNumber: "CLM-1"})
//	emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultLandThenDrop, Count: 1})
//	st := emu.State()                         // requests, jobs, quotes, history
//
// cmd/quotesync-emulator serves one or several (one per insurer, each with
// its own state) over HTTP.
//
// # Routes
//
// remote/openapi.yaml describes every route, its bodies, statuses and
// error codes (the contract tests hold the emulator to it). Every route is
// under APIPrefix and needs "Authorization: Bearer <Options.Token>" (401
// otherwise); bodies must be declared application/json (415) and be at
// most Options.MaxBodyBytes (413). Route names (method, space, template:
// "POST /requests/{id}") are what Calls, Fault.Route and the admin API
// use; Routes lists them. The status change is served in the four path
// forms of StatusPaths, each with PUT and POST: in the {quoteId} forms
// quoteId is the quote's type, the {status} forms change the job's
// Estimate or its only quote, and only Submitted is accepted. A path that
// exists with other methods answers 405 with an Allow header.
//
// A request is pending until accepted or until Options.Now reaches its
// expiry. Ids that are canonical integers travel as JSON numbers, others as
// strings. Quotes are one per (job, type); unknown quote members are kept
// as sent, an unknown item or rate member is a 400 unknown_field. Numbers
// are kept as the exact text sent (95.5000 stays 95.5000). Items without an
// id get an integer id unique within the job.
//
// Every error answer, of the API and of the admin API, is
//
//	{"error":{"code":"reference_in_use","message":"…","field":"referenceId",
//	          "referenceId":"RO-1","requestId":"1001"}}
//
// with code one of the Code… constants; field names the body field at
// fault ("items[2].quantity"). A 500 state_save_failed means the change was
// applied in memory but the StatePath file could not be written.
//
// # History
//
// Every successful change appends a HistoryEntry. State also gives each
// request's referenceId and each quote's SubmitCount (1 when a client
// submits exactly once) and Writes. Refused calls change nothing.
//
// # Admin API
//
// Under AdminPrefix, without a token, for loopback clients only (403
// otherwise, unless Options.AllowRemoteAdmin). Bodies are JSON whatever
// their Content-Type; admin-openapi.yaml describes it.
//
//	GET    /_emulator/state          State
//	POST   /_emulator/requests       [SeedRequest…], one SeedRequest, or {"count":N} for N random
//	                                 requests → 201 {"ids":[…]}; a SeedRequest is
//	                                 {"id":1001|"X","claim_number":"…","expiry":"RFC 3339",
//	                                  "vehicle":{…},"accident":{…},"instructions":{…}}, all optional
//	POST   /_emulator/requests/{id}/take  {"referenceId":"…"}: TakeElsewhere
//	GET    /_emulator/calls          {"POST /requests/{id}": 3, …}
//	GET    /_emulator/routes         the route names
//	GET    /_emulator/faults         the faults with id, fired and active
//	POST   /_emulator/faults         {"route":"POST /requests/{id}","action":"status","status":503,
//	                                  "retryAfter":"2s","latency":"250ms","count":1,"probability":0.5}
//	                                 → 201 {"id":"f1"}
//	DELETE /_emulator/faults[/{id}]  remove every fault, or one
//	POST   /_emulator/tokens/expire  ExpireTokens
//	POST   /_emulator/seed           {"seed":N}: reseed the random source
//	POST   /_emulator/reset          forget everything (state, calls, faults)
//
// # Faults
//
// A Fault applies to one route name, "*" for every API route, or
// RouteToken, after the token check; the first active fault that matches
// and wins its Probability draw fires, Count times (0: unlimited). Draws
// come from a source seeded by Options.Seed, so fault runs are
// reproducible. Actions (Fault documents their parameters and defaults):
//
//	status          answer Status, code injected_fault (Retry-After: RetryAfter); nothing is applied
//	latency         wait Latency, then serve normally
//	drop            close the connection unanswered; nothing is applied
//	garbage         answer 200 with a body that is not JSON; nothing is applied
//	land_then_drop  apply the call, then close the connection unanswered
//	land_then_hang  apply the call, hold the connection for Latency, then close it unanswered
//	echo            answer Status, plain text quoting the call's credentials and Options.Token
//	                in every form of EchoForms (for redaction tests); nothing is applied
//
// The land_then_ actions are the "timed out but landed" cases: a client
// that retries an accept with the same referenceId gets 409
// request_already_accepted naming it.
//
// # Modes
//
// Options.Mode picks whose reading of the service the emulator follows.
// ModeSpec, the default, is everything above. ModeDocumented behaves as
// the service's public documentation describes it:
//
//   - tokens come from an OAuth2 client-credentials endpoint at TokenPath
//     (outside APIPrefix): a form POST with grant_type=client_credentials
//     and redirect_uri, the client authenticated by HTTP Basic or in the
//     form (Options.ClientID; the secret is Options.Token). Tokens last
//     Options.TokenTTL; an expired or unknown token, or Options.Token
//     itself, gets 401;
//   - request ids are JSON strings, the claim number is claimNumber,
//     expiry carries the offset +10:00;
//   - error answers are plain text, with no JSON shape;
//   - an accept repeating the request's own referenceId is answered 400
//     "request already accepted"; one of a request someone else accepted
//     409 with a JSON body naming their referenceId and the requestId;
//   - the status change is served only as POST
//     /jobs/{jobId}/quotes/status/{status} and PUT
//     /jobs/{jobId}/quote/status/{status}; every other form, and every
//     method a path does not serve, is a 404;
//   - item types must be one of DocumentedItemTypes (400 otherwise); a
//     quote's type may be left out (it is the Estimate).
//
// # Persistence
//
// With Options.StatePath the state is loaded at New and written atomically
// after every change. Call counts, faults and access tokens are not kept
// (a client fetches a new token after the 401).
package emulator
