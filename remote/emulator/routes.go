package emulator

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Route names of the integration API, as used by Calls, Fault.Route and
// the admin API: the method, a space and the path template relative to
// APIPrefix. The eight status-change routes are listed by Routes.
const (
	RouteListRequests = "GET /requests"
	RouteAccept       = "POST /requests/{id}"
	RouteCreateQuote  = "POST /jobs/{id}/quotes"
	RouteUpdateQuote  = "PUT /jobs/{id}/quotes/{type}"
	// RouteToken is ModeDocumented's OAuth2 token endpoint (TokenPath), a
	// Fault.Route of its own: not an API route, and no fault of "*".
	RouteToken = "POST " + TokenPath
)

// StatusPaths returns the four path forms of the status change in the
// seed, each served with both PUT and POST.
func StatusPaths() []string {
	return []string{
		"/jobs/{jobId}/quote/{quoteId}/status",
		"/jobs/{jobId}/quotes/{quoteId}/status",
		"/jobs/{jobId}/quote/status/{status}",
		"/jobs/{jobId}/quotes/status/{status}",
	}
}

// handler serves one matched route: r.Pattern is the route's name and
// r.PathValue gives its unescaped path parameters.
type handler func(e *Emulator, w http.ResponseWriter, r *http.Request)

type route struct {
	method string
	segs   []string // "{name}" segments are parameters
	name   string
	handle handler
}

// routeTable builds the routing table of mode (each Emulator keeps one, so
// that the package has no mutable globals). Routes with a literal segment
// where another has a parameter come first.
func routeTable(mode string) []route {
	rs := []route{
		newRoute(http.MethodGet, "/requests", (*Emulator).listRequests),
		newRoute(http.MethodPost, "/requests/{id}", (*Emulator).accept),
		newRoute(http.MethodPost, "/jobs/{id}/quotes", (*Emulator).putQuote),
	}
	// {status} forms before {quoteId} forms: ".../quotes/status/Submitted"
	// is the status form, ".../quotes/Estimate/status" the quoteId form.
	sp := StatusPaths()
	for _, p := range []string{sp[2], sp[3], sp[0], sp[1]} {
		for _, m := range []string{http.MethodPut, http.MethodPost} {
			if mode != ModeDocumented || slices.Contains(documentedStatusRoutes, m+" "+p) {
				rs = append(rs, newRoute(m, p, (*Emulator).changeStatus))
			}
		}
	}
	return append(rs, newRoute(http.MethodPut, "/jobs/{id}/quotes/{type}", (*Emulator).putQuote))
}

func newRoute(method, tmpl string, h handler) route {
	return route{
		method: method,
		segs:   strings.Split(strings.TrimPrefix(tmpl, "/"), "/"),
		name:   method + " " + tmpl,
		handle: h,
	}
}

// Routes lists the route names of the integration API.
func Routes() []string {
	rs := routeTable(ModeSpec)
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.name
	}
	return names
}

// matchRoute finds the route of r's method and rel (the escaped path below
// APIPrefix) in table, and sets r's Pattern and path values to the
// route's. When the path exists with other methods only, it returns those
// methods in allowed. http.ServeMux was weighed: it refuses to register
// two of the seed's status forms side by side ("…/quotes/status/{status}"
// and "…/quotes/{quoteId}/status" conflict), which the emulator serves.
func matchRoute(table []route, r *http.Request, rel string) (rt *route, allowed []string) {
	segs := strings.Split(strings.TrimPrefix(rel, "/"), "/")
	for i, s := range segs {
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, nil
		}
		segs[i] = u
	}
	for i := range table {
		vals, ok := table[i].match(segs)
		switch {
		case !ok:
		case table[i].method == r.Method:
			r.Pattern = table[i].name
			for name, v := range vals {
				r.SetPathValue(name, v)
			}
			return &table[i], nil
		case !slices.Contains(allowed, table[i].method):
			allowed = append(allowed, table[i].method)
		}
	}
	return nil, allowed
}

// match matches unescaped path segments against the route's template.
func (rt route) match(segs []string) (map[string]string, bool) {
	if len(segs) != len(rt.segs) {
		return nil, false
	}
	p := make(map[string]string, 2)
	for i, t := range rt.segs {
		switch name, param := strings.CutPrefix(t, "{"); {
		case param && segs[i] != "":
			p[strings.TrimSuffix(name, "}")] = segs[i]
		case segs[i] != t: // a literal, or an empty parameter
			return nil, false
		}
	}
	return p, true
}
