package remote

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// DecodeError is returned by ListRequests beside the requests it could
// decode when some entries of the list could not be: one broken request
// must not hide the others from the reconciler. It matches ErrRejected:
// asking again will not change what the service sent.
type DecodeError struct {
	Total   int              // entries in the list
	Skipped []SkippedRequest // entries not returned, in list order
}

// SkippedRequest is one list entry ListRequests could not decode.
type SkippedRequest struct {
	Index int // position in the list, 0-based
	// ID is the request id when it could be read whole and is at most
	// MaxSkippedIDLen bytes, else "".
	ID string
	// IDText names the id for people when one could be read at all: ID
	// itself, or the first bytes of a longer id and its length
	// ("aaaa… (10485760 bytes)"). "" when no id could be read.
	IDText string
	// Unlike is set when the entry's id is of a type no request id has (an
	// object, an array, a boolean): whatever the entry is, it is not a
	// request that was listed before with a readable id.
	Unlike bool
	Field  string // the JSON field at fault ("expiry"), "" for the whole entry
	Err    error  // bounded: never the whole entry or a whole long value
}

// MaxSkippedIDLen is the longest id a SkippedRequest carries whole.
const MaxSkippedIDLen = 256

// Name names the entry for people: "request 17", or "entry 4 (id
// aaaa… (10485760 bytes))" when the id is not short, or "entry 4".
func (s SkippedRequest) Name() string {
	switch {
	case s.ID != "":
		return "request " + s.ID
	case s.IDText != "":
		return fmt.Sprintf("entry %d (id %s)", s.Index, s.IDText)
	}
	return fmt.Sprintf("entry %d", s.Index)
}

// Error lists the skipped requests: "decode requests: skipped 2 of 10:
// request 17: expiry: ...; entry 4: id: missing". At most ten are listed.
func (e *DecodeError) Error() string {
	const most = 10
	parts := make([]string, 0, min(len(e.Skipped), most+1))
	for i, s := range e.Skipped {
		if i == most {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.Skipped)-most))
			break
		}
		parts = append(parts, s.Err.Error())
	}
	return fmt.Sprintf("decode requests: skipped %d of %d: %s", len(e.Skipped), e.Total, strings.Join(parts, "; "))
}

// Is matches ErrRejected.
func (e *DecodeError) Is(target error) bool { return target == ErrRejected }

// Unwrap returns the errors of the skipped entries.
func (e *DecodeError) Unwrap() []error {
	errs := make([]error, 0, len(e.Skipped))
	for _, s := range e.Skipped {
		errs = append(errs, s.Err)
	}
	return errs
}

// Limits of one entry of the pending list. A real request is a few
// kilobytes and a few levels deep; an entry beyond either is skipped
// undecoded, costing neither memory nor stack.
const (
	// MaxEntryBytes is the largest list entry decoded.
	MaxEntryBytes = 1 << 20
	// MaxEntryDepth is the deepest nesting of objects and arrays decoded
	// within an entry (the entry itself is level 1).
	MaxEntryDepth = 64
	// entryPrefix is how much of a skipped oversize entry is kept, to read
	// its id and name the field at fault.
	entryPrefix = 4 << 10
	// headBytes is how much of a body that is not the expected JSON is
	// kept to say what came.
	headBytes = 512
)

type listLimits struct {
	keep int64 // bytes of decodable entries kept, in all
	read int64 // bytes read, skipped entries included
}

// bodyReadError is a failure to read the body: a transport problem.
type bodyReadError struct{ err error }

func (e *bodyReadError) Error() string { return "read response body: " + e.err.Error() }
func (e *bodyReadError) Unwrap() error { return e.err }

// errNotArray is the cause when the list is not a JSON array.
var errNotArray = errors.New("not a JSON array")

// decodeRequestsFrom decodes the body of GET /requests as it is read: a
// JSON array (null or an empty body is an empty list), split into its
// entries, each then decoded on its own; one over the limits, not valid
// UTF-8 or not a valid request is skipped and reported in skipped.
//
// A body that is not an array, is cut short or breaks the limits as a
// whole is an error with no requests; head is then the start of the body
// (at most headBytes), for the message.
func decodeRequestsFrom(r io.Reader, lim listLimits) (reqs []Request, skipped *DecodeError, head []byte, err error) {
	s := &listScanner{r: bufio.NewReaderSize(io.LimitReader(r, lim.read), 32<<10), limit: lim.read}
	first, err := s.skipSpace()
	switch {
	case err == io.EOF:
		return nil, nil, nil, nil // an empty body: no requests
	case err != nil:
		return nil, nil, s.head, err
	case first == 'n':
		if lit, err := s.literal(); err == nil && lit == "null" {
			if _, err := s.skipSpace(); err == io.EOF {
				return nil, nil, nil, nil
			}
		}
		return nil, nil, s.head, errNotArray
	case first != '[':
		s.fillHead()
		return nil, nil, s.head, errNotArray
	}
	s.next() // the '['
	var kept int64
	total := 0
	for {
		c, err := s.skipSpace()
		if err != nil {
			return nil, nil, s.head, s.cut(err)
		}
		if c == ']' && total == 0 {
			s.next()
			break
		}
		e, err := s.entry()
		if err != nil {
			return nil, nil, s.head, s.cut(err)
		}
		i, req := total, Request{}
		total++
		if sk, ok := checkEntry(i, e); !ok {
			skipped = addSkip(skipped, sk)
		} else if err := req.UnmarshalJSON(e.data); err != nil {
			skipped = addSkip(skipped, skippedRequest(i, e.data, err))
		} else {
			kept += int64(len(e.data))
			if kept > lim.keep {
				return nil, nil, s.head, fmt.Errorf("the pending list exceeds %d bytes of decodable entries", lim.keep)
			}
			reqs = append(reqs, req)
		}
		c, err = s.skipSpace()
		if err != nil {
			return nil, nil, s.head, s.cut(err)
		}
		s.next()
		if c == ']' {
			break
		}
		if c != ',' {
			return nil, nil, s.head, fmt.Errorf("malformed JSON array: %q after entry %d", c, i)
		}
	}
	if c, err := s.skipSpace(); err != io.EOF {
		if err != nil {
			return nil, nil, s.head, s.cut(err)
		}
		return nil, nil, s.head, fmt.Errorf("malformed JSON: %q after the array", c)
	}
	if skipped != nil {
		skipped.Total = total
	}
	if reqs == nil {
		reqs = []Request{}
	}
	return reqs, skipped, nil, nil
}

func addSkip(d *DecodeError, s SkippedRequest) *DecodeError {
	if d == nil {
		d = &DecodeError{}
	}
	d.Skipped = append(d.Skipped, s)
	return d
}

// rawEntry is one entry of the list as split: its bytes (the first
// entryPrefix when oversize), its size and its deepest nesting.
type rawEntry struct {
	data     []byte
	size     int64
	depth    int
	oversize bool
}

// checkEntry refuses an entry over the limits or not valid UTF-8, naming
// what it can of it; ok is true when the entry may be decoded.
func checkEntry(i int, e rawEntry) (SkippedRequest, bool) {
	var cause error
	field := ""
	switch {
	case e.oversize:
		cause = fmt.Errorf("the entry is %d bytes, larger than the %d decoded", e.size, MaxEntryBytes)
		field, _ = heaviest(e.data)
	case e.depth > MaxEntryDepth:
		cause = fmt.Errorf("the entry is nested %d levels deep, deeper than the %d decoded", e.depth, MaxEntryDepth)
		_, field = heaviest(e.data)
	default:
		if field, cause = badTextMember(e.data); cause == nil {
			return SkippedRequest{}, true
		}
	}
	sk := SkippedRequest{Index: i, Field: field}
	sk.ID, sk.IDText, sk.Unlike = entryID(e.data)
	err := cause
	if field != "" {
		err = &FieldError{Field: field, Err: cause}
	}
	sk.Err = fmt.Errorf("%s: %w", sk.Name(), err)
	return sk, false
}

// skippedRequest describes entry i that failed with err.
func skippedRequest(i int, raw []byte, err error) SkippedRequest {
	s := SkippedRequest{Index: i}
	var fe *FieldError
	if errors.As(err, &fe) {
		s.Field = fe.Field
	}
	s.ID, s.IDText, s.Unlike = entryID(raw)
	if s.ID == "" {
		err = fmt.Errorf("%s: %w", s.Name(), err)
	}
	s.Err = err
	return s
}

// listScanner splits a JSON array read from r into its entries, one byte
// at a time and without recursion. encoding/json's Decoder was weighed: it
// holds an entry whole before its size can be refused, and one malformed
// entry ends the whole list.
type listScanner struct {
	r     *bufio.Reader
	limit int64 // bytes r may give: reaching it means the body was cut
	n     int64 // bytes consumed
	head  []byte
	c     byte // the current byte, valid when have
	have  bool
	buf   []byte // the entry buffer, reused: a decoded Request copies what it keeps
}

func (s *listScanner) peek() (byte, error) {
	if s.have {
		return s.c, nil
	}
	c, err := s.r.ReadByte()
	if err != nil {
		if err != io.EOF {
			err = &bodyReadError{err}
		} else if s.n >= s.limit {
			err = fmt.Errorf("the body exceeds %d bytes", s.limit-1)
		}
		return 0, err
	}
	if len(s.head) < headBytes {
		s.head = append(s.head, c)
	}
	s.c, s.have = c, true
	return c, nil
}

func (s *listScanner) next() {
	if s.have {
		s.have = false
		s.n++
	}
}

// skipSpace consumes JSON white space and returns the next byte.
func (s *listScanner) skipSpace() (byte, error) {
	for {
		c, err := s.peek()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			s.next()
			continue
		}
		return c, nil
	}
}

// literal reads a run of letters (null, true, false).
func (s *listScanner) literal() (string, error) {
	var b []byte
	for {
		c, err := s.peek()
		if err != nil || c < 'a' || c > 'z' || len(b) > 8 {
			return string(b), err
		}
		b = append(b, c)
		s.next()
	}
}

// fillHead reads on until head is full or the body ends.
func (s *listScanner) fillHead() {
	for len(s.head) < headBytes {
		s.next()
		if _, err := s.peek(); err != nil {
			return
		}
	}
}

// cut is the error of a body that ended inside the array.
func (s *listScanner) cut(err error) error {
	if err == io.EOF {
		return fmt.Errorf("unexpected end of the JSON array after %d bytes", s.n)
	}
	return err
}

// entry reads one entry, up to the ',' or ']' that follows it (not
// consumed), checking only its structure (strings, brackets).
func (s *listScanner) entry() (rawEntry, error) {
	e := rawEntry{data: s.buf[:0]}
	defer func() {
		if !e.oversize {
			s.buf = e.data[:0]
		}
	}()
	var (
		depth       int
		inStr, esc  bool
		started     bool
		stack       []byte // the open brackets, to match their closers
		stackDepthN int    // brackets beyond what stack keeps
	)
	for {
		c, err := s.peek()
		if err != nil {
			return e, err
		}
		if !inStr && depth == 0 && started {
			switch c {
			case ',', ']', ' ', '\t', '\n', '\r':
				return e, nil
			}
		}
		if !inStr && depth == 0 && !started && (c == ',' || c == ']') {
			return e, fmt.Errorf("malformed JSON array: %q where an entry was expected", c)
		}
		started = true
		s.next()
		e.size++
		switch {
		case e.size <= MaxEntryBytes:
			e.data = append(e.data, c)
		case !e.oversize:
			e.oversize = true
			e.data = e.data[:entryPrefix:entryPrefix]
		}
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case inStr && c == '"':
			inStr = false
			if depth == 0 {
				return e, nil
			}
		case inStr:
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
			e.depth = max(e.depth, depth)
			if len(stack) < MaxEntryDepth+1 {
				stack = append(stack, c)
			} else {
				stackDepthN++
			}
		case c == '}' || c == ']':
			want := byte('{')
			if c == ']' {
				want = '['
			}
			if stackDepthN > 0 {
				stackDepthN-- // past what is checked: the entry is refused anyway
			} else if len(stack) == 0 || stack[len(stack)-1] != want {
				return e, fmt.Errorf("malformed JSON: unexpected %q in entry", c)
			} else {
				stack = stack[:len(stack)-1]
			}
			depth--
			if depth == 0 {
				return e, nil
			}
		}
	}
}
