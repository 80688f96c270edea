package remote

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/quotesync/quotesync/remote/redact"
)

// DefaultExpiryLeeway is how long before its expiry a client-credentials
// token is fetched anew, when ClientCredentialsConfig.ExpiryLeeway is zero.
const DefaultExpiryLeeway = time.Minute

// DefaultTokenTimeout bounds a token fetch when ClientCredentialsConfig
// has no HTTPClient (the attempt's own timeout applies as well).
const DefaultTokenTimeout = 30 * time.Second

// ClientCredentialsConfig configures ClientCredentials.
type ClientCredentialsConfig struct {
	TokenURL     string // the token endpoint; required
	ClientID     string // required
	ClientSecret string // required unless SecretFunc is set; never printed
	// SecretFunc, when set, gives the client secret at every fetch (a
	// secret file fixed on disk after a refusal is used at the next
	// attempt, without a restart); ClientSecret is then ignored.
	SecretFunc func() (string, error)
	Scopes     []string
	// EndpointParams are extra form values sent to the token endpoint
	// (e.g. "audience").
	EndpointParams url.Values
	// ExpiryLeeway: a token is fetched anew this long before it expires
	// (at most half its lifetime); DefaultExpiryLeeway when zero.
	ExpiryLeeway time.Duration
	// HTTPClient calls the token endpoint; a client with a
	// DefaultTokenTimeout timeout when nil.
	HTTPClient *http.Client
	// Secrets is the set the client secret (and the Basic header that
	// carries it) joins when it is read, and each access token when it
	// arrives; the errors of a fetch are redacted with it before they are
	// cut. nil means a set of the source's own.
	Secrets *redact.Secrets
}

// ClientCredentials returns a TokenSource that fetches tokens with the
// OAuth2 client-credentials grant (golang.org/x/oauth2/clientcredentials;
// the service gives no refresh token). A token is cached until
// ExpiryLeeway before its expiry (forever when the endpoint gives no
// expires_in) or Invalidate; concurrent callers share one fetch.
//
// Errors never contain the client secret or the token. A refused fetch
// (4xx: a wrong client id or secret) is permanent; a network error, 408,
// 429 or 5xx from the endpoint matches ErrTemporary.
func ClientCredentials(cfg ClientCredentialsConfig) TokenSource {
	cfg.Secrets = cmp.Or(cfg.Secrets, redact.New())
	return &ccToken{cfg: cfg, now: time.Now}
}

type ccToken struct {
	cfg ClientCredentialsConfig
	now func() time.Time

	mu        sync.Mutex
	token     string
	refreshAt time.Time // zero: no expiry given
}

func (s *ccToken) Token(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" && (s.refreshAt.IsZero() || s.now().Before(s.refreshAt)) {
		return s.token, nil
	}
	secret := s.cfg.ClientSecret
	if s.cfg.SecretFunc != nil {
		v, err := s.cfg.SecretFunc()
		if err != nil {
			return "", fmt.Errorf("fetch oauth2 token: %w", err)
		}
		secret = v
	}
	s.cfg.Secrets.Add(secret)
	s.cfg.Secrets.Add(redact.BasicAuth(s.cfg.ClientID, secret)...)
	for _, f := range []struct{ name, v string }{
		{"TokenURL", s.cfg.TokenURL}, {"ClientID", s.cfg.ClientID}, {"ClientSecret", secret},
	} {
		if f.v == "" {
			return "", fmt.Errorf("fetch oauth2 token: %s: required", f.name)
		}
	}
	conf := &clientcredentials.Config{ClientID: s.cfg.ClientID, ClientSecret: secret, TokenURL: s.cfg.TokenURL,
		Scopes: s.cfg.Scopes, EndpointParams: s.cfg.EndpointParams}
	tok, err := conf.Token(context.WithValue(ctx, oauth2.HTTPClient, noRedirects(s.cfg.HTTPClient)))
	if err != nil {
		return "", s.fetchError(ctx, err)
	}
	if tok.AccessToken == "" {
		return "", errors.New("fetch oauth2 token: the endpoint returned no access_token")
	}
	s.cfg.Secrets.AddFetched(tok.AccessToken)
	s.token, s.refreshAt = tok.AccessToken, time.Time{}
	if !tok.Expiry.IsZero() {
		leeway := min(cmp.Or(max(s.cfg.ExpiryLeeway, 0), DefaultExpiryLeeway), tok.Expiry.Sub(s.now())/2)
		s.refreshAt = tok.Expiry.Add(-leeway)
	}
	return s.token, nil
}

func (s *ccToken) Invalidate() {
	s.mu.Lock()
	s.token, s.refreshAt = "", time.Time{}
	s.mu.Unlock()
}

// errTokenRedirect is a redirect of the token request, refused.
type errTokenRedirect struct{ location string }

func (e *errTokenRedirect) Error() string {
	return fmt.Sprintf("the token endpoint redirected to %s; quotesync does not follow redirects on the token request, "+
		"which would send the client secret there: set remote.token.oauth2.token_url to the endpoint's own URL", e.location)
}

// noRedirects returns hc (a client with a DefaultTokenTimeout timeout when
// nil) refusing every redirect: following one would send the client secret
// wherever the Location points, and use whatever token comes back.
func noRedirects(hc *http.Client) *http.Client {
	c := http.Client{Timeout: DefaultTokenTimeout}
	if hc != nil {
		c = *hc
	}
	c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		return &errTokenRedirect{location: req.URL.Redacted()}
	}
	return &c
}

// fetchError rewrites an error of the oauth2 library so that it names what
// happened without the secret (the endpoint's body may echo the request:
// it is redacted whole before it is cut), and classifies it.
func (s *ccToken) fetchError(ctx context.Context, err error) error {
	redact := s.cfg.Secrets.Redact
	var redir *errTokenRedirect
	if errors.As(err, &redir) {
		return &tokenError{msg: redact(redir.Error()), class: ErrUnauthorized}
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		msg := fmt.Sprintf("token endpoint answered status %d", status)
		if re.ErrorCode != "" {
			msg += fmt.Sprintf(" (error %q", redact(re.ErrorCode))
			if re.ErrorDescription != "" {
				msg += fmt.Sprintf(": %q", redact(re.ErrorDescription))
			}
			msg += ")"
		} else if b := excerpt(s.cfg.Secrets, re.Body, tokenBodyExcerpt, len(re.Body) >= oauth2BodyLimit); b != "" {
			msg += ": " + b
		}
		class := ErrUnauthorized
		if statusSentinel(status) == ErrTemporary {
			class = ErrTemporary
		}
		return &tokenError{msg: redact(msg), class: class}
	}
	return &tokenError{msg: redact(unwrapURLError(err).Error()), class: ErrTemporary, ctxErr: ctx.Err()}
}

const (
	// tokenBodyExcerpt is how much of a token endpoint's refusal an
	// error keeps, when it names no OAuth2 error code.
	tokenBodyExcerpt = 200
	// oauth2BodyLimit is how much of an answer golang.org/x/oauth2 reads:
	// a body of that size may go on (see excerpt).
	oauth2BodyLimit = 1 << 20
)

// tokenError is a token-endpoint failure, its text cleaned; it matches its
// class sentinel and, when the caller's context ended, that error.
type tokenError struct {
	msg    string
	class  error
	ctxErr error
}

func (e *tokenError) Error() string { return "fetch oauth2 token: " + e.msg }

func (e *tokenError) Unwrap() []error { return []error{e.class, e.ctxErr} }
