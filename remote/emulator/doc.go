// Package emulator is an in-memory implementation of the Repairer Quotation
// Integration Service (the insurer's API quotesync talks to), for tests,
// the demo and integrators who develop against it. It follows the seed
// specification; where the seed is silent it makes the choices written down
// in remote/openapi.yaml (each marked x-seed-open) and below.
//
// It keeps its own wire types and never imports package remote, so a field
// name that is wrong in the client cannot hide on both sides.
//
// # Use
//
// From Go:
//
//	emu, err := emulator.New(emulator.Options{Token: "devtoken", Seed: 1})
//	srv := httptest.NewServer(emu)            // API root: srv.URL + emulator.APIPrefix
//	emu.AddRequests(emulator.SeedRequest{ClaimNumber: "CLM-1"})
//	emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultLandThenDrop, Count: 1})
//	st := emu.State()                         // requests, jobs, quotes, history
//
// From the command line (the admin API is shown further down):
//
//	quotesync-emulator --listen 127.0.0.1:8099 --token-file token.txt --seed-requests 3 --state emu.json
//
// Several emulators side by side, one per insurer, each its own Emulator
// with its own state (in Go: one New and one httptest.NewServer each):
//
//	quotesync-emulator \
//	  --instance 'name=aa,listen=127.0.0.1:8099,token-file=aa.txt,seed-requests=3' \
//	  --instance 'name=bb,listen=127.0.0.1:8098,mode=documented,token-file=bb.txt,seed-requests=3'
//
// # Routes
//
// Every route is under APIPrefix (/integrations/repairer) and needs the
// header "Authorization: Bearer <Options.Token>" (401 unauthorized
// otherwise). Bodies must be declared "Content-Type: application/json"
// (415) and may be at most Options.MaxBodyBytes, 1 MiB by default (413).
// Route names (method, space, template) are what Calls, Fault.Route and the
// admin API use:
//
//	GET  /requests                   200 pending, non-expired requests, oldest first
//	POST /requests/{id}              201 Job + Location: {base}/integrations/repairer/jobs/<referenceId>
//	                                 body {"referenceId": "RO-1", "bookingDate": "2025-06-05"}
//	                                 400 referenceId missing/empty/over 100 characters, bookingDate not
//	                                 YYYY-MM-DD, unknown field; 404 request_not_found;
//	                                 409 request_already_accepted (error.referenceId says with which
//	                                 referenceId); 409 reference_in_use (error.requestId says by which
//	                                 request); 410 request_expired
//	POST /jobs/{id}/quotes           201 Quote created; 200 Quote when it replaced the Draft of that type;
//	                                 404 job_not_found; 409 quote_submitted; 400 naming the field
//	PUT  /jobs/{id}/quotes/{type}    200 Draft updated (type from the path, status defaults to Draft);
//	                                 404 quote_not_found; 409 quote_submitted
//	PUT|POST /jobs/{jobId}/quote/{quoteId}/status     body {"status":"Submitted"} required
//	PUT|POST /jobs/{jobId}/quotes/{quoteId}/status    body {"status":"Submitted"} required
//	PUT|POST /jobs/{jobId}/quote/status/{status}      body optional, must agree with the path
//	PUT|POST /jobs/{jobId}/quotes/status/{status}     body optional, must agree with the path
//	                                 200 Quote now Submitted; 409 quote_already_submitted (also for a
//	                                 quote created Submitted); 404 job_not_found / quote_not_found
//
// In the {quoteId} forms quoteId is the quote's type (Estimate); the
// {status} forms change the job's Estimate, or its only quote. Only
// Submitted is accepted as the new status (400 otherwise). A path that
// exists with other methods answers 405 with an Allow header.
//
// A request is pending until it is accepted or until Options.Now reaches
// its expiry; GET /requests lists only pending ones. Request ids that are
// canonical integers travel as JSON numbers, others as strings; expiry is
// an RFC 3339 UTC date-time. A listed request has id, expiry, claim_number,
// instructions and, when seeded, vehicle and accident.
//
// Quotes: one per (job, type). type and status (Draft or Submitted) are
// required on POST; referenceId is optional and must equal the job id.
// Items need type, description, quantity, price and total; id, order,
// metadata (string values), partNumber, markup and isOnReport are optional;
// an unknown item or rate member is a 400 unknown_field, while unknown quote
// members are kept as sent. Numbers are kept as the exact text sent
// (95.5000 stays 95.5000), never through float64. Items without an id get
// an integer id unique within the job; string ids are kept; ids repeated in
// one quote are a 400. Answers always carry rates and items.
//
// # Error body
//
// Every error answer, of the API and of the admin API, is
//
//	{"error":{"code":"reference_in_use","message":"…","field":"referenceId",
//	          "referenceId":"RO-1","requestId":"1001"}}
//
// with code one of the Code… constants; field names the offending body
// field of a 400 ("items[2].quantity"); referenceId and requestId appear
// on the 409s of accept. A 500 state_save_failed means the change was
// applied in memory but the StatePath file could not be written.
//
// # History and invariants
//
// Every successful change appends a HistoryEntry (HistoryAccept,
// HistoryQuoteCreate, HistoryQuoteReplace, HistoryQuoteUpdate,
// HistoryStatusChange) with a sequence number, the emulator's time, the
// route name, the request and job ids, and the Job or Quote as stored.
// State also gives per request the referenceId it was accepted with and
// per quote SubmitCount (how often it became Submitted: 1 when a client
// submits exactly once) and Writes. Refused calls change nothing.
//
// # Admin API
//
// Under AdminPrefix (/_emulator/), without a token, answered to loopback
// clients only (403 forbidden otherwise, unless Options.AllowRemoteAdmin).
// It mirrors the Go API; bodies are JSON whatever their Content-Type.
// remote/emulator/admin-openapi.yaml describes it.
//
//	GET    /_emulator/state          State (requests, jobs with quotes, history)
//	POST   /_emulator/requests       [SeedRequest…], one SeedRequest, or {"count":N} for N random
//	                                 realistic requests → 201 {"ids":[…]}; a SeedRequest is
//	                                 {"id":1001|"X","claim_number":"…","expiry":"RFC 3339",
//	                                  "vehicle":{…},"accident":{…},"instructions":{…}}, all optional
//	GET    /_emulator/calls          {"POST /requests/{id}": 3, …}
//	GET    /_emulator/routes         the route names
//	GET    /_emulator/faults         the faults with id, fired and active
//	POST   /_emulator/faults         {"route":"POST /requests/{id}","action":"status","status":503,
//	                                  "retryAfter":"2s","latency":"250ms","count":1,"probability":0.5}
//	                                 → 201 {"id":"f1"}
//	DELETE /_emulator/faults         remove every fault
//	DELETE /_emulator/faults/{id}    remove one
//	POST   /_emulator/seed           {"seed":N}: reseed the random source
//	POST   /_emulator/reset          forget everything (state, calls, faults)
//
// # Faults
//
// A Fault applies to one route name (or "*" for every API route) after the
// token check; the first active fault that matches and wins its
// Probability draw fires, Count times (0: unlimited). Actions:
//
//	status          answer Status (default 503) with the error body, code injected_fault,
//	                and Retry-After when RetryAfter is set; nothing is applied
//	latency         wait Latency (holding no lock), then serve normally
//	drop            close the connection without an answer; nothing is applied
//	garbage         answer 200 with a body that is not JSON; nothing is applied
//	land_then_drop  apply the call, then close the connection without an answer
//	land_then_hang  apply the call, then hold the connection for Latency (0: until the
//	                client goes away, at most DefaultMaxHang), then close it unanswered
//	echo            answer Status (default 400) with a plain-text body that quotes the
//	                call's credentials (its Authorization header, the bearer token or the
//	                Basic header's, a form's client_secret, and Options.Token) in every
//	                form a service echoes them: as sent, URL-encoded in either hex case,
//	                JSON-escaped (\/, \u002f), base64 and base64url with and without
//	                padding; nothing is applied. For redaction tests.
//
// RouteToken names ModeDocumented's token endpoint as a fault's route:
// an echo fault there quotes the client's id and secret as the client
// credentials grant sent them.
//
// The last two are the "timed out but landed" cases: a client that retries
// an accept with the same referenceId gets 409 request_already_accepted
// naming that referenceId. Probability draws come from a math/rand/v2
// source seeded by Options.Seed (or SetSeed), so fault runs are
// reproducible.
//
// # Modes
//
// Options.Mode (quotesync-emulator --mode) picks whose reading of the
// service the emulator follows. ModeSpec, the default, is everything
// above. ModeDocumented behaves as the service's public documentation
// describes it, where that differs from the seed:
//
//   - tokens come from an OAuth2 client-credentials endpoint at TokenPath
//     (/oauth2/token, outside APIPrefix): a form POST with
//     grant_type=client_credentials and redirect_uri, the client
//     authenticated by HTTP Basic or by client_id and client_secret in the
//     form (Options.ClientID, default DefaultClientID; the secret is
//     Options.Token). Tokens last Options.TokenTTL (DefaultTokenTTL); an
//     expired or unknown token, or Options.Token itself, gets 401.
//     ExpireTokens (POST /_emulator/tokens/expire) expires every token now;
//     TokenCalls counts the endpoint's calls;
//   - request ids are JSON strings, the claim number is claimNumber (in the
//     list and in the accepted job), expiry carries the offset +10:00;
//   - error answers are plain text (the message), with no JSON shape;
//   - an accept repeating the referenceId the request was accepted with
//     is answered 400 "request already accepted"; an accept of a request
//     someone else accepted is answered 409 with a JSON body naming their
//     referenceId and the requestId;
//   - the status change is served only as POST
//     /jobs/{jobId}/quotes/status/{status} and PUT
//     /jobs/{jobId}/quote/status/{status}; every other form, and every
//     method a path does not serve, is a 404;
//   - item types must be one of DocumentedItemTypes (400 otherwise); a
//     quote's type may be left out (it is the Estimate).
//
// TakeElsewhere (POST /_emulator/requests/{id}/take, in both modes) has
// another party accept a pending request with its own referenceId, as
// another workshop system or the insurer's portal would.
//
// # Persistence
//
// With Options.StatePath the state is loaded at New and written after every
// change (to a temporary file in the same directory, then renamed over the
// file), so it survives restarts. Call counts, faults and the documented
// mode's access tokens are not kept (a client fetches a new token after
// the 401).
package emulator
