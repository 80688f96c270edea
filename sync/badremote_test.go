package sync_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// The remote's bad data through the whole engine: the emulator's answers
// are rewritten on the way by a test handler (badRemote), the rest is the
// real daemon on a real shop.

// badRemote wraps the emulator: it puts extra entries in front of the
// pending list and can rewrite the answers to Draft pushes.
type badRemote struct {
	mu      gosync.Mutex
	entries []string                 // raw list entries put first
	echo    func(body []byte) []byte // rewrites a 2xx Draft answer; nil: as is
}

func (b *badRemote) set(entries []string, echo func([]byte) []byte) {
	b.mu.Lock()
	b.entries, b.echo = entries, echo
	b.mu.Unlock()
}

func (b *badRemote) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		entries, echo := b.entries, b.echo
		b.mu.Unlock()
		list := r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/requests")
		push := r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/quotes")
		if !(list && len(entries) > 0) && !(push && echo != nil) {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := bytes.TrimSpace(rec.Body.Bytes())
		switch {
		case list:
			rest := bytes.TrimPrefix(body, []byte("["))
			if len(bytes.TrimSpace(bytes.TrimSuffix(rest, []byte("]")))) > 0 {
				rest = append([]byte(","), rest...)
			}
			body = append([]byte("["+strings.Join(entries, ",")), rest...)
		case rec.Code/100 == 2:
			body = echo(body)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// routeSubmit is the emulator's route of the default status change.
const routeSubmit = "POST /jobs/{jobId}/quotes/status/{status}"

// newBadRig is a rig whose remote is the emulator behind a badRemote.
func newBadRig(t *testing.T, o rigOptions) (*rig, *badRemote) {
	t.Helper()
	r := newRig(t, o)
	b := &badRemote{}
	srv := httptest.NewServer(b.wrap(r.emu))
	t.Cleanup(srv.Close)
	r.restart(func(s *qsync.Settings) { s.Insurers[0].Remote.BaseURL = srv.URL })
	return r, b
}

// TestBadListEntriesReportedOncePerChange: entries of the pending list the
// engine cannot take (an object id, 11,000-deep nesting, a 3 MB id, text
// that is not UTF-8, an id longer than quotesync keeps) are each reported
// once, named, with a bounded log line; the good requests are accepted and
// drafted; passes succeed. An entry is reported again only after it left
// the list and came back.
func TestBadListEntriesReportedOncePerChange(t *testing.T) {
	r, b := newBadRig(t, rigOptions{})
	bad := []string{
		`{"id": {"value": "X-1"}, "claim_number": "CLM-OBJ"}`,
		`{"id": "DEEP-1", "vehicle": ` + strings.Repeat("[", 11000) + strings.Repeat("]", 11000) + `}`,
		`{"id": "` + strings.Repeat("7", 3<<20) + `", "claim_number": "CLM-HUGE"}`,
		"{\"id\": \"UTF-1\", \"claim_number\": \"CLM-\xff\"}",
		`{"id": "` + strings.Repeat("L", 70) + `", "claim_number": "CLM-LONG"}`,
	}
	b.set(bad, nil)
	good := r.seed(sampleshop.ClaimDraft, sampleshop.ClaimNoLines)

	s := r.pass()
	if s.Accepted != 2 || s.Drafted != 1 || s.Pending != len(bad)+len(good) {
		t.Errorf("pass 1: %+v, want both good requests accepted, one drafted, %d pending", s, len(bad)+len(good))
	}
	skipped := r.events.of(qsync.EventSkipped)
	if len(skipped) != len(bad) {
		t.Fatalf("%d entries reported, want %d: %+v", len(skipped), len(bad), skipped)
	}
	wants := []struct {
		reason store.Reason
		says   []string
	}{
		{qsync.ReasonBadEntry, []string{"entry 0 (no readable id)", "field id"}},
		{qsync.ReasonBadEntry, []string{"entry 1 (request DEEP-1)", "field vehicle", "nested 11001 levels deep"}},
		{qsync.ReasonBadEntry, []string{"entry 2 (request 7777", "bytes)", "field id", "larger than"}},
		{qsync.ReasonBadEntry, []string{"entry 3 (request UTF-1)", "field claim_number", "not valid UTF-8"}},
		{qsync.ReasonTooLong, []string{"request id (70 bytes)", "longer than quotesync keeps"}},
	}
	for i, ev := range skipped {
		text := ev.Detail
		if ev.Err != nil {
			text += " " + ev.Err.Error()
		}
		if ev.Reason != wants[i].reason || len(text) > 3000 || len(ev.Request) > 200 {
			t.Errorf("report %d: reason %s, %d bytes, request %d bytes; want %s, bounded", i, ev.Reason, len(text), len(ev.Request), wants[i].reason)
		}
		for _, want := range wants[i].says {
			if !strings.Contains(text, want) {
				t.Errorf("report %d %.300q lacks %q", i, text, want)
			}
		}
	}
	for _, e := range r.logs.All() {
		for k, v := range e.ContextMap() {
			if s, ok := v.(string); ok && len(s) > 4000 {
				t.Errorf("log line %q: field %s of %d bytes", e.Message, k, len(s))
			}
		}
	}

	r.pass()
	r.pass()
	if got := r.seen(qsync.EventSkipped); got != len(bad) {
		t.Errorf("after two more passes %d reports, want still %d (once per change)", got, len(bad))
	}
	b.set(bad[1:], nil) // the object id leaves the list
	r.pass()
	b.set(bad, nil) // and comes back
	r.pass()
	if got := r.seen(qsync.EventSkipped); got != len(bad)+1 {
		t.Errorf("%d reports after an entry left and came back, want %d", got, len(bad)+1)
	}
}

// TestUnreadableDraftEchoStops: a Draft push that landed but whose answer
// cannot be read (a quantity of 1e400) is recorded once, with the reason;
// it is neither pushed again nor submitted though the estimate is final,
// over several passes; `retry` pushes it again, and once the answer reads
// the quote is submitted. Before, the push was classed temporary and
// repeated on every attempt and pass.
func TestUnreadableDraftEchoStops(t *testing.T) {
	r, b := newBadRig(t, rigOptions{})
	quantity := regexp.MustCompile(`"quantity":\s*[-0-9.eE]+`)
	b.set(nil, func(body []byte) []byte { return quantity.ReplaceAll(body, []byte(`"quantity":1e400`)) })
	id := r.seed(sampleshop.ClaimFinal)[0]

	before := r.emu.Calls()
	s := r.pass()
	if s.Accepted != 1 || s.Submitted != 0 {
		t.Errorf("pass 1: %+v, want accepted and not submitted", s)
	}
	if got := r.writes(before); got[emulator.RouteCreateQuote] != 1 || got[routeSubmit] != 0 {
		t.Errorf("pass 1 calls %v, want one Draft push and no submit", got)
	}
	row := r.row(id)
	if row.Phase != qsync.PhaseDrafted || row.Reason != qsync.ReasonUnreadable || !strings.Contains(row.LastError, "items[0].quantity") {
		t.Fatalf("row: %s (%s) %q; want drafted, unreadable, the field named", row.Phase, row.Reason, row.LastError)
	}
	if got := r.seen(qsync.EventUnreadable); got != 1 {
		t.Errorf("%d unreadable events, want 1", got)
	}
	before = r.emu.Calls()
	for range 3 {
		r.clock.advance(time.Hour)
		r.pass()
	}
	if got := r.writes(before); len(got) != 0 {
		t.Errorf("later passes wrote %v, want nothing (no repeat, no submit)", got)
	}
	if got := r.seen(qsync.EventUnreadable); got != 1 {
		t.Errorf("%d unreadable events after more passes, want 1", got)
	}

	b.set(nil, nil) // the service's answers read again
	if _, _, err := r.engine.Retry(r.ctx, id, "insurer fixed the echo"); err != nil {
		t.Fatal(err)
	}
	before = r.emu.Calls()
	r.pass()
	r.pass()
	if got := r.writes(before); got[emulator.RouteCreateQuote] != 1 || got[routeSubmit] != 1 {
		t.Errorf("after retry: calls %v, want the Draft pushed again once and submitted once", got)
	}
	if row := r.row(id); row.Phase != qsync.PhaseSubmitted || row.Reason != qsync.ReasonNone {
		t.Errorf("after retry: %s (%s), want submitted", row.Phase, row.Reason)
	}
}

// TestControlCharacterIDsLeftOut: an entry of the pending list whose id
// or claim number holds a control character (a NUL, an ESC, a bidi
// override) is left out and reported, named, as a bad entry; the good
// request beside it is accepted and drafted, and the pass succeeds.
// quotesync never tracks such an id, so it can never reach a notification
// command's QUOTESYNC_REQUEST (a NUL there stops the command from
// starting at all) or a terminal.
func TestControlCharacterIDsLeftOut(t *testing.T) {
	r, b := newBadRig(t, rigOptions{})
	bad := []string{
		`{"id": "NUL\u0000-1", "claim_number": "` + sampleshop.ClaimNoLines + `"}`,
		`{"id": "ESC-1", "claim_number": "CLM-\u001b[2J"}`,
		`{"id": "BIDI\u202e-1", "claim_number": "CLM-BIDI"}`,
	}
	b.set(bad, nil)
	good := r.seed(sampleshop.ClaimDraft)

	// The NUL entry's claim is a job of the shop's: taken, it would be
	// accepted too.
	s := r.pass()
	if s.Accepted != 1 || s.Drafted != 1 || s.Pending != len(bad)+len(good) {
		t.Errorf("pass: %+v, want the good request alone accepted and drafted, %d pending", s, len(bad)+len(good))
	}
	if row := r.row(good[0]); row.Phase != qsync.PhaseDrafted {
		t.Errorf("the good request %s is %s, want drafted", good[0], row.Phase)
	}
	skipped := r.events.of(qsync.EventSkipped)
	says := [][]string{
		{`entry 0 (request NUL` + "\x00" + `-1)`, "field id", "control character U+0000"},
		{"entry 1 (request ESC-1)", "field claim_number", "control character U+001B"},
		{"entry 2 (request BIDI\u202e-1)", "field id", "control character U+202E"},
	}
	if len(skipped) != len(bad) {
		t.Fatalf("%d entries reported, want %d: %+v", len(skipped), len(bad), skipped)
	}
	for i, ev := range skipped {
		text := ev.Detail + " " + ev.Err.Error()
		if ev.Reason != qsync.ReasonBadEntry {
			t.Errorf("report %d: reason %s, want %s", i, ev.Reason, qsync.ReasonBadEntry)
		}
		for _, w := range says[i] {
			if !strings.Contains(text, w) {
				t.Errorf("report %d %q lacks %q", i, text, w)
			}
		}
	}
}
