package sync

import (
	"fmt"
	"runtime/debug"

	"go.uber.org/zap"
)

// A panic in one insurer's pass is a bug, but it must not take the
// daemon, and with it every other insurer's work, down: it is recovered
// where the pass's work runs (the pass itself, its workers, its reads
// ahead), logged at error with the insurer and the stack, and becomes the
// failure of that pass, reported as any other (EventPassDone, the tick,
// /healthz, the metrics). What the pass committed before stays: every
// state change is written in one transaction before its event.

// msgPanic is the log line of a recovered panic.
const msgPanic = "pass panicked: a bug; this insurer's pass failed, the daemon and the other insurers go on"

// fieldStack is the log field of a recovered panic's stack.
const fieldStack = "stack"

// PanicError is the failure of a pass in which a panic was recovered.
type PanicError struct {
	Insurer string
	Value   any    // what was passed to panic
	Stack   []byte // where it happened
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("the pass panicked (a bug; the log has its stack): %v", e.Value)
}

// recovered logs v, a panic recovered in this engine's work, and returns
// it as an error.
func (e *Engine) recovered(v any) error {
	pe := &PanicError{Insurer: e.cfg.Insurer, Value: v, Stack: debug.Stack()}
	e.log.Error(msgPanic, zap.String(fieldInsurer, e.cfg.Insurer), zap.String(fieldDetail, fmt.Sprint(v)),
		zap.ByteString(fieldStack, pe.Stack))
	return pe
}

// passPanicked ends a pass in which a panic was recovered on the pass's
// own goroutine: a failed pass, reported as such by its performer unless
// its end was already being reported (the panic came from an observer of
// it).
func (e *Engine) passPanicked(p *pass, v any) error {
	err := e.recovered(v)
	p.mu.Lock()
	reported := p.reported
	p.reported = true
	p.mu.Unlock()
	if !reported {
		p.act.panicked(p, err)
	}
	return err
}

// panicked reports the end of a pass the executor performed in which a
// panic was recovered: a failed pass, in the streak of failed passes.
func (e *Engine) panicked(p *pass, err error) {
	p.mu.Lock()
	s := p.summary
	p.mu.Unlock()
	streak := int(e.failStreak.Add(1))
	s.Duration = e.Now().Sub(p.now)
	defer func() { // an observer that panics again is logged, not let through
		if v := recover(); v != nil {
			_ = e.recovered(v)
		}
	}()
	e.emit(Event{Kind: EventPassDone, At: e.Now(), Summary: &s, Err: err, Streak: streak, Duration: s.Duration})
}
