package statuspage

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The pages are written by the functions below, not by html/template:
// text/template, under it, looks methods up by name at run time, and a
// binary that can do that keeps every exported method of every type it
// holds; html/template made quotesync's binary 2.5 MB larger, and nearly
// all of a binary's pages end up resident in the daemon. The page is the
// one html/template wrote (testdata/*.html, TestRenderGolden), escaped
// the same way: text and quoted attribute values as html/template's
// htmlEscaper escapes them (page.text), URLs in href as its URL filter
// and normaliser then its attribute escaper do (page.url).

// page is a page being written.
type page struct {
	strings.Builder
	h *Handler
}

// raw writes markup as it is.
func (p *page) raw(s string) { p.WriteString(s) }

// text writes s escaped for HTML text, a quoted attribute value or a
// title: & < > " ' + as entities, NUL as U+FFFD, the rest as it is.
func (p *page) text(s string) {
	written := 0
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		var repl string
		switch r {
		case 0:
			repl = "\uFFFD"
		case '"':
			repl = "&#34;"
		case '&':
			repl = "&amp;"
		case '\'':
			repl = "&#39;"
		case '+':
			repl = "&#43;"
		case '<':
			repl = "&lt;"
		case '>':
			repl = "&gt;"
		}
		if repl != "" {
			p.WriteString(s[written:i])
			p.WriteString(repl)
			written = i + w
		}
		i += w
	}
	p.WriteString(s[written:])
}

// int writes n.
func (p *page) int(n int) { p.WriteString(strconv.Itoa(n)) }

// url writes s as the value of an href: "#ZgotmplZ" when it has a scheme
// other than http, https or mailto; every byte that is neither
// unreserved nor reserved in a URL (RFC 3986) nor '%' percent-encoded;
// then escaped as an attribute value.
func (p *page) url(s string) {
	if scheme, _, ok := strings.Cut(s, ":"); ok && !strings.Contains(scheme, "/") &&
		!strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") && !strings.EqualFold(scheme, "mailto") {
		p.WriteString("#ZgotmplZ")
		return
	}
	var b strings.Builder
	written := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case strings.IndexByte("!#$&*+,/:;=?@[]-._~%", c) >= 0,
			'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			continue
		default:
			b.WriteString(s[written:i])
			fmt.Fprintf(&b, "%%%02x", c)
			written = i + 1
		}
	}
	b.WriteString(s[written:])
	p.text(b.String())
}

// when writes h.when(t), escaped.
func (p *page) when(t time.Time) { p.text(p.h.when(t)) }

// div writes <div class="class">, prefix, s as text and </div>, when s is
// not empty.
func (p *page) div(class, prefix, s string) {
	if s == "" {
		return
	}
	p.raw("<div class=\"" + class + "\">" + prefix)
	p.text(s)
	p.raw("</div>")
}

// reason writes a request's reason (words, "Held: " first when held),
// then its details and its fix, when it has a reason.
func (p *page) reason(held bool, words, details, fix string) {
	if words == "" {
		return
	}
	p.raw("<div class=\"reason\">")
	if held {
		p.raw("Held: ")
	}
	p.text(words)
	p.raw("</div>\n")
	p.div("details", "", details)
	p.raw("\n")
	p.div("fix", "What to do: ", fix)
}

// or returns s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// requestURL is the address of one request's page.
func requestURL(id string) string { return "/status/requests/" + url.PathEscape(id) }

// layout writes the frame of every page around content.
func (p *page) layout(v view, content func(*page, view)) {
	p.raw("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta http-equiv=\"refresh\" content=\"")
	p.int(v.RefreshSeconds)
	p.raw("\">\n<meta name=\"robots\" content=\"noindex\">\n<title>")
	p.text(v.Title)
	p.raw(" · quotesync</title>\n<style>")
	p.raw(v.CSS) // our own style sheet, trusted
	p.raw("</style>\n</head>\n<body>\n<header>\n<a class=\"brand\" href=\"/status\">quotesync</a>\n<span class=\"updated\">as of ")
	p.text(v.Now.In(p.h.o.Location).Format("15:04:05 MST"))
	p.raw(" · refreshes every ")
	p.int(v.RefreshSeconds)
	p.raw(" s</span>\n</header>\n")
	if hl := v.Health; hl != nil {
		p.raw("<p class=\"health")
		if !hl.OK {
			p.raw(" bad")
		}
		p.raw("\" role=\"status\">")
		if hl.OK {
			p.raw("quotesync works: ")
		} else {
			p.raw("quotesync needs attention: ")
		}
		p.text(hl.Words)
		if !hl.LastSuccess.IsZero() {
			p.raw(" · last successful pass ")
			p.when(hl.LastSuccess)
		}
		p.raw("</p>")
	}
	p.raw("\n<main>\n")
	content(p, v)
	p.raw("\n</main>\n<footer>quotesync ")
	p.text(v.Version)
	p.raw(" · read-only: nothing here changes a request; <code>quotesync retry</code> does.</footer>\n</body>\n</html>\n")
}

// card writes one request of a list.
func (p *page) card(r Request) {
	p.raw("<li class=\"card")
	if r.NeedsPerson {
		p.raw(" person")
	}
	if r.Held {
		p.raw(" held")
	}
	p.raw("\" id=\"request-")
	p.text(r.ID)
	p.raw("\" data-phase=\"")
	p.text(r.Phase)
	p.raw("\">\n<div class=\"top\"><a class=\"id\" href=\"")
	p.url(requestURL(r.ID))
	p.raw("\">Request ")
	p.text(r.ID)
	p.raw("</a>\n<span class=\"phase phase-")
	p.text(r.Phase)
	p.raw("\">")
	p.text(r.Phase)
	p.raw("</span>\n")
	if r.Held {
		p.raw("<span class=\"flag held\">held</span>")
	}
	p.raw("\n")
	if r.NeedsPerson {
		p.raw("<span class=\"flag\">needs a person</span>")
	}
	p.raw("</div>\n<div class=\"meta\">claim ")
	p.text(or(r.Claim, "-"))
	p.raw(" · job ")
	p.text(or(r.JobShown(), "none yet"))
	p.raw(" · first seen ")
	p.when(r.Created)
	p.raw("</div>\n<div class=\"words\">")
	p.text(r.PhaseWords)
	p.raw("</div>\n")
	details := ""
	if r.NeedsPerson {
		details = r.Details
	}
	p.reason(r.Held, r.ReasonWords, details, r.Fix)
	p.raw("\n")
	if s := r.Last; s != nil {
		p.raw("<div class=\"last\">Last: ")
		p.text(s.What)
		p.raw(" · ")
		p.when(s.At)
		p.raw("</div>")
	}
	p.raw("\n</li>")
}

// listContent writes the list of requests.
func listContent(p *page, v view) {
	l := v.List
	p.raw("\n<h1>Quote requests</h1>\n")
	if l.NoTables {
		p.raw("<p>quotesync's state tables do not exist yet: nothing is tracked. The daemon's first start creates them.</p>\n")
		return
	}
	p.raw("\n<p class=\"muted\">")
	p.int(l.Total)
	p.raw(" tracked · ")
	p.int(l.Person)
	p.raw(" need a person</p>\n")
	if len(l.Counts) > 0 {
		p.raw("<ul class=\"counts\" aria-label=\"requests by phase\">")
		for _, c := range l.Counts {
			p.raw("<li title=\"")
			p.text(c.Words)
			p.raw("\"><span class=\"phase phase-")
			p.text(c.Phase)
			p.raw("\">")
			p.text(c.Phase)
			p.raw("</span> ")
			p.int(c.N)
			p.raw("</li>")
		}
		p.raw("</ul>")
	}
	p.raw("\n<nav class=\"filter\" aria-label=\"filter\">\n<a href=\"/status\"")
	if !l.PersonOnly {
		p.raw(" aria-current=\"page\"")
	}
	p.raw(">All (")
	p.int(l.Total)
	p.raw(")</a>\n<a href=\"/status?need=person\"")
	if l.PersonOnly {
		p.raw(" aria-current=\"page\"")
	}
	p.raw(">Needs a person (")
	p.int(l.Person)
	p.raw(")</a>\n</nav>\n<form class=\"find\" action=\"/status/find\" method=\"get\" role=\"search\">\n" +
		"<input name=\"q\" type=\"search\" placeholder=\"request id or job number\" aria-label=\"request id or job number\">\n" +
		"<button type=\"submit\">Find</button>\n</form>\n")
	switch {
	case len(l.Requests) > 0:
		p.raw("<ul class=\"requests\">\n")
		for _, r := range l.Requests {
			p.card(r)
			p.raw("\n")
		}
		p.raw("</ul>\n")
	case l.PersonOnly:
		p.raw("<p>Nothing needs a person.</p>\n")
	case l.Page == 1:
		p.raw("<p>No requests tracked yet.</p>\n")
	default:
		p.raw("<p>No requests on this page.</p>")
	}
	p.raw("\n<div class=\"pages\">\n")
	if l.Page > 1 {
		p.raw("<a href=\"")
		p.url(pageURL(l.PersonOnly, l.Page-1))
		p.raw("\" rel=\"prev\">← newer</a>")
	}
	p.raw("\n<span class=\"muted\">page ")
	p.int(l.Page)
	p.raw(" of ")
	p.int(l.Pages)
	p.raw(", newest first, ")
	p.int(l.Size)
	p.raw(" to a page</span>\n")
	if l.Page < l.Pages {
		p.raw("<a href=\"")
		p.url(pageURL(l.PersonOnly, l.Page+1))
		p.raw("\" rel=\"next\">older →</a>")
	}
	p.raw("\n</div>\n\n")
}

// requestContent writes one request and its timeline.
func requestContent(p *page, v view) {
	s := v.Story
	p.raw("\n\n<p><a href=\"/status\">← all requests</a></p>\n<h1>Request ")
	p.text(s.ID)
	p.raw(" <span class=\"phase phase-")
	p.text(s.Phase)
	p.raw("\">")
	p.text(s.Phase)
	p.raw("</span></h1>\n<div class=\"card")
	if s.NeedsPerson {
		p.raw(" person")
	}
	if s.Held {
		p.raw(" held")
	}
	p.raw("\">\n<dl class=\"facts\">\n<dt>Claim</dt><dd>")
	p.text(or(s.Claim, "-"))
	p.raw("</dd>\n<dt>Job</dt><dd>")
	switch {
	case s.Job != "":
		p.text(s.Job)
		p.raw(" (the referenceId quotesync accepts with)")
	case s.ReleasedJob != "":
		p.raw("none; it gave up job ")
		p.text(s.ReleasedJob)
	default:
		p.raw("none yet")
	}
	p.raw("</dd>\n<dt>Phase</dt><dd>")
	p.text(s.Phase)
	p.raw(": ")
	p.text(s.PhaseWords)
	p.raw("</dd>\n")
	if s.WayOut != "" {
		p.raw("<dt>Next</dt><dd>")
		p.text(s.WayOut)
		p.raw("</dd>")
	}
	p.raw("\n")
	if !s.Expiry.IsZero() {
		p.raw("<dt>Expires</dt><dd>")
		p.when(s.Expiry)
		p.raw("</dd>")
	}
	p.raw("\n<dt>First seen</dt><dd>")
	p.when(s.Created)
	p.raw("</dd>\n<dt>Last change</dt><dd>")
	p.when(s.Updated)
	p.raw("</dd>\n")
	if s.PushedHash != "" {
		p.raw("<dt>Remote holds</dt><dd>the Draft with hash <code title=\"")
		p.text(s.PushedHash)
		p.raw("\">")
		p.text(short(s.PushedHash))
		p.raw("</code></dd>")
	}
	p.raw("\n")
	if !s.NextAttempt.IsZero() {
		p.raw("<dt>Next attempt</dt><dd>")
		p.when(s.NextAttempt)
		p.raw("</dd>")
	}
	p.raw("\n</dl>\n")
	p.reason(s.Held, s.ReasonWords, s.Details, s.Fix)
	p.raw("\n</div>\n<h2>Timeline</h2>\n")
	if s.Cut {
		p.raw("<p class=\"muted\">Only the newest events are shown; <code>quotesync history --limit 0 ")
		p.text(s.ID)
		p.raw("</code> prints all.</p>")
	}
	p.raw("\n<ol class=\"timeline\">\n")
	for _, st := range s.Steps {
		p.raw("<li data-kind=\"")
		p.text(st.Kind)
		p.raw("\"><time datetime=\"")
		p.text(st.At.UTC().Format(time.RFC3339))
		p.raw("\">")
		p.when(st.At)
		p.raw("</time>\n<span class=\"what\">")
		p.text(st.What)
		p.raw("</span>\n")
		p.div("reason", "", st.Words)
		p.raw("\n")
		p.div("details", "", st.Details)
		p.raw("\n")
		if st.Route != "" {
			p.raw("<div class=\"call\">")
			p.text(st.Route)
			if st.Status != 0 {
				p.raw(" → ")
				p.int(st.Status)
			}
			p.raw("</div>")
		}
		p.raw("\n</li>\n")
	}
	if len(s.Steps) == 0 {
		p.raw("<li>No events recorded.</li>\n")
	}
	p.raw("</ol>\n\n")
}

// findContent writes what a find found.
func findContent(p *page, v view) {
	p.raw("\n<p><a href=\"/status\">← all requests</a></p>\n<h1>Find “")
	p.text(v.Query)
	p.raw("”</h1>\n<form class=\"find\" action=\"/status/find\" method=\"get\" role=\"search\">\n<input name=\"q\" type=\"search\" value=\"")
	p.text(v.Query)
	p.raw("\" placeholder=\"request id or job number\" aria-label=\"request id or job number\">\n" +
		"<button type=\"submit\">Find</button>\n</form>\n")
	if len(v.Found) > 0 {
		p.raw("<ul class=\"requests\">\n")
		for _, st := range v.Found {
			p.card(st.Request)
			p.raw("\n")
		}
		p.raw("</ul>\n")
	} else {
		p.raw("<p>No tracked request has the id or the job number “")
		p.text(v.Query)
		p.raw("”.</p>")
	}
	p.raw("\n")
}

// errorContent writes an error page's title and message.
func errorContent(p *page, v view) {
	p.raw("\n<p><a href=\"/status\">← all requests</a></p>\n<h1>")
	p.text(v.Title)
	p.raw("</h1>\n<p>")
	p.text(v.Message)
	p.raw("</p>\n")
}

// contents are the pages' contents by name.
var contents = map[string]func(*page, view){
	"list": listContent, "request": requestContent, "find": findContent, "error": errorContent,
}
