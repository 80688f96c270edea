package sync

import (
	"cmp"
	"errors"
	gosync "sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/quotesync/quotesync/remote/redact"
)

// Log field keys. They are stable: operators filter journald and log
// pipelines on them (docs/logs.md lists them).
const (
	fieldInsurer  = "insurer"
	fieldRequest  = "request"
	fieldClaim    = "claim"
	fieldJob      = "job"
	fieldPhase    = "phase"
	fieldFrom     = "from"
	fieldReason   = "reason"
	fieldDetail   = "detail"
	fieldAttempt  = "attempt"
	fieldStatus   = "status"
	fieldDuration = "duration"
	fieldRoute    = "route"
	fieldNext     = "next_attempt"
	fieldItems    = "items"
	fieldReleased = "released"
	fieldInferred = "inferred"
	fieldStreak   = "consecutive_errors"
)

// logLine is how one kind of event is logged: its level and message.
type logLine struct {
	level zapcore.Level
	msg   string
}

// logLines gives every event kind its line; docs/logs.md explains each
// message. An idle pass logs nothing at info.
var logLines = map[EventKind]logLine{
	EventWaiting:        {zap.InfoLevel, "waiting for a job in the shop"},
	EventReserveFailed:  {zap.WarnLevel, "job number not reserved; the request waits and is tried again"},
	EventReserved:       {zap.InfoLevel, "job number reserved"},
	EventAccepted:       {zap.InfoLevel, "request accepted"},
	EventAcceptUnknown:  {zap.WarnLevel, "accept outcome unknown: probably ours; the first Draft push confirms it"},
	EventAcceptConflict: {zap.WarnLevel, "accept answered 409 while the request is pending; tried again next pass"},
	EventTakenElsewhere: {zap.WarnLevel, "request taken elsewhere: someone else accepted it"},
	EventDrafted:        {zap.InfoLevel, "draft pushed"},
	EventRedrafted:      {zap.InfoLevel, "draft re-pushed"},
	EventSubmitted:      {zap.InfoLevel, "quote submitted"},
	EventSupplement:     {zap.WarnLevel, "lines changed after submission: a supplement is needed (not pushed)"},
	EventRejected:       {zap.WarnLevel, "request rejected"},
	EventGone:           {zap.WarnLevel, "request gone"},
	EventHeld:           {zap.WarnLevel, "job held"},
	EventReleased:       {zap.InfoLevel, "job released: its data is valid again"},
	EventRetrying:       {zap.WarnLevel, "remote call failed; will retry"},
	EventUnreadable:     {zap.WarnLevel, "the remote took the write but its answer could not be read; not sent again"},
	EventRetry:          {zap.InfoLevel, "request put back into the flow"},
	EventMoved:          {zap.InfoLevel, "request moved to another insurer"},
	EventAdopted:        {zap.DebugLevel, "request written before insurers given to its insurer"},
	EventSkipped:        {zap.WarnLevel, "pending request skipped"},
	EventSubmitDeferred: {zap.InfoLevel, "estimate changed while the pass read it; submitting is left to the next pass"},
	EventStale:          {zap.InfoLevel, "state row changed under us; left to the next pass"},
	EventStatusForm:     {zap.InfoLevel, "status path found"},
	EventLeader:         {zap.InfoLevel, "leadership acquired"},
	EventStandby:        {zap.InfoLevel, "standby: another instance holds the lock"},
	EventLeaseLost:      {zap.WarnLevel, "leadership lost"},
	EventLockFailed:     {zap.ErrorLevel, "acquire the single-instance lock"},
	EventReleaseFailed:  {zap.WarnLevel, "release the single-instance lock"},
	EventExpiring:       {zap.WarnLevel, "request close to its expiry and not accepted yet"},
	EventAuthFailing:    {zap.InfoLevel, "notifying: the remote refuses the token"},
}

// Messages of the pass summary (EventPassDone).
const (
	msgPassDone     = "pass done"
	msgPassFailed   = "pass failed"
	msgUnauthorized = "remote refused the token (401/403): fix the token; the pass stopped"
	msgRecovered    = "recovered"
	msgNoFinal      = "estimate_state returns no final column: Drafts are pushed, nothing is submitted"
	msgInterrupted  = "pass interrupted; the next pass takes over"
)

// failLogInterval is how often a run of failing passes is logged at error
// level; the passes in between log at debug.
const failLogInterval = 10 * time.Minute

// LogObserver writes one line per event to a zap logger. Every text of
// an event is redacted whole, then bounded.
type LogObserver struct {
	log     *zap.Logger
	secrets *redact.Secrets

	mu          gosync.Mutex
	lastFailLog time.Time // when a failed pass was last logged at error level
}

// NewLogObserver returns an observer that logs to log, the secrets of
// secrets (nil: none) redacted from each text before it is bounded.
func NewLogObserver(log *zap.Logger, secrets *redact.Secrets) *LogObserver {
	return &LogObserver{log: log, secrets: secrets}
}

// Observe implements Observer.
func (o *LogObserver) Observe(ev Event) {
	if ev.Kind == EventPassDone {
		o.passDone(ev)
		return
	}
	line, ok := logLines[ev.Kind]
	if !ok {
		line = logLine{zap.InfoLevel, string(ev.Kind)}
	}
	if ce := o.log.Check(line.level, line.msg); ce != nil {
		ce.Write(eventFields(o.secrets, ev)...)
	}
}

// eventFields are the log fields of an event.
func eventFields(secrets *redact.Secrets, ev Event) []zap.Field {
	var fs []zap.Field
	str := func(k, v string) {
		if v != "" {
			fs = append(fs, zap.String(k, v))
		}
	}
	num := func(k string, n int) {
		if n > 0 {
			fs = append(fs, zap.Int(k, n))
		}
	}
	flag := func(k string, b bool) {
		if b {
			fs = append(fs, zap.Bool(k, true))
		}
	}
	str(fieldInsurer, ev.Insurer)
	str(fieldRequest, boundText(secrets, ev.Request, 128))
	if ev.Request != "" || ev.To != "" {
		str(fieldPhase, string(ev.To))
	}
	str(fieldClaim, boundText(secrets, ev.Claim, 80))
	str(fieldJob, ev.Job)
	if ev.From != ev.To {
		str(fieldFrom, cmp.Or(string(ev.From), "new"))
	}
	str(fieldReason, string(ev.Reason))
	str(fieldDetail, boundText(secrets, ev.Detail, 1000))
	str(fieldRoute, ev.Route)
	num(fieldAttempt, ev.Attempt)
	num(fieldStatus, ev.Status)
	if ev.Duration > 0 {
		fs = append(fs, zap.Duration(fieldDuration, ev.Duration))
	}
	if !ev.Next.IsZero() {
		fs = append(fs, zap.Time(fieldNext, ev.Next))
	}
	if ev.Kind == EventDrafted || ev.Kind == EventRedrafted {
		fs = append(fs, zap.Int(fieldItems, ev.Items))
	}
	flag(fieldReleased, ev.Released)
	flag(fieldInferred, ev.Inferred)
	num(fieldStreak, ev.Streak)
	if ev.Err != nil {
		fs = append(fs, zap.String("error", boundText(secrets, ev.Err.Error(), 2000)))
	}
	return fs
}

// passDone logs a pass's summary: nothing at info when it was idle, a
// failure at error level at most once per failLogInterval while failures
// last (debug in between), and "recovered" once when they end.
func (o *LogObserver) passDone(ev Event) {
	s := Summary{}
	if ev.Summary != nil {
		s = *ev.Summary
	}
	fields := []zap.Field{
		zap.Int("pending", s.Pending), zap.Int("tracked", s.Tracked),
		zap.Int("accepted", s.Accepted), zap.Int("drafted", s.Drafted), zap.Int("redrafted", s.Redrafted),
		zap.Int("submitted", s.Submitted), zap.Int("rejected", s.Rejected), zap.Int("gone", s.Gone),
		zap.Int("taken_elsewhere", s.TakenElsewhere), zap.Int("accept_unknown", s.AcceptUnknown),
		zap.Int("held", s.Held), zap.Int("waiting", s.Waiting), zap.Int("retrying", s.Retrying),
		zap.Int("supplements", s.Supplements), zap.Duration(fieldDuration, s.Duration),
	}
	if ev.Insurer != "" {
		fields = append([]zap.Field{zap.String(fieldInsurer, ev.Insurer)}, fields...)
	}
	err := ev.Err
	switch {
	case errors.Is(err, ErrInterrupted):
		o.log.Info(msgInterrupted, fields...)
		return
	case err != nil:
		fields = append(fields, zap.Int(fieldStreak, ev.Streak), zap.String("error", boundText(o.secrets, err.Error(), 2000)))
		level := zap.DebugLevel
		o.mu.Lock()
		if ev.Streak <= 1 || ev.At.Sub(o.lastFailLog) >= failLogInterval {
			level, o.lastFailLog = zap.ErrorLevel, ev.At
		}
		o.mu.Unlock()
		msg := msgPassFailed
		if errors.Is(err, ErrUnauthorized) {
			msg = msgUnauthorized
		}
		o.log.Log(level, msg, fields...)
	case ev.Streak > 0:
		o.log.Info(msgRecovered, append(fields, zap.Int(fieldStreak, ev.Streak))...)
	case s.Changed():
		o.log.Info(msgPassDone, fields...)
	default:
		o.log.Debug(msgPassDone, fields...)
	}
}
