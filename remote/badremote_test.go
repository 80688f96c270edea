package remote

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quotesync/quotesync/remote/emulator"
)

// The remote's bad data and odd answers, served by the emulator over real
// HTTP with its answers rewritten on the way (rewriteAnswers): each bad
// thing is named, everything else goes on, nothing is repeated.

// rewriteAnswers wraps h: the answers to the requests match selects are
// passed through edit (status, header, body) before they are sent.
func rewriteAnswers(match func(*http.Request) bool, edit func(status int, h http.Header, body []byte) (int, []byte)) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !match(r) {
				h.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			status, body := edit(rec.Code, rec.Header(), rec.Body.Bytes())
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			w.WriteHeader(status)
			_, _ = w.Write(body)
		})
	}
}

// isList matches GET /requests.
func isList(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/requests")
}

// prependEntries puts raw entries in front of a listed array.
func prependEntries(entries ...string) func(int, http.Header, []byte) (int, []byte) {
	return func(status int, _ http.Header, body []byte) (int, []byte) {
		body = bytes.TrimSpace(body)
		rest := bytes.TrimPrefix(body, []byte("["))
		if len(bytes.TrimSpace(bytes.TrimSuffix(rest, []byte("]")))) > 0 {
			rest = append([]byte(","), rest...)
		}
		return status, append([]byte("["+strings.Join(entries, ",")), rest...)
	}
}

// badEntries are list entries no decoder should take, and what each
// SkippedRequest must say: index, id, id text (prefix), field.
var badEntries = []struct {
	raw                     string
	id, idText, field, says string
}{
	{`{"id": {"value": "X-1"}, "claim_number": "CLM-OBJ"}`, "", "", "id", "want a string or number, got an object"},
	{`{"id": "DEEP-1", "vehicle": ` + strings.Repeat("[", 11000) + strings.Repeat("]", 11000) + `}`,
		"DEEP-1", "DEEP-1", "vehicle", "nested 11001 levels deep"},
	{`{"id": "` + strings.Repeat("a", 10<<20) + `", "claim_number": "CLM-BIG"}`,
		"", strings.Repeat("a", 40) + "… (more than", "id", "larger than the 1048576 decoded"},
	{"{\"id\": \"UTF-1\", \"claim_number\": \"CLM-\xff-1\"}", "UTF-1", "UTF-1", "claim_number", "not valid UTF-8"},
	{"{\"id\": \"UTF-2\", \"vehicle\": {\"make\": \"Citro\xebn\"}}", "UTF-2", "UTF-2", "vehicle.make", "not valid UTF-8"},
	{`{"id": "SUR-1", "claim_number": "CLM-\udc00"}`, "SUR-1", "SUR-1", "claim_number", "lone UTF-16 surrogate"},
	{`{"id": "NUL\u0000-1", "claim_number": "CLM-NUL"}`, "NUL\x00-1", "NUL\x00-1", "id", "control character U+0000 at byte 3"},
	{"{\"id\": \"CSI-1\", \"claimNumber\": \"CLM-\u009b2J\"}", "CSI-1", "CSI-1", "claimNumber", "control character U+009B"},
	{`{"id": "BIDI-1", "claim_number": "CLM-\u202eLIVE"}`, "BIDI-1", "BIDI-1", "claim_number", "control character U+202E"},
	{`{"id": "TAB\t1"}`, "TAB\t1", "TAB\t1", "id", "control character U+0009"},
}

// TestListRequestsSkipsBadEntries: a listing with an object id, an entry
// nested 11,000 deep, a 10 MiB id and text that is not valid UTF-8 gives
// the good requests, and each bad entry named by position, id and field,
// with an error that never holds the whole value. Before, the deep entry
// failed the whole list, the 10 MiB id the body cap, and the bad UTF-8 was
// silently replaced.
func TestListRequestsSkipsBadEntries(t *testing.T) {
	raws := make([]string, len(badEntries))
	for i, b := range badEntries {
		raws[i] = b.raw
	}
	emu, srv := newEmulator(t, rewriteAnswers(isList, prependEntries(raws...)))
	good := emu.AddRequests(emulator.SeedRequest{ClaimNumber: "CLM-G1"}, emulator.SeedRequest{ClaimNumber: "CLM-G2"})
	c := emuClient(t, srv, func(c *Config) { c.Timeout = 20 * time.Second })

	start := time.Now()
	reqs, err := c.ListRequests(context.Background())
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("listing took %s", d)
	}
	if got := requestIDs(reqs); !cmp.Equal(got, good) {
		t.Errorf("requests %v, want the good ones %v", got, good)
	}
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v, want a *DecodeError", err)
	}
	if de.Total != len(badEntries)+len(good) || len(de.Skipped) != len(badEntries) {
		t.Fatalf("Total %d, skipped %d; want %d and %d", de.Total, len(de.Skipped), len(badEntries)+len(good), len(badEntries))
	}
	if n := len(err.Error()); n > 4000 {
		t.Errorf("the error is %d bytes long", n)
	}
	for i, b := range badEntries {
		sk := de.Skipped[i]
		if sk.Index != i || sk.ID != b.id || false || sk.Field != b.field {
			t.Errorf("entry %d: index %d, id %q, text %.80q, field %q; want %d, %q, %q…, %q", i, sk.Index, sk.ID, "", sk.Field, i, b.id, b.idText, b.field)
		}
		msg := sk.Err.Error()
		if !strings.Contains(msg, b.says) || len(msg) > 1000 {
			t.Errorf("entry %d: error %.300q (%d bytes), want it to say %q, bounded", i, msg, len(msg), b.says)
		}
		if b.idText == "" && !strings.Contains(msg, "entry "+string(rune('0'+i))) {
			t.Errorf("entry %d without an id: the error %q does not name its position", i, msg)
		}
	}
}

// TestListRequestsNotJSON: an HTML page where the list was expected says
// what came (status, content type, the first bytes, the token redacted)
// and what it likely means; it is retried as temporary.
func TestListRequestsNotJSON(t *testing.T) {
	page := "<!DOCTYPE html>\n<html><head><title>Sign in - Corporate Proxy</title></head><body>token " + testToken + "</body></html>"
	_, srv := newEmulator(t, rewriteAnswers(isList, func(_ int, h http.Header, _ []byte) (int, []byte) {
		h.Set("Content-Type", "text/html; charset=utf-8")
		return http.StatusOK, []byte(page)
	}))
	c := emuClient(t, srv, func(c *Config) { c.MaxAttempts = 2 })
	_, err := c.ListRequests(context.Background())
	checkOneSentinel(t, err, ErrTemporary)
	msg := err.Error()
	for _, want := range []string{"status 200", `text/html; charset=utf-8`, `<!DOCTYPE html>\n<html><head><title>Sign in`,
		"an HTML page", "a proxy or login page", "remote.base_url"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	for _, bad := range []string{testToken, "want a JSON array, got", "\n"} {
		if strings.Contains(msg, bad) {
			t.Errorf("error %q holds %q", msg, bad)
		}
	}
}

// TestRedirectNamesTheFix: a 3xx is never followed; without a Location it
// says so and names remote.base_url; with one it shows where, without the
// query (which may carry a secret).
func TestRedirectNamesTheFix(t *testing.T) {
	for _, tt := range []struct {
		name, location string
		want           []string
	}{
		{"NoLocation", "", []string{"302 Found", "without a Location header", "never follows redirects", "remote.base_url"}},
		{"Location", "https://sso.example.com/login?session=s3cr3t", []string{"302 Found", "https://sso.example.com/login", "never follows redirects", "remote.base_url"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{replies: []reply{{status: http.StatusFound, header: map[string]string{"Location": tt.location}}}}
			if tt.location == "" {
				rec.replies[0].header = nil
			}
			c, _ := newTestClient(t, rec, nil)
			_, err := c.ListRequests(context.Background())
			checkOneSentinel(t, err, ErrRejected)
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("error %q shows the Location's query", err)
			}
			if n := len(rec.requests()); n != 1 {
				t.Errorf("%d attempts, want 1", n)
			}
		})
	}
}

// isCreateQuote matches POST /jobs/{id}/quotes.
func isCreateQuote(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/quotes")
}

// TestDraftEchoUnreadable: a Draft that landed but whose echo cannot be
// decoded (a quantity of 1e400, a description that is not UTF-8) is
// ErrUnreadable after one attempt: the write is not sent again. An HTML
// page in answer to a write is not the service's answer: temporary.
func TestDraftEchoUnreadable(t *testing.T) {
	quantity := regexp.MustCompile(`"quantity":\s*[-0-9.eE]+`)
	description := regexp.MustCompile(`"description":\s*"[^"]*"`)
	for _, tt := range []struct {
		name  string
		edit  func(int, http.Header, []byte) (int, []byte)
		class string
		says  []string
	}{
		{"HugeQuantity", func(s int, _ http.Header, b []byte) (int, []byte) {
			return s, quantity.ReplaceAll(b, []byte(`"quantity": 1e400`))
		}, ClassUnreadable, []string{"the write landed (status 201)", "items[0].quantity", "out of range"}},
		{"DescriptionNotUTF8", func(s int, _ http.Header, b []byte) (int, []byte) {
			return s, description.ReplaceAll(b, []byte("\"description\": \"Bumper \xff\""))
		}, ClassUnreadable, []string{"items[0].description", "not valid UTF-8"}},
		{"HTMLPage", func(_ int, h http.Header, _ []byte) (int, []byte) {
			h.Set("Content-Type", "text/html")
			return http.StatusOK, []byte("<html><body>Please log in</body></html>")
		}, ClassTemporary, []string{"an HTML page", "status 200", "<html><body>Please log in"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			emu, srv := newEmulator(t, rewriteAnswers(isCreateQuote, tt.edit))
			id := emu.AddRequests(emulator.SeedRequest{})[0]
			c := emuClient(t, srv, func(c *Config) { c.MaxAttempts = 3 })
			ctx := context.Background()
			if _, err := c.Accept(ctx, id, "RO-9", time.Time{}); err != nil {
				t.Fatal(err)
			}
			_, err := c.CreateQuote(ctx, "RO-9", draftQuote("RO-9"))
			if got := Class(err); got != tt.class {
				t.Fatalf("class %s (%v), want %s", got, err, tt.class)
			}
			for _, want := range tt.says {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			wantCalls := 1
			if tt.class == ClassTemporary {
				wantCalls = 3
			}
			if got := emu.Calls()[emulator.RouteCreateQuote]; got != wantCalls {
				t.Errorf("the emulator saw %d creates, want %d", got, wantCalls)
			}
			var e *Error
			if errors.As(err, &e) && e.Attempts != wantCalls {
				t.Errorf("%d attempts, want %d", e.Attempts, wantCalls)
			}
		})
	}
}

// TestEntryText: bad text is found wherever it is in an entry, and named
// by its path; escapes that are valid are not taken for bad ones.
func TestEntryText(t *testing.T) {
	for _, tt := range []struct {
		raw, field string
		bad        bool
	}{
		{`{"id":"1","vehicle":{"make":"Citro\u00ebn","model":"\ud83d\ude97"}}`, "", false},
		{`{"id":"1","note":"a \\ud800 is text here"}`, "", false},
		{`{"id":"1","vehicle":{"make":"x","model":"\ud83d"}}`, "vehicle.model", true},
		{`{"id":"1","vehicle":{"model":"\ude97 car"}}`, "vehicle.model", true},
		{"{\"id\":\"1\",\"accident\":{\"notes\":[\"ok\",\"\xfe\"]}}", "accident.notes[1]", true},
		{"{\"id\":\"1\",\"k\xff\":1}", `"k\xff"`, true},
		{"{\"id\":\"1\",\"a\":1\xff}", "a", true},
		{"{\"id\":\"1\",\"a\":[1, \xff]}", "a[1]", true},
	} {
		got, cause := badTextMember([]byte(tt.raw))
		if (cause != nil) != tt.bad {
			t.Errorf("badTextMember(%s) found %v, want bad text %v", tt.raw, cause, tt.bad)
		}
		if tt.bad && got != tt.field {
			t.Errorf("badTextMember(%s) = %q, want %q", tt.raw, got, tt.field)
		}
	}
}

// TestAcceptAnswerUnreadable: an accept that landed (201) with an answer
// that cannot be decoded is ErrUnreadable after one attempt: the accept
// is not sent again within the call.
func TestAcceptAnswerUnreadable(t *testing.T) {
	emu, srv := newEmulator(t, rewriteAnswers(func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/requests/")
	}, func(s int, _ http.Header, _ []byte) (int, []byte) { return s, []byte(`{"id": {"nested": true}}`) }))
	id := emu.AddRequests(emulator.SeedRequest{})[0]
	c := emuClient(t, srv, nil)
	_, err := c.Accept(context.Background(), id, "RO-5", time.Time{})
	if Class(err) != ClassUnreadable || !strings.Contains(err.Error(), "id: want a string or number, got an object") {
		t.Fatalf("err = %v (%s), want unreadable naming the id", err, Class(err))
	}
	if got := emu.Calls()[emulator.RouteAccept]; got != 1 {
		t.Errorf("the emulator saw %d accepts, want 1", got)
	}
	if r, _ := emu.State().Request(id); r.ReferenceID != "RO-5" {
		t.Errorf("the accept did not land: %+v", r)
	}
}

// TestBrokenEntryKeepsItsID: an entry with a syntax error before its id
// (a control character in a string, a bad literal, a leading zero) is
// skipped under its id, as sync needs to see the list whole; only
// brackets and strings must be valid to read it.
func TestBrokenEntryKeepsItsID(t *testing.T) {
	for _, tt := range []struct {
		entry, id, text string
		unlike          bool
	}{
		{"{\"notes\":\"a\x01b\",\"id\":\"r1\"}", "r1", "r1", false},
		{`{"x":tru,"id":"r1"}`, "r1", "r1", false},
		{`{"x":01,"id":"r1"}`, "r1", "r1", false},
		{`{"x":{"id":"no","y":[1,,2]},"id" : 42 }`, "42", "42", false},
		{`{"x":"\",\"id\":1","y":tru,"id":"r1"}`, "r1", "r1", false},
		{`{"x":tru,"y":"id","id":{"z":1}}`, "", "", true},
	} {
		body := "[" + tt.entry + `,{"id":"ok"}]`
		reqs, skipped, _, err := decodeRequestsFrom(strings.NewReader(body), 1<<20, 1<<20)
		if err != nil || len(reqs) != 1 || skipped == nil || len(skipped.Skipped) != 1 {
			t.Fatalf("%s: %d requests, skipped %v, err %v; want one of each", body, len(reqs), skipped, err)
		}
		if s := skipped.Skipped[0]; s.ID != tt.id || s.IDText != tt.text || s.Unlike != tt.unlike {
			t.Errorf("%s: skipped with ID %q, IDText %q, unlike %v; want %q, %q, %v",
				tt.entry, s.ID, s.IDText, s.Unlike, tt.id, tt.text, tt.unlike)
		}
	}
}

// TestDeepEntryWithMismatch: an entry too deep whose brackets mismatch past
// the depth limit names its deep member, where json stopped reading.
func TestDeepEntryWithMismatch(t *testing.T) {
	entry := `{"id":"D1","deep":` + strings.Repeat("[", 70) + "}" + strings.Repeat("]", 69) + "}"
	_, skipped, _, err := decodeRequestsFrom(strings.NewReader("["+entry+"]"), 1<<20, 1<<20)
	if err != nil || skipped == nil || len(skipped.Skipped) != 1 {
		t.Fatalf("skipped %v, err %v; want the entry skipped", skipped, err)
	}
	if s := skipped.Skipped[0]; s.Field != "deep" || !strings.Contains(s.Err.Error(), "levels deep") {
		t.Errorf("skipped as field %q: %v; want deep, too deep", s.Field, s.Err)
	}
}

// TestListExcerptEndsAtFailure: a list that is not a valid array shows
// the body up to where decoding failed, not as far as it was read ahead,
// and not marked cut when the failure comes early.
func TestListExcerptEndsAtFailure(t *testing.T) {
	body := `[{"id":"a","claimNumber":"c1"} {"id":"b"}]` + strings.Repeat(" ", 600)
	_, _, head, err := decodeRequestsFrom(strings.NewReader(body), 1<<20, 1<<20)
	if want := `[{"id":"a","claimNumber":"c1"} {`; err == nil || string(head) != want {
		t.Errorf("head %q, err %v; want %q and an error", head, err, want)
	}
	_, srv := newEmulator(t, rewriteAnswers(isList, func(int, http.Header, []byte) (int, []byte) {
		return http.StatusOK, []byte(body)
	}))
	_, err = emuClient(t, srv, nil).ListRequests(context.Background())
	if want := `200 OK (4 attempts): [{"id":"a","claimNumber":"c1"} {`; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("err %v, want it to end %q", err, want)
	}
}
