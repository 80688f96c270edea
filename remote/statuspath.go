package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// The four path forms of the status change the specification shows
// (Config.StatusPath). Every form is sent the body {"status": "<status>"}.
// The service's public documentation uses the {status} forms: its worked
// example is POST /jobs/{jobId}/quotes/status/Submitted (the default), its
// prose PUT /jobs/{jobId}/quote/status/{status}.
const (
	StatusPathQuoteID      = "/jobs/{jobId}/quote/{quoteId}/status"
	StatusPathQuotesID     = "/jobs/{jobId}/quotes/{quoteId}/status"
	StatusPathQuoteStatus  = "/jobs/{jobId}/quote/status/{status}"
	StatusPathQuotesStatus = "/jobs/{jobId}/quotes/status/{status}"
	// StatusPathAuto tries the (method, form) pairs of autoCandidates and
	// remembers the first the service serves (see SetStatus).
	StatusPathAuto = "auto"
)

var statusForms = []string{StatusPathQuotesStatus, StatusPathQuoteStatus, StatusPathQuotesID, StatusPathQuoteID}

// autoCandidates are the (method, form) pairs auto mode tries, in order,
// as "METHOD form": the public documentation's example, then its prose,
// then the other method of each, then the forms with the quote type in
// the path.
var autoCandidates = []string{
	http.MethodPost + " " + StatusPathQuotesStatus,
	http.MethodPut + " " + StatusPathQuoteStatus,
	http.MethodPut + " " + StatusPathQuotesStatus,
	http.MethodPost + " " + StatusPathQuoteStatus,
	http.MethodPut + " " + StatusPathQuotesID,
	http.MethodPost + " " + StatusPathQuotesID,
	http.MethodPut + " " + StatusPathQuoteID,
	http.MethodPost + " " + StatusPathQuoteID,
}

// statusCandidates lists what SetStatus tries: in auto mode every pair of
// autoCandidates; otherwise the one configured pair.
func (c *Client) statusCandidates() []string {
	if c.cfg.StatusPath != StatusPathAuto {
		return []string{c.cfg.StatusMethod + " " + c.cfg.StatusPath}
	}
	return autoCandidates
}

// StatusForm returns the status change the client sends, as "METHOD
// form" (e.g. "POST /jobs/{jobId}/quotes/status/{status}"). found is true
// only in auto mode once a form is known (found by a call, or given by
// UseStatusForm); in auto mode before that form is "".
func (c *Client) StatusForm() (form string, found bool) {
	if c.cfg.StatusPath != StatusPathAuto {
		return c.statusCandidates()[0], false
	}
	i := c.statusForm.Load()
	if i == 0 {
		return "", false
	}
	return autoCandidates[i-1], true
}

// UseStatusForm makes auto mode send form ("METHOD form", as StatusForm
// returns it) from now on, as if a call had found it: what a daemon found
// before a restart. An error when the client is not in auto mode or form is
// not one of the pairs it would try.
func (c *Client) UseStatusForm(form string) error {
	if c.cfg.StatusPath != StatusPathAuto {
		return fmt.Errorf("use status form %q: remote.status_path is %s, not auto", form, c.cfg.StatusPath)
	}
	i := slices.Index(autoCandidates, form)
	if i < 0 {
		return fmt.Errorf("use status form %q: not a form auto mode tries", form)
	}
	c.statusForm.Store(int32(i + 1))
	return nil
}

// segment escapes s as one path segment. "." and ".." are escaped too, so a
// job number can never walk the path.
func segment(s string) string {
	if s == "." || s == ".." {
		return strings.ReplaceAll(s, ".", "%2E")
	}
	return url.PathEscape(s)
}

// SetStatus changes the status of the quote of type quoteType on job jobID
// (to StatusSubmitted, in practice) and returns the quote the service
// answers with; an empty 2xx body gives {Type: quoteType, Status: status}.
//
// With StatusPathAuto, a 404 or 405 moves on to the next (method, form)
// pair; the first pair that gets any other answer but a 401/403 or a
// temporary failure (success, 409 for an already Submitted quote, a 400)
// is remembered for the life of the Client and used alone from then on.
// When every pair gets 404/405 the last error is returned (ErrNotFound or
// ErrRejected).
func (c *Client) SetStatus(ctx context.Context, jobID, quoteType, status string) (Quote, error) {
	if err := nonEmpty(c.cfg.StatusMethod, c.cfg.StatusPath, "job id", jobID, "quote type", quoteType, "status", status); err != nil {
		return Quote{}, err
	}
	body, err := jsonBody(map[string]string{"status": status})
	if err != nil {
		return Quote{}, err
	}
	params := strings.NewReplacer("{jobId}", segment(jobID), "{quoteId}", segment(quoteType), "{status}", segment(status))
	candidates := c.statusCandidates()
	if i := c.statusForm.Load(); i > 0 {
		candidates = candidates[i-1 : i]
	}
	var lastErr error
	for _, cand := range candidates {
		var q Quote
		method, form, _ := strings.Cut(cand, " ")
		_, err := c.do(ctx, call{
			method: method,
			route:  cand,
			path:   params.Replace(form),
			body:   body,
			decode: func(a *answer) error {
				if isEmptyBody(a.body) {
					q = Quote{Type: quoteType, Status: status}
					return nil
				}
				return q.UnmarshalJSON(a.body)
			},
		})
		var e *Error
		if errors.As(err, &e) && (e.Status == http.StatusNotFound || e.Status == http.StatusMethodNotAllowed) {
			lastErr = err // a form the service does not serve: try the next
			continue
		}
		if i := slices.Index(autoCandidates, cand); c.cfg.StatusPath == StatusPathAuto && i >= 0 &&
			(err == nil || !errors.Is(err, ErrUnauthorized) && !errors.Is(err, ErrTemporary)) {
			c.statusForm.Store(int32(i + 1))
		}
		return q, err
	}
	return Quote{}, lastErr
}
