package sync

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"slices"
	"time"

	"github.com/quotesync/quotesync/shopdb"
)

// The compact form of what the cache keeps between passes. An idle daemon
// with ten thousand tracked jobs keeps them for the next pass, and as
// read (a []shopdb.Request of 11 strings and 7 times a row, maps of
// shopdb.JobState) they were most of its resident memory. Packed, every
// row is a few bytes of varints in one []byte: the phase, reason and
// intent as indexes into a table of the few values in use, each other
// string as the length of the prefix it shares with the same field of
// the row before and the rest (hex digits two to a byte), each time as
// seconds after the same field of the row before and its fraction. The
// estimate states and the listed ids name rows by index where they can
// (a state's marker is most often the row's PushedMarker). Unpacking
// gives back exactly what was packed: the rows a cache hit hands the
// engine are those it would have read.

// packedRows are rows in the compact form.
type packedRows struct {
	data  []byte
	n     int
	words []string // the Phase, ResumePhase, Reason and Intent values
	// odd are the rows the form cannot hold as they are, kept whole by
	// index: a time with a zone other than UTC or a monotonic clock
	// reading (the database gives neither).
	odd map[int]shopdb.Request
	// insurer is every row's: a pass reads its engine's insurer's rows.
	insurer string
}

// Row flags, the first varint of a packed row.
const (
	rowOdd = 1 << iota // in packedRows.odd
	rowJobCreated
	rowSupplement
	rowJSON // RequestJSON is not nil
	rowTimes
)

// rowTimeFields are the times of r in the packed order.
func rowTimeFields(r *shopdb.Request) [7]*time.Time {
	return [7]*time.Time{&r.NextAttemptAt, &r.Expiry, &r.BookingDate, &r.CreatedAt, &r.UpdatedAt, &r.PushedAt, &r.SubmittedAt}
}

// rowStringFields are the strings of r, other than its words, in the
// packed order.
func rowStringFields(r *shopdb.Request) [7]*string {
	return [7]*string{&r.RequestID, &r.ClaimNumber, &r.JobNumber, &r.ReleasedJob, &r.PushedHash, &r.PushedMarker, &r.LastError}
}

// plainTime reports whether the packed form holds t exactly: UTC (or
// zero) and without a monotonic clock reading.
func plainTime(t time.Time) bool {
	return t.Location() == time.UTC && t == t.Round(0)
}

// packer appends the compact form to buf.
type packer struct{ buf []byte }

func (p *packer) uvarint(v uint64) { p.buf = binary.AppendUvarint(p.buf, v) }
func (p *packer) varint(v int64)   { p.buf = binary.AppendVarint(p.buf, v) }

// str appends s as the length of the prefix it shares with prev and the
// rest: its length shifted left by one, the low bit set when the rest is
// lowercase hex digits packed two to a byte.
func (p *packer) str(s, prev string) {
	n := 0
	for n < len(s) && n < len(prev) && s[n] == prev[n] {
		n++
	}
	rest := s[n:]
	if len(rest)%2 == 1 && n > 0 && lowerHex(s[n-1:]) {
		n--
		rest = s[n:]
	}
	p.uvarint(uint64(n))
	if len(rest) >= 2 && len(rest)%2 == 0 && lowerHex(rest) {
		p.uvarint(uint64(len(rest)/2)<<1 | 1)
		p.buf, _ = hex.AppendDecode(p.buf, []byte(rest)) // hex: lowerHex said so
		return
	}
	p.uvarint(uint64(len(rest)) << 1)
	p.buf = append(p.buf, rest...)
}

// lowerHex reports whether s is only the digits of lowercase hex.
func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// time appends t (plain, not zero) as its seconds after base (the Unix
// seconds of the same field's time packed last, 0 when none) and its
// fraction: microseconds shifted left by one, or nanoseconds with the low
// bit set.
func (p *packer) time(t time.Time, base int64) {
	p.varint(t.Unix() - base)
	if ns := uint64(t.Nanosecond()); ns%1000 == 0 {
		p.uvarint(ns / 1000 << 1)
	} else {
		p.uvarint(ns<<1 | 1)
	}
}

// packRows returns rows in the compact form.
func packRows(rows []shopdb.Request) *packedRows {
	pr := &packedRows{n: len(rows)}
	if len(rows) > 0 {
		pr.insurer = rows[0].Insurer
	}
	word := map[string]uint64{}
	wordOf := func(s string) uint64 {
		i, ok := word[s]
		if !ok {
			i = uint64(len(pr.words))
			word[s] = i
			// A copy: a word must not keep the row it came from alive.
			pr.words = append(pr.words, string([]byte(s)))
		}
		return i
	}
	p := &packer{buf: make([]byte, 0, 128*len(rows))}
	var prev shopdb.Request
	var base [7]int64 // the Unix seconds of each time last packed
	for i := range rows {
		r := &rows[i]
		times := rowTimeFields(r)
		plain := true
		for _, t := range times {
			plain = plain && plainTime(*t)
		}
		if !plain {
			if pr.odd == nil {
				pr.odd = map[int]shopdb.Request{}
			}
			pr.odd[i] = *r
			p.uvarint(rowOdd)
			continue
		}
		var flags uint64
		if r.JobCreated {
			flags |= rowJobCreated
		}
		if r.SupplementNeeded {
			flags |= rowSupplement
		}
		if r.RequestJSON != nil {
			flags |= rowJSON
		}
		for k, t := range times {
			if !t.IsZero() {
				flags |= rowTimes << k
			}
		}
		p.uvarint(flags)
		p.uvarint(wordOf(string(r.Phase)))
		p.uvarint(wordOf(string(r.ResumePhase)))
		p.uvarint(wordOf(string(r.Reason)))
		p.uvarint(wordOf(string(r.Intent)))
		prevStrs := rowStringFields(&prev)
		for k, s := range rowStringFields(r) {
			p.str(*s, *prevStrs[k])
		}
		p.varint(int64(r.Attempts))
		p.varint(r.Version)
		for k, t := range times {
			if !t.IsZero() {
				p.time(*t, base[k])
				base[k] = t.Unix()
			}
		}
		if r.RequestJSON != nil {
			p.uvarint(uint64(len(r.RequestJSON)))
			p.buf = append(p.buf, r.RequestJSON...)
		}
		prev.RequestID, prev.ClaimNumber, prev.JobNumber, prev.ReleasedJob = r.RequestID, r.ClaimNumber, r.JobNumber, r.ReleasedJob
		prev.PushedHash, prev.PushedMarker, prev.LastError = r.PushedHash, r.PushedMarker, r.LastError
	}
	// The buffer grew by doubling: keep the bytes, not its spare capacity.
	pr.data = append([]byte(nil), p.buf...)
	return pr
}

// unpacker reads the compact form.
type unpacker struct {
	data []byte
	off  int
}

func (u *unpacker) uvarint() uint64 {
	if u.off < len(u.data) && u.data[u.off] < 0x80 {
		u.off++
		return uint64(u.data[u.off-1])
	}
	v, n := binary.Uvarint(u.data[u.off:])
	u.off += n
	return v
}

func (u *unpacker) varint() int64 {
	v, n := binary.Varint(u.data[u.off:])
	u.off += n
	return v
}

// str appends the string str packed (its prefix from prev) to scratch.
func (u *unpacker) str(scratch []byte, prev string) []byte {
	n := u.uvarint()
	scratch = append(scratch, prev[:n]...)
	m := u.uvarint()
	if m&1 == 1 {
		b := u.data[u.off : u.off+int(m>>1)]
		u.off += len(b)
		return hex.AppendEncode(scratch, b)
	}
	b := u.data[u.off : u.off+int(m>>1)]
	u.off += len(b)
	return append(scratch, b...)
}

// time reads a time packed after the one whose Unix seconds are base
// (0 when none).
func (u *unpacker) time(base int64) time.Time {
	sec := base + u.varint()
	f := u.uvarint()
	ns := int64(f >> 1)
	if f&1 == 0 {
		ns *= 1000
	}
	return time.Unix(sec, ns).UTC()
}

// unpack returns the rows as they were packed, in a new slice: each row's
// strings share one allocation of their own (a string the engine keeps
// keeps its row's few bytes alive, not all the rows).
func (pr *packedRows) unpack() []shopdb.Request {
	if pr.n == 0 {
		return nil
	}
	rows := make([]shopdb.Request, pr.n)
	u := &unpacker{data: pr.data}
	var prev [7]string // the strings of the row before
	var base [7]int64  // the Unix seconds of each time last packed
	var scratch []byte
	var ends [7]int
	for i := range rows {
		flags := u.uvarint()
		if flags&rowOdd != 0 {
			r := pr.odd[i]
			r.RequestJSON = slices.Clone(r.RequestJSON)
			rows[i] = r
			continue
		}
		r := &rows[i]
		r.Insurer = pr.insurer
		r.JobCreated, r.SupplementNeeded = flags&rowJobCreated != 0, flags&rowSupplement != 0
		r.Phase = shopdb.Phase(pr.words[u.uvarint()])
		r.ResumePhase = shopdb.Phase(pr.words[u.uvarint()])
		r.Reason = shopdb.Reason(pr.words[u.uvarint()])
		r.Intent = shopdb.Intent(pr.words[u.uvarint()])
		scratch = scratch[:0]
		for k := range ends {
			scratch = u.str(scratch, prev[k])
			ends[k] = len(scratch)
		}
		all := string(scratch)
		start := 0
		for k := range prev {
			prev[k] = all[start:ends[k]]
			start = ends[k]
		}
		r.RequestID, r.ClaimNumber, r.JobNumber, r.ReleasedJob = prev[0], prev[1], prev[2], prev[3]
		r.PushedHash, r.PushedMarker, r.LastError = prev[4], prev[5], prev[6]
		r.Attempts = int(u.varint())
		r.Version = u.varint()
		if flags&(rowTimes*0x7f) != 0 {
			for k, t := range rowTimeFields(r) {
				if flags&(rowTimes<<k) != 0 {
					*t = u.time(base[k])
					base[k] = t.Unix()
				}
			}
		}
		if flags&rowJSON != 0 {
			n := int(u.uvarint())
			r.RequestJSON = append(make(json.RawMessage, 0, n), u.data[u.off:u.off+n]...)
			u.off += n
		}
	}
	return rows
}

// size is how many bytes the packed rows hold (for the tests).
func (pr *packedRows) size() int { return len(pr.data) }

// packedStates are estimate states in the compact form, with the rows
// they name (a state names a row by its index when the row's JobNumber
// is the job).
type packedStates struct {
	rows *packedRows
	data []byte
	bad  map[string]error // few, and kept as they are
}

// Entry flags of packed states.
const (
	stateAbsent    = 1 << iota // in jobStates.absent, not in states
	stateRow                   // the job is the JobNumber of the row whose index follows
	stateFinal                 // JobState.Final
	stateMarkerRow             // the marker is the row's PushedMarker
	stateJobOther              // JobState.Job is not the job it is kept under
)

// packStates returns s in the compact form, naming rows of rows (which
// are the unpacked pr) where it can.
func packStates(s jobStates, pr *packedRows, rows []shopdb.Request) *packedStates {
	ps := &packedStates{rows: pr, bad: s.bad}
	if len(s.states)+len(s.absent) == 0 {
		return ps
	}
	byJob := make(map[string]int, len(rows))
	for i := len(rows) - 1; i >= 0; i-- {
		if j := rows[i].JobNumber; j != "" {
			byJob[j] = i
		}
	}
	p := &packer{buf: make([]byte, 0, 4*(len(s.states)+len(s.absent)))}
	p.uvarint(uint64(len(s.states) + len(s.absent)))
	entry := func(job string, flags uint64) (int, uint64) {
		i, ok := byJob[job]
		if ok {
			flags |= stateRow
		}
		return i, flags
	}
	for job, st := range s.states {
		i, flags := entry(job, 0)
		if st.Final {
			flags |= stateFinal
		}
		if flags&stateRow != 0 && st.Marker == rows[i].PushedMarker {
			flags |= stateMarkerRow
		}
		if st.Job != job {
			flags |= stateJobOther
		}
		p.uvarint(flags)
		if flags&stateRow != 0 {
			p.uvarint(uint64(i))
		} else {
			p.str(job, "")
		}
		if flags&stateMarkerRow == 0 {
			p.str(st.Marker, "")
		}
		if flags&stateJobOther != 0 {
			p.str(st.Job, "")
		}
	}
	for job := range s.absent {
		i, flags := entry(job, stateAbsent)
		p.uvarint(flags)
		if flags&stateRow != 0 {
			p.uvarint(uint64(i))
		} else {
			p.str(job, "")
		}
	}
	ps.data = append([]byte(nil), p.buf...)
	return ps
}

// unpack returns the states as they were packed; rows are ps.rows
// unpacked.
func (ps *packedStates) unpack(rows []shopdb.Request) jobStates {
	s := jobStates{bad: make(map[string]error, len(ps.bad)), absent: map[string]bool{}}
	for j, err := range ps.bad {
		s.bad[j] = err
	}
	if len(ps.data) == 0 {
		s.states = map[string]shopdb.JobState{}
		return s
	}
	u := &unpacker{data: ps.data}
	n := int(u.uvarint())
	s.states = make(map[string]shopdb.JobState, n)
	str := func() string { return string(u.str(nil, "")) }
	for range n {
		flags := u.uvarint()
		var job string
		var i int
		if flags&stateRow != 0 {
			i = int(u.uvarint())
			job = rows[i].JobNumber
		} else {
			job = str()
		}
		if flags&stateAbsent != 0 {
			s.absent[job] = true
			continue
		}
		st := shopdb.JobState{Job: job, Final: flags&stateFinal != 0}
		if flags&stateMarkerRow != 0 {
			st.Marker = rows[i].PushedMarker
		} else {
			st.Marker = str()
		}
		if flags&stateJobOther != 0 {
			st.Job = str()
		}
		s.states[job] = st
	}
	return s
}

// packedIDs are the listed ids a cache's rows were read for, in the
// compact form: the index of the row that has the id, else the id.
type packedIDs struct {
	n    int
	data []byte
}

func packIDs(ids []string, rows []shopdb.Request) packedIDs {
	byID := make(map[string]int, len(rows))
	for i := range rows {
		byID[rows[i].RequestID] = i
	}
	p := &packer{buf: make([]byte, 0, 3*len(ids))}
	for _, id := range ids {
		if i, ok := byID[id]; ok {
			p.uvarint(uint64(i) + 1)
			continue
		}
		p.uvarint(0)
		p.str(id, "")
	}
	return packedIDs{n: len(ids), data: append([]byte(nil), p.buf...)}
}

// each calls f with every id packed, in order, until f returns false;
// rows are the cache's rows unpacked.
func (pi packedIDs) each(rows []shopdb.Request, f func(id string) bool) {
	u := &unpacker{data: pi.data}
	var scratch []byte
	for range pi.n {
		var id string
		if i := u.uvarint(); i > 0 {
			id = rows[i-1].RequestID
		} else {
			scratch = u.str(scratch[:0], "")
			id = string(scratch)
		}
		if !f(id) {
			return
		}
	}
}

// covers reports whether every one of ids is packed.
func (pi packedIDs) covers(rows []shopdb.Request, ids []string) bool {
	// Most often the list is the same as when the rows were read, in the
	// same order.
	if len(ids) == pi.n {
		k, same := 0, true
		pi.each(rows, func(id string) bool {
			same = id == ids[k]
			k++
			return same
		})
		if same {
			return true
		}
	}
	set := make(map[string]bool, pi.n)
	pi.each(rows, func(id string) bool { set[id] = true; return true })
	return covers(set, ids)
}
