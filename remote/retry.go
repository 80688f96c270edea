package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/quotesync/quotesync/remote/redact"
)

// The retry loop is written out rather than taken from cenkalti/backoff:
// one call mixes rules that library models as one (temporary failures
// backed off by Backoff and Retry-After, one immediate retry after a 401
// that does not count, decoding inside the attempt so that an undecodable
// 2xx is retried), plus a rate-limit wait and an Observe per attempt.

// call is one logical API call, retried as a whole.
type call struct {
	method string
	route  string // template for CallInfo: "POST /requests/{id}"
	path   string // escaped, relative to the API root: "/requests/17"
	body   []byte // nil for none
	// decode reads a 2xx answer inside the attempt; its error fails the
	// attempt with the class it carries, else as a temporary failure.
	decode func(*answer) error
	// stream, when set, reads a 2xx body as it arrives instead (the
	// pending list), leaving in the answer's body what an error shows.
	stream func(a *answer, body io.Reader) error
}

// answer is one HTTP answer, its body read in full (within the cap).
type answer struct {
	status  int
	header  http.Header
	body    []byte
	cut     bool            // body is the start of a longer one (a stream's head)
	secrets *redact.Secrets // redacted from whatever is shown of the answer
}

const (
	maxErrorBody  = 64 << 10           // the most of a non-2xx body read
	maxRetryAfter = 7 * 24 * time.Hour // the longest Retry-After taken
)

// do runs cl until it succeeds, fails for good, runs out of attempts or ctx
// ends. Every failure is an *Error.
func (c *Client) do(ctx context.Context, cl call) (*answer, error) {
	var (
		attempt, temporaries int
		refreshed            bool
		last                 *Error
	)
	for {
		if err := c.limiter.Wait(ctx); err != nil {
			return nil, c.stopped(ctx, cl, last, attempt, fmt.Errorf("wait for rate limit: %w", err))
		}
		attempt++
		start := time.Now()
		ans, e := c.attempt(ctx, cl)
		if c.cfg.Observe != nil {
			c.observe(cl, attempt, time.Since(start), ans, e)
		}
		if e == nil {
			return ans, nil
		}
		e.Attempts = attempt
		last = e
		switch Class(e) {
		case ClassUnauthorized:
			if e.Status == http.StatusUnauthorized && !refreshed {
				refreshed = true
				c.tokens.Invalidate()
				continue
			}
			return nil, e
		case ClassTemporary:
			temporaries++
			if ctx.Err() != nil {
				return nil, c.stopped(ctx, cl, e, attempt, ctx.Err())
			}
			if temporaries >= c.cfg.MaxAttempts {
				return nil, e
			}
			if !c.sleep(ctx.Done(), c.backoff(temporaries, e.RetryAfter)) {
				return nil, c.stopped(ctx, cl, last, attempt, ctx.Err())
			}
		default:
			return nil, e
		}
	}
}

// stopped is the error of a call ended between attempts (by ctx or the
// rate limiter): the last attempt's error with cause in front of it.
func (c *Client) stopped(ctx context.Context, cl call, last *Error, attempts int, cause error) *Error {
	if ctx.Err() != nil && !errors.Is(cause, ctx.Err()) {
		cause = fmt.Errorf("%w: %w", ctx.Err(), cause)
	}
	if last == nil || Class(last) != ClassTemporary {
		return &Error{Method: cl.method, Path: cl.path, Attempts: attempts, Err: classify(ErrTemporary, cause)}
	}
	e := *last
	e.Attempts = attempts
	if !errors.Is(last.Err, cause) {
		e.Err = fmt.Errorf("%w: %w", cause, last.Err)
	}
	return &e
}

// observe reports one attempt to Config.Observe.
func (c *Client) observe(cl call, attempt int, d time.Duration, ans *answer, e *Error) {
	info := CallInfo{Method: cl.method, Route: cl.route, Attempt: attempt, Duration: d, Class: ClassOK}
	if ans != nil {
		info.Status = ans.status
	}
	if e != nil {
		cp := *e // the observer may keep it; e is still changed by do
		cp.Attempts = attempt
		info.Status, info.Class, info.Err = cp.Status, Class(&cp), &cp
	}
	c.cfg.Observe(info)
}

func (c *Client) backoff(n int, retryAfter time.Duration) time.Duration {
	return Backoff{Initial: c.cfg.BackoffInitial, Max: c.cfg.BackoffMax}.Delay(n, retryAfter, c.rand())
}

// attempt makes one HTTP exchange of cl under its own timeout. The returned
// *Error has no Attempts yet.
func (c *Client) attempt(ctx context.Context, cl call) (*answer, *Error) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	e := &Error{Method: cl.method, Path: cl.path}

	tok, err := c.tokens.Token(actx)
	if err != nil {
		sentinel := ErrUnauthorized
		if errors.Is(err, ErrTemporary) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			sentinel = ErrTemporary
		}
		e.Err = classify(sentinel, fmt.Errorf("get token: %w", err))
		return nil, e
	}
	var body io.Reader
	if cl.body != nil {
		body = bytes.NewReader(cl.body)
	}
	req, err := http.NewRequestWithContext(actx, cl.method, c.api+cl.path, body)
	if err != nil {
		e.Err = classify(ErrRejected, fmt.Errorf("build request: %w", unwrapURLError(err)))
		return nil, e
	}
	c.secrets.AddFetched(tok) // before it is sent: an echo of it is redacted from the first
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.cfg.UserAgent)

	resp, err := c.http.Do(req)
	if err != nil {
		e.Err = classify(ErrTemporary, c.transportCause(ctx, actx, err))
		return nil, e
	}
	defer resp.Body.Close()
	e.Status = resp.StatusCode
	e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), c.now())
	sentinel := statusSentinel(resp.StatusCode)

	ans := &answer{status: resp.StatusCode, header: resp.Header, secrets: c.secrets}
	// fail keeps an excerpt of body (the start of a longer one when more).
	fail := func(body []byte, more bool, err error) (*answer, *Error) {
		e.Body, e.Err = excerpt(c.secrets, body, DefaultBodyExcerpt, more), err
		return nil, e
	}
	if sentinel == nil && cl.stream != nil {
		if err := cl.stream(ans, resp.Body); err != nil {
			var re *bodyReadError
			if errors.As(err, &re) {
				err = fmt.Errorf("read response body: %w", c.transportCause(ctx, actx, re.err))
			}
			return fail(ans.body, ans.cut, classifyDecode(err))
		}
		return ans, nil
	}
	limit := c.cfg.MaxBodyBytes
	if sentinel != nil {
		// Only an excerpt is kept: read past it by more than the longest
		// secret, so that one straddling the bound lies past the excerpt.
		limit = min(limit, max(maxErrorBody, c.secrets.ReadBound(DefaultBodyExcerpt)))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	more := int64(len(data)) > limit
	switch {
	case err != nil:
		err = fmt.Errorf("read response body: %w", c.transportCause(ctx, actx, err))
		return fail(data, true, classify(ErrTemporary, err))
	case resp.StatusCode >= 300 && resp.StatusCode <= 399:
		err = redirectCause(c.secrets, resp.StatusCode, resp.Header.Get("Location"))
		return fail(data, more, classify(ErrRejected, err))
	case sentinel != nil:
		return fail(data, more, sentinel)
	case more:
		return fail(data, true, classify(ErrTemporary, fmt.Errorf("response body exceeds %d bytes", limit)))
	}
	ans.body = data
	if cl.decode != nil {
		if err := cl.decode(ans); err != nil {
			return fail(data, false, classifyDecode(err))
		}
	}
	return ans, nil
}

// transportCause is an error of the HTTP exchange as a cause without the
// URL: the attempt's own timeout, the caller's context, or the network's.
func (c *Client) transportCause(ctx, actx context.Context, err error) error {
	err = unwrapURLError(err)
	switch {
	case ctx.Err() != nil:
		if !errors.Is(err, ctx.Err()) {
			return fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return err
	case actx.Err() != nil:
		return fmt.Errorf("attempt timed out after %s: %w", c.cfg.Timeout, context.DeadlineExceeded)
	}
	return err
}

// unwrapURLError drops *url.Error's "Get \"http://…\": " prefix.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// parseRetryAfter reads a Retry-After header (seconds or an HTTP date):
// absent, malformed or past gives 0, at most maxRetryAfter.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseUint(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		return time.Duration(min(secs, uint64(maxRetryAfter/time.Second))) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	return min(max(t.Sub(now), 0), maxRetryAfter)
}
