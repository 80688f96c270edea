package remote

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/quotesync/quotesync/remote/redact"
)

// Sentinel errors: every error a Client returns matches exactly one of them
// under errors.Is. The names say what the caller should do about it.
var (
	// ErrUnauthorized: the service refused the token (401 twice, or 403), or
	// no token could be had. Retrying will not help until the token is fixed.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrNotFound: the request, job or quote does not exist (404) or no
	// longer exists (410, e.g. an expired request).
	ErrNotFound = errors.New("not found")
	// ErrConflict: the change clashes with the state of the service (409),
	// e.g. a used referenceId or a Submitted quote.
	ErrConflict = errors.New("conflict")
	// ErrRejected: the service refused the call for a reason retrying cannot
	// fix (any other 4xx, an unexpected 1xx/3xx, or data this package will
	// not accept).
	ErrRejected = errors.New("rejected")
	// ErrTemporary: network errors, timeouts, 408, 425, 429, 5xx, oversize or
	// undecodable 2xx bodies. The call was retried MaxAttempts times; the
	// caller may try again later (after Error.RetryAfter when set).
	ErrTemporary = errors.New("temporary failure")
	// ErrUnreadable: the service answered 2xx, so the write landed, but its
	// answer could not be read. It is not retried: sending the write again
	// would repeat it.
	ErrUnreadable = errors.New("answer unreadable")
)

// Class names, as CallInfo.Class and Class report them.
const (
	ClassOK           = "ok"
	ClassTemporary    = "temporary"
	ClassUnauthorized = "unauthorized"
	ClassNotFound     = "not_found"
	ClassConflict     = "conflict"
	ClassRejected     = "rejected"
	ClassUnreadable   = "unreadable"
)

// DefaultBodyExcerpt is the most bytes of a response body an Error keeps.
const DefaultBodyExcerpt = 512

// Error is the error every Client call returns. It matches its class's
// sentinel under errors.Is (errors.Is(err, ErrConflict)) and is read with
// errors.As when the caller needs the status, body or RetryAfter.
//
// Error() never contains the bearer token: the client does not put it in
// any field, and every text of the answer it keeps (the body's excerpt,
// a header) has the secrets of Config.Secrets redacted before it is cut.
type Error struct {
	Method string // HTTP method
	Path   string // path relative to the API root, escaped: "/requests/17"
	Status int    // HTTP status of the last attempt; 0 when there was no answer
	// Body is an excerpt of the last response body: at most
	// DefaultBodyExcerpt bytes, valid UTF-8, the secrets redacted.
	Body string
	// RetryAfter is the Retry-After the service sent with the last answer
	// (0 when none). It is not capped, so the caller can schedule with it.
	RetryAfter time.Duration
	Attempts   int   // attempts made, the 401 token refresh included
	Err        error // the class sentinel, wrapped with the cause when there is one
}

// Error formats the error as "METHOD path: cause: status N (K attempts): body".
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %v", e.Method, e.Path, cmp.Or(e.Err, e.statusSentinel(), ErrTemporary))
	if e.Status != 0 {
		fmt.Fprintf(&b, ": status %d", e.Status)
		if t := http.StatusText(e.Status); t != "" {
			b.WriteString(" " + t)
		}
	}
	var notes []string
	if e.Attempts > 1 {
		notes = append(notes, strconv.Itoa(e.Attempts)+" attempts")
	}
	if e.RetryAfter > 0 {
		notes = append(notes, "retry after "+e.RetryAfter.String())
	}
	if len(notes) > 0 {
		b.WriteString(" (" + strings.Join(notes, ", ") + ")")
	}
	if e.Body != "" {
		b.WriteString(": " + e.Body)
	}
	return b.String()
}

// Unwrap returns Err, so errors.Is finds the sentinel and any cause
// (context.Canceled, a network error) inside it.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel of e's class when Err does not
// already carry one (an Error built by hand with only a Status).
func (e *Error) Is(target error) bool {
	if e.Err != nil && classified(e.Err) {
		return false // Unwrap leads errors.Is to it
	}
	return target == e.statusSentinel()
}

// statusSentinel is the sentinel e matches by its Status alone:
// ErrTemporary when there was no answer, none for a 2xx.
func (e *Error) statusSentinel() error {
	if e.Status == 0 {
		return ErrTemporary
	}
	return statusSentinel(e.Status)
}

// classes are the classes with their sentinels, in the order an error
// that matches several is classed.
var classes = []struct {
	name string
	err  error
}{
	{ClassUnauthorized, ErrUnauthorized}, {ClassNotFound, ErrNotFound}, {ClassConflict, ErrConflict},
	{ClassRejected, ErrRejected}, {ClassUnreadable, ErrUnreadable}, {ClassTemporary, ErrTemporary},
}

// Class returns the class name of err: ClassOK for nil, the class of the
// sentinel it matches, ClassTemporary for a context error or any other error
// this package did not classify (trying again later is the safe reading).
func Class(err error) string {
	if err == nil {
		return ClassOK
	}
	for _, c := range classes {
		if errors.Is(err, c.err) {
			return c.name
		}
	}
	return ClassTemporary
}

// classified reports whether err carries a sentinel of its own, not only
// the temporary class any error has by default.
func classified(err error) bool {
	return Class(err) != ClassTemporary || errors.Is(err, ErrTemporary)
}

// statusSentinel classifies an HTTP status: nil for a 2xx.
func statusSentinel(status int) error {
	switch {
	case status >= 200 && status <= 299:
		return nil
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		return ErrUnauthorized
	case status == http.StatusNotFound, status == http.StatusGone:
		return ErrNotFound
	case status == http.StatusConflict:
		return ErrConflict
	case status == http.StatusRequestTimeout, status == http.StatusTooEarly,
		status == http.StatusTooManyRequests, status >= 500:
		return ErrTemporary
	default: // other 4xx, and 1xx/3xx which an API call never expects
		return ErrRejected
	}
}

// classify wraps cause with sentinel: "temporary failure: cause".
func classify(sentinel, cause error) error {
	if cause == nil || errors.Is(cause, sentinel) {
		return cmp.Or(cause, sentinel)
	}
	return fmt.Errorf("%w: %w", sentinel, cause)
}

// excerpt is secrets.Excerpt (redacted, then cut to max bytes, "…" at a
// cut or with more) of body trimmed and made valid UTF-8.
func excerpt(secrets *redact.Secrets, body []byte, max int, more bool) string {
	s := strings.ToValidUTF8(string(body), "\uFFFD")
	return secrets.Excerpt(strings.TrimSpace(s), max, more)
}

// classifyDecode is the error of an attempt whose 2xx answer could not be
// decoded: err as is when it carries a class already, else temporary.
func classifyDecode(err error) error {
	if classified(err) {
		return err
	}
	return classify(ErrTemporary, err)
}

// redirectCause says what a 3xx answer means: the client never follows a
// redirect (it would send the token along).
func redirectCause(secrets *redact.Secrets, status int, location string) error {
	what := fmt.Sprintf("the service answered %d %s", status, http.StatusText(status))
	if strings.TrimSpace(location) == "" {
		return fmt.Errorf("%s without a Location header; quotesync never follows redirects: "+
			"check remote.base_url (scheme, host and path of the integration service) and any proxy in between", what)
	}
	return fmt.Errorf("%s, redirecting to %s; quotesync never follows redirects (the token would go along): "+
		"set remote.base_url to the service's own address", what, safeLocation(secrets, location))
}

// safeLocation shows a Location header without its query, fragment or
// credentials (they may carry secrets), redacted, then bounded.
func safeLocation(secrets *redact.Secrets, loc string) string {
	if u, err := url.Parse(strings.TrimSpace(loc)); err == nil {
		u.RawQuery, u.Fragment, u.User = "", "", nil
		loc = u.String()
	}
	return excerpt(secrets, []byte(loc), 200, false)
}

// notTheAPI is the error of a 2xx body that is not the API's JSON (want
// says what was expected): the status, the content type, the first bytes,
// and what it likely means.
func notTheAPI(want string, a *answer) error {
	ct := a.header.Get("Content-Type")
	head := bytes.TrimSpace(a.body)
	shown := excerpt(a.secrets, head, headShown, a.cut)
	what := fmt.Sprintf("want %s, got status %d, Content-Type %q, starting %q", want, a.status, excerpt(a.secrets, []byte(ct), 80, false), shown)
	if looksHTML(ct, head) {
		return fmt.Errorf("%s: an HTML page, not the integration service's JSON: a proxy or login page answered, "+
			"or remote.base_url points at a web site rather than the service's API", what)
	}
	return fmt.Errorf("%s: not the integration service's JSON; check remote.base_url and any proxy in between", what)
}

// headShown is how much of an unexpected body a message shows.
const headShown = 120

func looksHTML(contentType string, head []byte) bool {
	ct := strings.ToLower(contentType)
	return strings.Contains(ct, "html") || (len(head) > 0 && head[0] == '<')
}

func isJSONStart(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && strings.IndexByte(`{["tfn-0123456789`, b[0]) >= 0
}
