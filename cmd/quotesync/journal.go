package main

import (
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"go.uber.org/zap/buffer"
	"go.uber.org/zap/zapcore"
)

// envJournalStream is the variable systemd sets, to "DEVICE:INODE" of the
// stream, when a service's standard output or error is connected to the
// journal.
const envJournalStream = "JOURNAL_STREAM"

// toJournal reports whether w is the journal's stream: an *os.File whose
// device and inode are the ones $JOURNAL_STREAM names. A child process
// that inherited the variable but writes elsewhere (a pipe, a file, a
// terminal) does not match, so its lines stay plain.
func toJournal(w io.Writer, getenv func(string) string) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	dev, ino, ok := parseJournalStream(getenv(envJournalStream))
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && uint64(st.Dev) == dev && uint64(st.Ino) == ino
}

// parseJournalStream reads "DEVICE:INODE" (both decimal).
func parseJournalStream(v string) (dev, ino uint64, ok bool) {
	d, i, found := strings.Cut(v, ":")
	if !found {
		return 0, 0, false
	}
	dev, err1 := strconv.ParseUint(d, 10, 64)
	ino, err2 := strconv.ParseUint(i, 10, 64)
	return dev, ino, err1 == nil && err2 == nil
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
