package remote

import (
	"bufio"
	"cmp"
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

// bodyReadError is a failure to read the body: a transport problem.
type bodyReadError struct{ err error }

func (e *bodyReadError) Error() string { return "read response body: " + e.err.Error() }
func (e *bodyReadError) Unwrap() error { return e.err }

var errNotArray = errors.New("not a JSON array")

// decodeRequestsFrom decodes the body of GET /requests as it is read: a
// JSON array (null or an empty body is an empty list), split into its
// entries, each then decoded on its own; one over the limits, not valid
// UTF-8 or not a valid request is skipped and reported in skipped.
//
// The decodable entries may take keep bytes in all, the body read bytes.
// A body that is not an array, is cut short or breaks the limits as a
// whole is an error with no requests; head is then the start of the body
// (at most headBytes; up to where decoding failed in an array), for the
// message.
func decodeRequestsFrom(r io.Reader, keep, read int64) (reqs []Request, skipped *DecodeError, head []byte, err error) {
	s := &listScanner{lr: &io.LimitedReader{R: r, N: read}, limit: read}
	s.r = bufio.NewReaderSize(io.TeeReader(s.lr, &s.head), 32<<10)
	if reqs, skipped, err = s.list(keep); err != nil {
		if err != errNotArray { // not what bufio read ahead
			s.head = s.head[:min(int64(len(s.head)), s.limit-s.lr.N-int64(s.r.Buffered()))]
		}
		return nil, nil, s.head, err
	}
	return reqs, skipped, nil, nil
}

func (s *listScanner) list(keep int64) ([]Request, *DecodeError, error) {
	switch first, err := s.skipSpace(); {
	case err == io.EOF:
		return nil, nil, nil // an empty body: no requests
	case err != nil:
		return nil, nil, err
	case first == 'n':
		lit, _ := s.r.Peek(4)
		if _, err := s.r.Discard(len(lit)); err == nil && string(lit) == "null" {
			if _, err := s.skipSpace(); err == io.EOF {
				return nil, nil, nil
			}
		}
		return nil, nil, errNotArray
	case first != '[':
		_, _ = s.r.Peek(headBytes) // read on to fill head, for the message
		return nil, nil, errNotArray
	}
	_, _ = s.r.Discard(1) // the '['
	var (
		reqs    = []Request{}
		skipped = &DecodeError{}
		kept    int64
	)
	for i := 0; ; i++ {
		c, err := s.skipSpace()
		if err != nil {
			return nil, nil, s.cut(err)
		}
		if c == ']' && i == 0 {
			_, _ = s.r.Discard(1)
			break
		}
		e, err := s.entry()
		if err != nil {
			return nil, nil, s.cut(err)
		}
		req := Request{}
		if err := checkEntry(e); err != nil {
			skipped.Skipped = append(skipped.Skipped, skippedRequest(i, e.data, err, false))
		} else if err := req.UnmarshalJSON(e.data); err != nil {
			skipped.Skipped = append(skipped.Skipped, skippedRequest(i, e.data, err, true))
		} else if kept += int64(len(e.data)); kept > keep {
			return nil, nil, fmt.Errorf("the pending list exceeds %d bytes of decodable entries", keep)
		} else {
			reqs = append(reqs, req)
		}
		if c, err = s.skipSpace(); err != nil {
			return nil, nil, s.cut(err)
		}
		_, _ = s.r.Discard(1)
		if c == ']' {
			skipped.Total = i + 1
			break
		}
		if c != ',' {
			return nil, nil, fmt.Errorf("malformed JSON array: %q after entry %d", c, i)
		}
	}
	if c, err := s.skipSpace(); err != io.EOF {
		return nil, nil, cmp.Or(err, fmt.Errorf("malformed JSON: %q after the array", c))
	}
	if len(skipped.Skipped) == 0 {
		return reqs, nil, nil
	}
	return reqs, skipped, nil
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
// the member at fault when it can.
func checkEntry(e rawEntry) error {
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
		field, cause = badTextMember(e.data)
	}
	return fieldErr(field, cause)
}

// skippedRequest describes entry i that failed with err. The error of a
// decoded entry names it already when its id is known.
func skippedRequest(i int, raw []byte, err error, decoded bool) SkippedRequest {
	s := SkippedRequest{Index: i}
	var fe *FieldError
	if errors.As(err, &fe) {
		s.Field = fe.Field
	}
	s.ID, s.IDText, s.Unlike = entryID(raw)
	if s.ID == "" || !decoded {
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
	lr    *io.LimitedReader // under r: reaching its end means the body was cut
	limit int64             // what lr gave at most
	head  prefix            // the start of the body, for messages
	buf   []byte            // the entry buffer, reused: a decoded Request copies what it keeps
}

// prefix keeps the first headBytes bytes written to it.
type prefix []byte

func (p *prefix) Write(b []byte) (int, error) {
	*p = append(*p, b[:min(len(b), headBytes-len(*p))]...)
	return len(b), nil
}

func (s *listScanner) readByte() (byte, error) {
	c, err := s.r.ReadByte()
	switch {
	case err == io.EOF && s.lr.N == 0:
		err = fmt.Errorf("the body exceeds %d bytes", s.limit-1)
	case err != nil && err != io.EOF:
		err = &bodyReadError{err}
	}
	return c, err
}

// skipSpace consumes JSON white space and returns the next byte, not
// consumed.
func (s *listScanner) skipSpace() (byte, error) {
	for {
		c, err := s.readByte()
		if err != nil {
			return 0, err
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c, s.r.UnreadByte()
		}
	}
}

// cut is the error of a body that ended inside the array.
func (s *listScanner) cut(err error) error {
	if err == io.EOF {
		return fmt.Errorf("unexpected end of the JSON array after %d bytes", s.limit-s.lr.N)
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
		inStr, esc bool
		stack      []byte // the outer MaxEntryDepth+1 open brackets, to match their closers
	)
	for depth := 0; ; {
		c, err := s.readByte()
		if err != nil {
			return e, err
		}
		if !inStr && depth == 0 && strings.IndexByte(",] \t\n\r", c) >= 0 {
			if e.size == 0 {
				return e, fmt.Errorf("malformed JSON array: %q where an entry was expected", c)
			}
			return e, s.r.UnreadByte()
		}
		e.size++
		switch {
		case e.size <= MaxEntryBytes:
			e.data = append(e.data, c)
		case !e.oversize:
			e.oversize = true
			e.data = e.data[:entryPrefix:entryPrefix]
		}
		switch {
		case esc:
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
			if len(stack) <= MaxEntryDepth {
				stack = append(stack, c)
			}
		case c == '}' || c == ']':
			if depth <= len(stack) { // past it the entry is refused anyway
				if len(stack) == 0 || stack[len(stack)-1] != c-2 { // '{'+2 is '}', '['+2 is ']'
					return e, fmt.Errorf("malformed JSON: unexpected %q in entry", c)
				}
				stack = stack[:len(stack)-1]
			}
			depth--
			if depth == 0 {
				return e, nil
			}
		}
	}
}
