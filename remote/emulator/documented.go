package emulator

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Modes of the emulator (Options.Mode).
const (
	// ModeSpec follows the seed specification: numeric request ids,
	// claim_number, UTC expiry, a static bearer token, JSON error bodies,
	// 409 on a repeated accept, the four status path forms with PUT and
	// POST, any item type. It is the default.
	ModeSpec = "spec"
	// ModeDocumented behaves as the service's public documentation
	// describes it: string request ids, claimNumber, expiry with a local
	// UTC offset, OAuth2 client-credentials tokens that expire, plain-text
	// error bodies, "400 request already accepted" on a repeated accept,
	// only the two documented status forms, only the six documented item
	// types, quote type optional.
	ModeDocumented = "documented"
)

// Defaults of the documented mode.
const (
	// DefaultClientID is the OAuth2 client id when Options.ClientID is "".
	DefaultClientID = "quotesync-emulator"
	// DefaultTokenTTL is the lifetime of an access token when
	// Options.TokenTTL is zero.
	DefaultTokenTTL = 5 * time.Minute
	// TokenPath is the OAuth2 token endpoint of the documented mode (not
	// under APIPrefix).
	TokenPath = "/oauth2/token"
)

// documentedZone is the UTC offset the documented mode writes request
// expiries with (the service's local time).
var documentedZone = time.FixedZone("+10:00", 10*60*60)

// ErrMode is returned by New when Options.Mode is not a known mode.
var ErrMode = errors.New("emulator: Options.Mode must be " + ModeSpec + " or " + ModeDocumented)

// DocumentedItemTypes are the quote item types the public documentation
// lists; the documented mode refuses any other with 400.
func DocumentedItemTypes() []string {
	return []string{"RemoveReplaceLabour", "RepairLabour", "RefinishLabour", "MechanicalLabour", "Parts", "Miscellaneous"}
}

// documentedStatusRoutes are the status-change routes the documentation
// shows: its worked example and the form of its prose.
func documentedStatusRoutes() []string {
	return []string{
		http.MethodPost + " " + StatusPaths()[3], // POST /jobs/{jobId}/quotes/status/{status}
		http.MethodPut + " " + StatusPaths()[2],  // PUT /jobs/{jobId}/quote/status/{status}
	}
}

// documented reports whether the emulator runs in ModeDocumented.
func (e *Emulator) documented() bool { return e.opts.Mode == ModeDocumented }

// Mode returns the emulator's mode, ModeSpec or ModeDocumented.
func (e *Emulator) Mode() string { return e.opts.Mode }

// served reports whether the emulator's mode serves route rt.
func (e *Emulator) served(rt *route) bool {
	if rt == nil || !e.documented() || !slices.Contains(StatusPaths(), strings.SplitN(rt.name, " ", 2)[1]) {
		return true
	}
	return slices.Contains(documentedStatusRoutes(), rt.name)
}

// writeError answers with aerr in the body shape of the emulator's mode:
// the JSON error body in ModeSpec; in ModeDocumented the message as plain
// text (the documentation gives no error shape), or aerr's own JSON body
// when it carries one (the 409 naming another party's referenceId).
func (e *Emulator) writeError(w http.ResponseWriter, aerr *apiError) {
	if !e.documented() {
		writeError(w, aerr)
		return
	}
	if aerr.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="quotesync-emulator"`)
	}
	if aerr.body != nil {
		writeRawJSON(w, aerr.status, aerr.body)
		return
	}
	msg := aerr.detail.Message
	if aerr.plain != "" {
		msg = aerr.plain
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", fmt.Sprint(len(msg)+1))
	w.WriteHeader(aerr.status)
	_, _ = w.Write([]byte(msg + "\n"))
}

// alreadyAccepted is the answer to an accept of a request that holds
// referenceId held. In ModeSpec: 409 request_already_accepted naming it.
// In ModeDocumented: 400 "request already accepted" when the accept
// repeats that referenceId (a re-sent accept), else 409 with a JSON body
// naming the other party's referenceId.
func (e *Emulator) alreadyAccepted(id, ref, held string) *apiError {
	if e.documented() && ref == held {
		aerr := newError(http.StatusBadRequest, CodeRequestAlreadyAccepted, "request %s was already accepted with referenceId %q", id, held)
		aerr.plain = "request already accepted"
		return aerr
	}
	aerr := newError(http.StatusConflict, CodeRequestAlreadyAccepted,
		"request %s was already accepted with referenceId %q", id, held)
	aerr.detail.Field, aerr.detail.ReferenceID, aerr.detail.RequestID = "referenceId", held, id
	if e.documented() {
		var w jsonWriter
		w.open()
		w.value("message", "request already accepted by another party")
		w.value("referenceId", held)
		w.value("requestId", id)
		w.close()
		aerr.body = w.buf.Bytes()
	}
	return aerr
}

// TakeElsewhere has another party (another workshop system, the insurer's
// portal) accept pending request id with its own referenceId ref, as if
// through the API: the request leaves the pending list and a job ref is
// created; a later accept of ours is answered with the conflict of the
// emulator's mode naming ref. It works in both modes.
func (e *Emulator) TakeElsewhere(id, ref string) error {
	if aerr := checkReferenceID(ref); aerr != nil {
		return fmt.Errorf("take request %s elsewhere: %s", id, aerr.detail.Message)
	}
	e.mu.Lock()
	_, aerr := e.acceptLocked(id, ref, "")
	e.mu.Unlock()
	if aerr == nil {
		aerr = e.commit()
	}
	if aerr != nil {
		return fmt.Errorf("take request %s elsewhere: %s", id, aerr.detail.Message)
	}
	return nil
}

// checkDocumentedQuote applies the documented mode's rules to a decoded
// quote: type defaults to Estimate, items have a documented type.
func (e *Emulator) checkDocumentedQuote(q *quote) *apiError {
	if !e.documented() {
		return nil
	}
	if q.Type == "" {
		q.Type = quoteTypeEstimate
	}
	for i, it := range q.Items {
		if !slices.Contains(DocumentedItemTypes(), it.Type) {
			return fieldError(CodeInvalidField, fmt.Sprintf("items[%d].type", i),
				"items[%d].type %q is not a documented item type; use one of %s",
				i, it.Type, strings.Join(DocumentedItemTypes(), ", "))
		}
	}
	return nil
}

// serveToken serves the OAuth2 client-credentials token endpoint of the
// documented mode (RFC 6749 section 4.4): a form POST with grant_type
// client_credentials and redirect_uri, the client authenticated by HTTP
// Basic or by client_id and client_secret in the form. Errors are the
// OAuth2 JSON shape ({"error":"invalid_client"}).
func (e *Emulator) serveToken(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.tokenCalls++
	e.mu.Unlock()
	if f, ok := e.pickFault(RouteToken); ok {
		e.applyFault(w, r, f, func(w http.ResponseWriter) { e.issueToken(w, r) })
		return
	}
	e.issueToken(w, r)
}

// issueToken is the token endpoint's answer to r.
func (e *Emulator) issueToken(w http.ResponseWriter, r *http.Request) {
	oauthErr := func(status int, code, desc string) {
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="quotesync-emulator"`)
		}
		writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		oauthErr(http.StatusMethodNotAllowed, "invalid_request", "the token endpoint takes POST")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, e.opts.MaxBodyBytes)
	if err := r.ParseForm(); err != nil {
		oauthErr(http.StatusBadRequest, "invalid_request", "the body must be an application/x-www-form-urlencoded form")
		return
	}
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	switch {
	case r.PostForm.Get("grant_type") != "client_credentials":
		oauthErr(http.StatusBadRequest, "unsupported_grant_type", "grant_type must be client_credentials")
		return
	case subtle.ConstantTimeCompare([]byte(id), []byte(e.opts.ClientID)) != 1 ||
		subtle.ConstantTimeCompare([]byte(secret), []byte(e.opts.Token)) != 1:
		oauthErr(http.StatusUnauthorized, "invalid_client", "unknown client id or wrong client secret")
		return
	case r.PostForm.Get("redirect_uri") == "":
		oauthErr(http.StatusBadRequest, "invalid_request", "redirect_uri is required")
		return
	}
	var b [24]byte
	_, _ = rand.Read(b[:])
	tok := hex.EncodeToString(b[:])
	e.mu.Lock()
	e.tokens[tok] = e.now().Add(e.opts.TokenTTL)
	e.issued = append(e.issued, tok)
	e.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": tok, "token_type": "Bearer", "expires_in": int64(e.opts.TokenTTL.Round(time.Second) / time.Second),
	})
}

// validToken reports whether tok was issued by the token endpoint and has
// not expired.
func (e *Emulator) validToken(tok string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	exp, ok := e.tokens[tok]
	if ok && !e.now().Before(exp) {
		delete(e.tokens, tok)
		return false
	}
	return ok
}

// ExpireTokens makes every access token issued so far expire now: the
// next API call with one of them is answered 401 (documented mode).
func (e *Emulator) ExpireTokens() {
	e.mu.Lock()
	clear(e.tokens)
	e.mu.Unlock()
}

// IssuedTokens returns every access token the token endpoint issued
// since New or Reset, expired ones too, oldest first: tests look for
// them where the client keeps or shows text.
func (e *Emulator) IssuedTokens() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.issued)
}

// TokenCalls returns how many calls the token endpoint has received since
// New or Reset, whatever their outcome.
func (e *Emulator) TokenCalls() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.tokenCalls
}
