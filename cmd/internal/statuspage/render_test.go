package statuspage

import (
	"flag"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.html from the renderer")

// tricky holds what escaping must get right: markup, both quotes, an
// ampersand, a plus (escaped as html/template escapes it), NUL, a line
// feed, text that is not UTF-8, and characters that are.
const tricky = "<b>Tom & \"Jerry's\"</b> +1\x00 a\nb \xff é 日本"

// renderViews are the pages the golden files hold, by name: every branch
// of every page, with tricky text in every field that shows text.
func renderViews(h *Handler) map[string]struct {
	tmpl string
	code int
	v    view
} {
	now := h.o.Now()
	ago, ahead := now.Add(-90*time.Minute), now.Add(26*time.Hour)
	step := Step{At: ago.Add(-3 * time.Second), Kind: "drafted" + tricky, What: "pushed a Draft " + tricky,
		Words: "words " + tricky, Details: "details " + tricky, Route: "POST /jobs/{id}/quotes" + tricky, Status: 201}
	plain := Step{At: ago, Kind: "accepted", What: "accepted"}
	reqs := []Request{
		{ID: "r-1 " + tricky, Claim: "CLM " + tricky, Job: "RO-1" + tricky, Phase: "drafted" + tricky,
			PhaseWords: "pw " + tricky, ReasonWords: "rw " + tricky, Fix: "fix " + tricky, Details: "det " + tricky,
			Held: true, NeedsPerson: true, Created: ago, Last: &step},
		{ID: "javascript:alert(1)", Phase: "accepted", PhaseWords: "accepted", Created: ahead, ReleasedJob: "RO-9"},
		{ID: "r/3?x=1&y=2#f", Claim: "C3", Phase: "held", ReasonWords: "held words", Held: true, Created: ago,
			Details: "not shown: no person needed", Last: &plain},
		{ID: "r-4", Claim: "C4", Job: "RO-4", Phase: "rejected", ReasonWords: "refused", NeedsPerson: true,
			Fix: "", Details: "", Created: ago},
	}
	story := Story{Request: Request{ID: "r-s " + tricky, Claim: "", Job: "RO-5 " + tricky, Phase: "submitted" + tricky,
		PhaseWords: "sw " + tricky, WayOut: "way " + tricky, ReasonWords: "rw " + tricky, Fix: "fix " + tricky,
		Details: "det " + tricky, Held: true, NeedsPerson: true, Expiry: ahead, Created: ago, Updated: now,
		PushedHash: "sha-" + tricky + "0123456789abcdef", NextAttempt: ahead},
		Steps: []Step{plain, step}, Cut: true}
	bare := Story{Request: Request{ID: "r-b", Phase: "waiting", PhaseWords: "waiting", Created: ago, Updated: ago,
		ReleasedJob: "RO-6 " + tricky}}
	none := Story{Request: Request{ID: "r-n", Phase: "waiting", Created: ago, Updated: ago}}

	type page = struct {
		tmpl string
		code int
		v    view
	}
	out := map[string]page{}
	add := func(name, tmpl string, code int, title string, set func(*view)) {
		v := h.view(nil, title)
		set(&v)
		out[name] = page{tmpl, code, v}
	}
	add("list", "list", 200, "Quote requests "+tricky, func(v *view) {
		v.List = List{Requests: reqs, Total: 1234, Person: 7, Page: 2, Pages: 3, Size: 50,
			Counts: []PhaseCount{{Phase: "accepted" + tricky, Words: "w " + tricky, N: 3}, {Phase: "held", Words: "held", N: 1}}}
	})
	add("list-person-last", "list", 200, "Needs a person", func(v *view) {
		v.List = List{Requests: reqs[3:], Total: 60, Person: 60, PersonOnly: true, Page: 2, Pages: 2, Size: 50}
	})
	add("list-person-empty", "list", 200, "Needs a person", func(v *view) {
		v.List = List{Total: 3, PersonOnly: true, Page: 1, Pages: 1, Size: 50}
		v.Health = nil
	})
	add("list-empty", "list", 200, "Quote requests", func(v *view) {
		v.List = List{Page: 1, Pages: 1, Size: 50}
		v.Health = &health{OK: false, Words: "the database does not answer " + tricky}
	})
	add("list-past-end", "list", 200, "Quote requests", func(v *view) {
		v.List = List{Total: 3, Page: 4, Pages: 1, Size: 50, PersonOnly: false}
		v.Health = &health{OK: true, Words: "ok", LastSuccess: ahead}
	})
	add("list-user", "list", 200, "Quote requests", func(v *view) {
		v.List = List{Page: 1, Pages: 1, Size: 50}
		v.User = "alice " + tricky // logged in: a logout button
	})
	add("list-no-tables", "list", 200, "Quote requests", func(v *view) {
		v.List = List{NoTables: true, Page: 1, Pages: 1}
	})
	add("request", "request", 200, "Request "+story.ID, func(v *view) { v.Story = story })
	add("request-bare", "request", 200, "Request r-b", func(v *view) { v.Story = bare })
	add("request-none", "request", 200, "Request r-n", func(v *view) { v.Story = none })
	add("find", "find", 200, "Find "+tricky, func(v *view) {
		v.Query = tricky
		v.Found = []Story{story, bare}
	})
	add("find-none", "find", 200, "Find x", func(v *view) { v.Query = "x" })

	// Two insurers: request 7301 at both; a third, no longer configured,
	// with a name from the database.
	aa := Request{Insurer: "aa", Named: true, ID: "7301", Claim: "CLM-A", Job: "RO-1", Phase: "drafted", PhaseWords: "drafted",
		Created: ago, Last: &plain}
	bb := Request{Insurer: "bb", Named: true, ID: "7301", Claim: "CLM-B", Job: "RO-2", Phase: "rejected", PhaseWords: "refused",
		ReasonWords: "refused", Fix: "fix it, then `quotesync retry --insurer bb 7301`", NeedsPerson: true, Created: ago}
	odd := Request{Insurer: "cc" + tricky, Named: true, ID: "9/9 " + tricky, Phase: "accepted", PhaseWords: "accepted", Created: ago}
	counts := []InsurerCount{
		{Name: "aa", Total: 1, Counts: []PhaseCount{{Phase: "drafted", Words: "w", N: 1}}, Configured: true},
		{Name: "bb", Total: 1, Person: 1, Counts: []PhaseCount{{Phase: "rejected", Words: "w", N: 1}}, Configured: true},
		{Name: "cc" + tricky, Total: 1, Counts: []PhaseCount{{Phase: "accepted", Words: "w", N: 1}}},
	}
	phases := []PhaseCount{{Phase: "accepted", Words: "w", N: 1}, {Phase: "drafted", Words: "w", N: 1}, {Phase: "rejected", Words: "w", N: 1}}
	add("list-insurers", "list", 200, "Quote requests", func(v *view) {
		v.List = List{Requests: []Request{aa, bb, odd}, Total: 3, Person: 1, Page: 1, Pages: 1, Size: 50, Named: true,
			Counts: phases, All: InsurerCount{Total: 3, Person: 1}, Insurers: counts}
	})
	add("list-insurer-bb", "list", 200, "Needs a person · bb", func(v *view) {
		v.List = List{Requests: []Request{bb}, Total: 120, Person: 101, PersonOnly: true, Page: 2, Pages: 3, Size: 50, Named: true,
			Insurer: "bb", Counts: []PhaseCount{{Phase: "rejected", Words: "w", N: 120}},
			All: InsurerCount{Total: 123, Person: 102}, Insurers: counts}
	})
	add("request-insurer", "request", 200, "Request 7301 · bb", func(v *view) {
		v.Story = Story{Request: bb, Steps: []Step{plain}, Cut: true}
	})
	add("find-insurers", "find", 200, "Request 7301", func(v *view) {
		v.Query, v.Found = "7301", []Story{{Request: aa}, {Request: bb}, {Request: odd}}
		v.Message = "Several insurers' services sent a request 7301: choose one."
	})
	add("error", "error", 404, "Not found "+tricky, func(v *view) { v.Message = "message " + tricky })
	return out
}

// TestRenderGolden renders every page and compares it with its golden
// file (go test -run TestRenderGolden -update rewrites them).
func TestRenderGolden(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	zone := time.FixedZone("AEST", 10*60*60)
	h := New(Options{Now: func() time.Time { return now }, Location: zone, Version: "v1.2.3 " + tricky,
		Health: func() (bool, string, time.Time) { return true, "works " + tricky, now.Add(-time.Minute) }})
	for name, p := range renderViews(h) {
		rec := httptest.NewRecorder()
		h.renderCode(rec, p.code, p.tmpl, p.v)
		if rec.Code != p.code {
			t.Errorf("%s: status %d, want %d", name, rec.Code, p.code)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", name, ct)
		}
		path := filepath.Join("testdata", name+".html")
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, rec.Body.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := rec.Body.String(); got != string(want) {
			gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
			for i := range max(len(gl), len(wl)) {
				var g, w string
				if i < len(gl) {
					g = gl[i]
				}
				if i < len(wl) {
					w = wl[i]
				}
				if g != w {
					t.Errorf("%s: line %d:\n got %q\nwant %q", name, i+1, g, w)
					break
				}
			}
		}
	}
}
