package sync

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
)

// Prefixes of LastError that the engine reads back.
const (
	// heldPrefix marks a job held for invalid shop data; it is looked at
	// again only when the shop's change marker moves.
	heldPrefix = "shop data: "
	// conflictPrefix marks a 409 answer to an accept; Attempts then counts
	// consecutive conflicts.
	conflictPrefix = "conflict: "
)

// maxErrorLen caps LastError and event messages.
const maxErrorLen = 1000

// save writes next over cur (compare-and-set) with ev. It runs even when
// the pass is being cancelled: the outcome of a remote call that already
// happened must be recorded. It returns the saved row and true, or cur and
// false when the row changed under us or the write failed.
func (e *Engine) save(ctx context.Context, p *pass, cur, next shopdb.Request, ev shopdb.Event) (shopdb.Request, bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	if ev.Kind != "" {
		ev.RequestID = cur.RequestID
		if ev.Job == "" {
			ev.Job = next.JobNumber
		}
		if ev.Kind == shopdb.EventPhase {
			ev.From, ev.To = cur.Phase, next.Phase
		}
		ev.Message = capText(ev.Message)
	}
	next.LastError = capText(next.LastError)
	saved, err := e.store.Update(ctx, cur, next, ev)
	switch {
	case errors.Is(err, shopdb.ErrStale):
		e.log.Info(MsgStale, requestFields(cur)...)
		return cur, false
	case err != nil:
		e.Metrics.Error(ErrKindState)
		p.fail(fmt.Errorf("save request %s: %w", cur.RequestID, err))
		return cur, false
	}
	if cur.Phase != saved.Phase {
		e.Metrics.Transition(cur.Phase, saved.Phase)
		p.setPhase(saved.RequestID, saved.Phase)
	}
	return saved, true
}

// backoff returns the wait before attempt n+1 after n consecutive
// failures: RetryBackoffMin doubled per failure, capped at RetryBackoffMax,
// with ±20% jitter so that a batch of failures does not come back at once;
// never shorter than the server's Retry-After.
func (e *Engine) backoff(n int, retryAfter time.Duration) time.Duration {
	d := e.cfg.RetryBackoffMin
	for i := 1; i < n && d < e.cfg.RetryBackoffMax; i++ {
		d *= 2
	}
	d = min(d, e.cfg.RetryBackoffMax)
	if d > 0 {
		d += time.Duration((rand.Float64()*0.4 - 0.2) * float64(d))
	}
	return max(d, retryAfter)
}

// retryLater records a temporary failure of a remote call on r: attempts
// counted, the error kept, the next attempt pushed back.
func (e *Engine) retryLater(ctx context.Context, p *pass, r shopdb.Request, route string, callErr error, d time.Duration) shopdb.Request {
	next := r
	next.Attempts = r.Attempts + 1
	next.LastError = callErr.Error()
	var retryAfter time.Duration
	var re *remote.Error
	if errors.As(callErr, &re) {
		retryAfter = re.RetryAfter
	}
	next.NextAttemptAt = p.now.Add(e.backoff(next.Attempts, retryAfter))
	saved, ok := e.save(ctx, p, r, next, callEvent(route, callErr, next.Attempts, d))
	e.Metrics.Error(ErrKindTemporary)
	p.count(func(s *Summary) { s.Retrying++ })
	if ok {
		e.log.Warn(MsgCallFailed, append(requestFields(saved),
			zap.String(FieldRoute, route), zap.Int(FieldAttempt, saved.Attempts),
			zap.Time(FieldNext, saved.NextAttemptAt), zap.Error(callErr))...)
	}
	return saved
}

// reject moves r to rejected with the reason; `quotesync retry` puts it
// back into the phase it was rejected from.
func (e *Engine) reject(ctx context.Context, p *pass, r shopdb.Request, route string, reason error, d time.Duration) {
	e.rejectAs(ctx, p, r, r, r.Phase, route, reason, d)
}

// rejectAs moves cur to rejected, writing next's other fields, with resume
// as the phase `quotesync retry` puts it back into.
func (e *Engine) rejectAs(ctx context.Context, p *pass, cur, next shopdb.Request, resume shopdb.Phase, route string, reason error, d time.Duration) {
	next.Phase = shopdb.PhaseRejected
	next.ResumePhase = resume
	next.LastError = reason.Error()
	next.NextAttemptAt = time.Time{}
	ev := callEvent(route, reason, cur.Attempts+1, d)
	ev.Kind = shopdb.EventPhase
	saved, ok := e.save(ctx, p, cur, next, ev)
	e.Metrics.Error(ErrKindRejected)
	if ok {
		p.count(func(s *Summary) { s.Rejected++ })
		e.log.Warn(MsgRejected, append(requestFields(saved), zap.String(FieldFrom, string(cur.Phase)),
			zap.String(FieldRoute, route), zap.Int(FieldStatus, statusOf(reason)), zap.Error(reason))...)
	}
}

// callEvent describes the outcome of one remote call.
func callEvent(route string, err error, attempt int, d time.Duration) shopdb.Event {
	ev := shopdb.Event{Kind: shopdb.EventCall, Route: route, Attempt: attempt, Duration: d, Status: statusOf(err)}
	if err != nil {
		ev.Message = err.Error()
	}
	return ev
}

// statusOf returns the HTTP status of a remote error, 0 when none.
func statusOf(err error) int {
	var re *remote.Error
	if errors.As(err, &re) {
		return re.Status
	}
	return 0
}

// requestFields are the log fields that identify a request.
func requestFields(r shopdb.Request) []zap.Field {
	fs := []zap.Field{zap.String(FieldRequest, r.RequestID), zap.String(FieldPhase, string(r.Phase))}
	if r.ClaimNumber != "" {
		fs = append(fs, zap.String(FieldClaim, r.ClaimNumber))
	}
	if r.JobNumber != "" {
		fs = append(fs, zap.String(FieldJob, r.JobNumber))
	}
	return fs
}

// capText caps a message stored in the state tables.
func capText(s string) string {
	if len(s) <= maxErrorLen {
		return s
	}
	cut := maxErrorLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// isHeld reports whether r is held for invalid shop data.
func isHeld(r shopdb.Request) bool { return strings.HasPrefix(r.LastError, heldPrefix) }

// isConflictStreak reports whether r's last failure was an accept conflict.
func isConflictStreak(r shopdb.Request) bool { return strings.HasPrefix(r.LastError, conflictPrefix) }
