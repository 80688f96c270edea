package remote

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// ListRequests returns the pending quote requests (GET /requests).
//
// The list is decoded entry by entry as it is read: an entry that cannot
// be decoded (a bad expiry, an id of the wrong type, not valid UTF-8,
// larger than MaxEntryBytes or nested deeper than MaxEntryDepth) does not
// fail the call: the others come with a *DecodeError listing the skipped
// ones. Every other error comes with no requests. The decodable entries
// may take Config.MaxBodyBytes in all; skipped ones are read through, up
// to listReadFactor times that. A body that is not a JSON array at all (an
// HTML page from a proxy, say) is a temporary failure saying what came.
func (c *Client) ListRequests(ctx context.Context) ([]Request, error) {
	var (
		reqs    []Request
		skipped *DecodeError
	)
	_, err := c.do(ctx, call{
		method: http.MethodGet,
		route:  "GET /requests",
		path:   "/requests",
		stream: func(a *answer, body io.Reader) (err error) {
			reqs, skipped, a.body, err = decodeRequestsFrom(body, c.cfg.MaxBodyBytes, c.cfg.MaxBodyBytes*listReadFactor+1)
			a.cut = len(a.body) >= headBytes
			switch {
			case err == nil:
				return nil
			case !errors.Is(err, errNotArray):
			case !isJSONStart(a.body):
				err = notTheAPI("a JSON array of requests", a)
				a.body = nil // the error shows its start
			default:
				err = fmt.Errorf("want a JSON array, got %s", describe(a.body))
			}
			return fmt.Errorf("decode requests: %w", err)
		},
	})
	if err != nil {
		return nil, err
	}
	if skipped != nil {
		return reqs, skipped
	}
	return reqs, nil
}

// listReadFactor bounds the bytes of the pending list read, skipped
// entries included, as a multiple of Config.MaxBodyBytes.
const listReadFactor = 16

// decodeAnswer decodes the 2xx answer to a write. One that cannot be
// decoded is ErrUnreadable: the write landed, and sending it again would
// repeat it; but an HTML page is not the service's answer (a proxy or a
// login page): a temporary failure.
func decodeAnswer(a *answer, what string, decode func([]byte) error) error {
	err := decode(a.body)
	switch {
	case err == nil:
		return nil
	case !isJSONStart(a.body) && looksHTML(a.header.Get("Content-Type"), bytes.TrimSpace(a.body)):
		return notTheAPI(what, a)
	}
	return classify(ErrUnreadable, fmt.Errorf("the write landed (status %d) but its answer cannot be read: %w", a.status, err))
}

// Accept accepts request requestID with the repairer's referenceID
// (POST /requests/{id}); a zero bookingDate is left out of the body. Any 2xx
// is success. The Job's ID is the answer's id, or referenceID when the
// answer has none; Location is the answer's Location header.
//
// A retried accept whose earlier attempt landed gets ErrConflict with
// Error.Attempts > 1; the caller tells "accepted by us" from the pending
// list.
func (c *Client) Accept(ctx context.Context, requestID, referenceID string, bookingDate time.Time) (Job, error) {
	if err := nonEmpty(http.MethodPost, "/requests/{id}", "request id", requestID, "referenceId", referenceID); err != nil {
		return Job{}, err
	}
	payload := struct {
		ReferenceID string `json:"referenceId"`
		BookingDate string `json:"bookingDate,omitempty"`
	}{ReferenceID: referenceID}
	if !bookingDate.IsZero() {
		payload.BookingDate = bookingDate.Format(c.cfg.BookingDateLayout)
	}
	body, err := jsonBody(payload)
	if err != nil {
		return Job{}, err
	}
	var job Job
	_, err = c.do(ctx, call{
		method: http.MethodPost,
		route:  "POST /requests/{id}",
		path:   "/requests/" + segment(requestID),
		body:   body,
		decode: func(a *answer) error {
			job = Job{}
			if !isEmptyBody(a.body) {
				if err := decodeAnswer(a, "the accepted job as JSON", job.UnmarshalJSON); err != nil {
					return err
				}
			}
			job.ID = cmp.Or(job.ID, referenceID)
			job.Location = a.header.Get("Location")
			return nil
		},
	})
	if err != nil {
		return Job{}, err
	}
	return job, nil
}

// CreateQuote creates quote q on job jobID (POST /jobs/{id}/quotes) and
// returns the quote the service answers with (item ids filled in); an empty
// 2xx body gives q back. Any 2xx is success.
func (c *Client) CreateQuote(ctx context.Context, jobID string, q Quote) (Quote, error) {
	return c.sendQuote(ctx, http.MethodPost, "/jobs/{id}/quotes", jobID, q)
}

// UpdateDraft replaces the Draft quote q on job jobID, by the strategy of
// Config.DraftUpdate: DraftUpdateRepost sends it again to
// POST /jobs/{id}/quotes, DraftUpdatePut to PUT /jobs/{id}/quotes/{type}.
// A Submitted quote cannot be changed: the service answers ErrConflict (or
// ErrRejected, the seed leaves it open).
func (c *Client) UpdateDraft(ctx context.Context, jobID string, q Quote) (Quote, error) {
	if c.cfg.DraftUpdate == DraftUpdatePut {
		return c.sendQuote(ctx, http.MethodPut, "/jobs/{id}/quotes/{type}", jobID, q)
	}
	return c.sendQuote(ctx, http.MethodPost, "/jobs/{id}/quotes", jobID, q)
}

func (c *Client) sendQuote(ctx context.Context, method, template, jobID string, q Quote) (Quote, error) {
	path := "/jobs/" + segment(jobID) + "/quotes"
	checks := []string{"job id", jobID}
	if template == "/jobs/{id}/quotes/{type}" {
		path += "/" + segment(q.Type)
		checks = append(checks, "quote type", q.Type)
	}
	if err := nonEmpty(method, template, checks...); err != nil {
		return Quote{}, err
	}
	body, err := QuoteBody(q)
	if err != nil {
		return Quote{}, err
	}
	var out Quote
	_, err = c.do(ctx, call{
		method: method,
		route:  method + " " + template,
		path:   path,
		body:   body,
		decode: func(a *answer) error {
			if isEmptyBody(a.body) {
				out = q
				return nil
			}
			out = Quote{}
			return decodeAnswer(a, "the quote as JSON", out.UnmarshalJSON)
		},
	})
	if err != nil {
		return Quote{}, err
	}
	return out, nil
}

// nonEmpty returns ErrRejected, before any call, when one of the named
// values (name, value pairs) is empty: it would make a wrong path.
func nonEmpty(method, template string, pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			return &Error{Method: method, Path: template,
				Err: classify(ErrRejected, fmt.Errorf("%s is empty", pairs[i]))}
		}
	}
	return nil
}

// QuoteBody is the exact body a Draft push of q sends.
func QuoteBody(q Quote) ([]byte, error) { return jsonBody(q) }

func jsonBody(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode request body: %w", classify(ErrRejected, err))
	}
	return b, nil
}

func isEmptyBody(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }
