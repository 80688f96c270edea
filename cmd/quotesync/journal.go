package main

import (
	"bytes"
	"io"
	"os"
	gosync "sync"

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
		_, ok := w.(*journalErrors) // made only for the journal's stream
		return ok
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

// journalErrors writes to standard error when it is the journal's stream:
// every line it passes on starts with "<3>" (err), except the logger's own
// lines (written through logLines), which carry their priority already.
// What a verb writes to standard error outside its log is why it stops (a
// bad flag, a configuration it cannot use, a start that failed), often
// before the log exists; without the prefix journald would file it at info,
// and `journalctl -p err` would not show why the service did not start.
type journalErrors struct {
	mu     gosync.Mutex
	w      io.Writer
	inLine bool // the last write ended inside a line
}

// stderrFor returns what the verbs write their errors to: f itself, or,
// when f is standard error and the journal's stream, f behind
// journalErrors.
func stderrFor(f *os.File) io.Writer {
	if !toJournal(f) {
		return f
	}
	return &journalErrors{w: f}
}

// Write implements io.Writer for what a verb writes: one write to the
// stream per call, so that a whole line stays one line in the journal.
// Every line gets "<3>", one that starts with a priority of its own too:
// the text can quote the service or the shop (an error, whose newlines
// termtext.Lines keeps), and "\n<0>" there must not file a line as emerg,
// which journald broadcasts to every terminal. journald reads only the
// first prefix, so "<3><0>…" is filed at err with "<0>…" as its message.
func (j *journalErrors) Write(p []byte) (int, error) { return j.write(p, false) }

// logLines returns the writer of the logger's own lines: the priority
// each starts with (priorityEncoder) is kept.
func (j *journalErrors) logLines() io.Writer { return journalLog{j} }

// journalLog is journalErrors' writer of log lines.
type journalLog struct{ j *journalErrors }

func (l journalLog) Write(p []byte) (int, error) { return l.j.write(p, true) }

// write writes p as one write to the stream, "<3>" before every line but
// the first of a log line (logged), which has its own priority.
func (j *journalErrors) write(p []byte, logged bool) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]byte, 0, len(p)+8)
	for line := range bytes.Lines(p) {
		if !j.inLine && !(logged && len(out) == 0 && hasPriority(line)) {
			out = append(out, '<', '0'+prioErr, '>')
		}
		out = append(out, line...)
		j.inLine = line[len(line)-1] != '\n'
	}
	if _, err := j.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// hasPriority reports whether line starts with a syslog priority prefix
// as journald reads it: '<', one digit 0-7, '>'.
func hasPriority(line []byte) bool {
	return len(line) >= 3 && line[0] == '<' && line[1] >= '0' && line[1] <= '7' && line[2] == '>'
}
