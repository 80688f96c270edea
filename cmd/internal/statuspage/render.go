package statuspage

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"time"
)

// The pages are html/template templates, so every value is escaped for
// the context it lands in (text, attribute, URL) without a call site
// having to remember. a-h/templ was weighed: it escapes as well and
// keeps the binary smaller (no run-time method lookup), but it adds a
// code generator to the build and generated files to review, and a
// reviewer trusts the standard library's escaper more than a newer one.

//go:embed templates
var templates embed.FS

// pageNames are the pages a template set is parsed for, each with the
// layout around its "content".
var pageNames = []string{"list", "request", "find", "error"}

// parse returns the pages' templates, by name, with h's functions.
func (h *Handler) parse() map[string]*template.Template {
	funcs := template.FuncMap{
		"when":    h.when,
		"clock":   func(t time.Time) string { return t.In(h.o.Location).Format("15:04:05 MST") },
		"iso":     func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"short":   short,
		"add":     func(a, b int) int { return a + b },
		"sub":     func(a, b int) int { return a - b },
		"pageURL": pageURL,
	}
	out := make(map[string]*template.Template, len(pageNames))
	for _, name := range pageNames {
		// Must: the templates are embedded, and TestRenderGolden parses them.
		out[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templates,
			"templates/layout.html", "templates/"+name+".html"))
	}
	return out
}

func (h *Handler) render(w http.ResponseWriter, name string, v view) {
	h.renderCode(w, http.StatusOK, name, v)
}

// renderCode answers with code and the page name shows for v. The page
// is written to a buffer first, so a template error answers 500 instead
// of half a page.
func (h *Handler) renderCode(w http.ResponseWriter, code int, name string, v view) {
	var buf bytes.Buffer
	if err := h.tmpl[name].ExecuteTemplate(&buf, "layout", v); err != nil {
		http.Error(w, "render the status page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}
