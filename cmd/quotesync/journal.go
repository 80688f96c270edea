package main

import (
	"io"
	"os"

	"github.com/coreos/go-systemd/v22/journal"
	"go.uber.org/zap/buffer"
	"go.uber.org/zap/zapcore"
)

// toJournal reports whether w is the journal's stream: standard output or
// error connected to journald's stream transport, as $JOURNAL_STREAM
// (systemd's "DEVICE:INODE" of the stream) says. A child process that
// inherited the variable but writes elsewhere (a pipe, a file, a
// terminal) does not match, so its lines stay plain.
func toJournal(w io.Writer) bool {
	var is func() (bool, error)
	switch w {
	case os.Stdout:
		is = journal.StdoutIsJournalStream
	case os.Stderr:
		is = journal.StderrIsJournalStream
	default:
		return false
	}
	ok, err := is() // err: a malformed $JOURNAL_STREAM, which names no stream
	return ok && err == nil
}

// Syslog priorities (RFC 5424) as journald reads them from a line's
// "<N>" prefix (SyslogLevelPrefix=, on by default).
const (
	prioCrit    = 2
	prioErr     = 3
	prioWarning = 4
	prioInfo    = 6
	prioDebug   = 7
)

// syslogPriority maps a zap level to its syslog priority.
func syslogPriority(l zapcore.Level) int {
	switch {
	case l <= zapcore.DebugLevel:
		return prioDebug
	case l == zapcore.InfoLevel:
		return prioInfo
	case l == zapcore.WarnLevel:
		return prioWarning
	case l == zapcore.ErrorLevel:
		return prioErr
	}
	return prioCrit // DPanic, Panic, Fatal
}

// priorityEncoder prefixes every line of the encoder it wraps with the
// entry's syslog priority, "<4>{…}", so that `journalctl -p warning`
// finds the warnings; journald strips the prefix and keeps the rest of the
// line (zap's JSON with every field) as MESSAGE.
type priorityEncoder struct {
	zapcore.Encoder
	pool buffer.Pool
}

func newPriorityEncoder(enc zapcore.Encoder) zapcore.Encoder {
	return priorityEncoder{Encoder: enc, pool: buffer.NewPool()}
}

// Clone implements zapcore.Encoder (a child logger's fields stay wrapped).
func (p priorityEncoder) Clone() zapcore.Encoder {
	return priorityEncoder{Encoder: p.Encoder.Clone(), pool: p.pool}
}

// EncodeEntry implements zapcore.Encoder.
func (p priorityEncoder) EncodeEntry(ent zapcore.Entry, fields []zapcore.Field) (*buffer.Buffer, error) {
	line, err := p.Encoder.EncodeEntry(ent, fields)
	if err != nil {
		return nil, err
	}
	out := p.pool.Get()
	out.AppendByte('<')
	out.AppendInt(int64(syslogPriority(ent.Level)))
	out.AppendByte('>')
	_, _ = out.Write(line.Bytes())
	line.Free()
	return out, nil
}
