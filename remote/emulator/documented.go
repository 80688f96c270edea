package emulator

import (
	"cmp"
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

// Modes of the emulator (Options.Mode): the seed specification's (the
// default) and the public documentation's; see the package documentation.
const (
	ModeSpec       = "spec"
	ModeDocumented = "documented"
)

// Of the documented mode: the defaults of Options.ClientID and
// Options.TokenTTL, and the OAuth2 token endpoint (not under APIPrefix).
const (
	DefaultClientID = "quotesync-emulator"
	DefaultTokenTTL = 5 * time.Minute
	TokenPath       = "/oauth2/token"
)

// documentedZone is the documented mode's offset of request expiries.
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
var documentedStatusRoutes = []string{
	"POST /jobs/{jobId}/quotes/status/{status}",
	"PUT /jobs/{jobId}/quote/status/{status}",
}

func (e *Emulator) documented() bool { return e.opts.Mode == ModeDocumented }

// Mode returns the emulator's mode, ModeSpec or ModeDocumented.
func (e *Emulator) Mode() string { return e.opts.Mode }

// writeError answers aerr in the shape of the emulator's mode.
func (e *Emulator) writeError(w http.ResponseWriter, aerr *apiError) {
	writeError(w, aerr, e.documented())
}

// alreadyAccepted answers an accept (with ref) of request id, which holds
// referenceId held: see the package documentation's Modes.
func (e *Emulator) alreadyAccepted(id, ref, held string) *apiError {
	aerr := newError(http.StatusConflict, CodeRequestAlreadyAccepted,
		"request %s was already accepted with referenceId %q", id, held)
	aerr.detail.Field, aerr.detail.ReferenceID, aerr.detail.RequestID = "referenceId", held, id
	switch {
	case e.documented() && ref == held:
		aerr.status, aerr.plain = http.StatusBadRequest, "request already accepted"
	case e.documented():
		aerr.body, _ = marshal(struct {
			Message     string `json:"message"`
			ReferenceID string `json:"referenceId"`
			RequestID   string `json:"requestId"`
		}{"request already accepted by another party", held, id})
	}
	return aerr
}

// TakeElsewhere has another party (another workshop system, the insurer's
// portal) accept pending request id with its own referenceId ref, as if
// through the API; a later accept of ours gets the mode's conflict naming
// ref.
func (e *Emulator) TakeElsewhere(id, ref string) error {
	if aerr := e.takeElsewhere(id, ref); aerr != nil {
		return fmt.Errorf("take request %s elsewhere: %s", id, aerr.detail.Message)
	}
	return nil
}

func (e *Emulator) takeElsewhere(id, ref string) *apiError {
	if aerr := checkReferenceID(ref); aerr != nil {
		return aerr
	}
	_, aerr := e.acceptRequest(id, ref, "")
	return aerr
}

// checkDocumentedQuote applies the documented mode's rules to a quote.
func (e *Emulator) checkDocumentedQuote(q *quote) *apiError {
	if !e.documented() {
		return nil
	}
	q.Type = cmp.Or(q.Type, quoteTypeEstimate)
	for i, it := range q.Items {
		if !slices.Contains(DocumentedItemTypes(), it.Type) {
			return fieldError(CodeInvalidField, fmt.Sprintf("items[%d].type", i),
				"items[%d].type %q is not a documented item type; use one of %s",
				i, it.Type, strings.Join(DocumentedItemTypes(), ", "))
		}
	}
	return nil
}

// serveToken serves the documented mode's OAuth2 client-credentials token
// endpoint (RFC 6749 section 4.4); errors have the OAuth2 JSON shape.
func (e *Emulator) serveToken(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.tokenCalls++
	e.mu.Unlock()
	e.serveFaulted(w, r, RouteToken, func(w http.ResponseWriter) { e.issueToken(w, r) })
}

func (e *Emulator) issueToken(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, e.opts.MaxBodyBytes)
	formErr := r.ParseForm()
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	status, code, desc := http.StatusBadRequest, "invalid_request", ""
	switch {
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodPost)
		status, desc = http.StatusMethodNotAllowed, "the token endpoint takes POST"
	case formErr != nil:
		desc = "the body must be an application/x-www-form-urlencoded form"
	case r.PostForm.Get("grant_type") != "client_credentials":
		code, desc = "unsupported_grant_type", "grant_type must be client_credentials"
	case subtle.ConstantTimeCompare([]byte(id), []byte(e.opts.ClientID)) != 1 ||
		subtle.ConstantTimeCompare([]byte(secret), []byte(e.opts.Token)) != 1:
		w.Header().Set("WWW-Authenticate", `Basic realm="quotesync-emulator"`)
		status, code, desc = http.StatusUnauthorized, "invalid_client", "unknown client id or wrong client secret"
	case r.PostForm.Get("redirect_uri") == "":
		desc = "redirect_uri is required"
	}
	if desc != "" {
		writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
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

// ExpireTokens makes every access token issued so far expire now.
func (e *Emulator) ExpireTokens() {
	e.mu.Lock()
	clear(e.tokens)
	e.mu.Unlock()
}

// IssuedTokens returns every access token issued since New or Reset,
// oldest first: tests look for them where the client keeps or shows text.
func (e *Emulator) IssuedTokens() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.issued)
}

// TokenCalls returns how many calls the token endpoint has received since
// New or Reset.
func (e *Emulator) TokenCalls() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.tokenCalls
}
