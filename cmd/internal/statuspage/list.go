package statuspage

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// PhaseCount is how many requests are in one phase.
type PhaseCount struct {
	Phase string
	Words string
	N     int
}

// InsurerCount is what the requests of one insurer, or of all, count.
type InsurerCount struct {
	Name   string // the insurer; "" for every insurer's requests
	Total  int    // requests tracked
	Person int    // requests that need a person
	Held   int    // jobs held back
	// Supplements are the submitted quotes whose lines changed after.
	Supplements int
	Counts      []PhaseCount // every phase with requests, in the machine's order
	// Configured: the insurer is configured now; its requests stay shown
	// after it is not, until `quotesync insurers move` or `end`.
	Configured bool
}

// Shown is the count a filter link shows: Person when person, else Total.
func (c InsurerCount) Shown(person bool) int {
	if person {
		return c.Person
	}
	return c.Total
}

// List is one page of the list of requests.
type List struct {
	Requests   []Request
	Counts     []PhaseCount // every phase with requests (of Insurer, when set), in the machine's order
	Total      int          // requests tracked (of Insurer, when set)
	Person     int          // requests that need a person (of Insurer, when set)
	PersonOnly bool         // the list shows only those
	Page       int          // 1-based
	Pages      int          // at least 1
	Size       int          // requests per page
	NoTables   bool         // quotesync's tables do not exist yet

	// Insurer, when set, is the one insurer whose requests are listed
	// and counted.
	Insurer string
	// Named: several insurers are configured or tracked (NameInsurers);
	// every request names its insurer, and Insurers lists them.
	Named bool
	// All counts every insurer's requests.
	All InsurerCount
	// Insurers are the insurers configured or tracked when Named: the
	// configured ones in their order, then the others by name.
	Insurers []InsurerCount
}

// Filter says which page of the list LoadFiltered reads.
type Filter struct {
	PersonOnly bool   // only the requests that need a person
	Insurer    string // only that insurer's requests; "": every insurer's
	Page       int    // 1-based
	Size       int    // requests per page; <= 0: DefaultPageSize
	// Configured are the configured insurers' names, in order: they
	// decide whether the requests name their insurer (NameInsurers).
	Configured []string
}

// LoadFiltered reads the page of the requests f says, newest first, with
// the count of each phase, of each insurer and of all: three statements.
func LoadFiltered(ctx context.Context, db *store.Store, f Filter) (List, error) {
	size := cmp.Or(max(f.Size, 0), DefaultPageSize)
	page := max(f.Page, 1)
	l := List{PersonOnly: f.PersonOnly, Insurer: f.Insurer, Page: page, Size: size, Pages: 1}
	counts, err := db.PhaseCounts(ctx)
	if err != nil {
		return List{}, err
	}
	l.All = CountOf(counts, "", true)
	scope := l.All
	if f.Insurer != "" {
		scope = CountOf(counts, f.Insurer, false)
	}
	l.Total, l.Person, l.Counts = scope.Total, scope.Person, scope.Counts
	names := insurerNames(f.Configured, counts)
	if l.Named = NameInsurers(f.Configured, names...); l.Named {
		for _, n := range names {
			c := CountOf(counts, n, false)
			c.Configured = slices.Contains(f.Configured, n)
			l.Insurers = append(l.Insurers, c)
		}
	}
	l.Pages = max(1, (scope.Shown(f.PersonOnly)+size-1)/size)
	q := store.PageQuery{Offset: (page - 1) * size, Limit: size, Insurer: f.Insurer}
	if f.PersonOnly {
		q.Quiet = qsync.QuietReasons()
	}
	rows, err := db.RequestsPage(ctx, q)
	if errors.Is(err, store.ErrNoStateTables) {
		l.NoTables = true
		return l, nil
	}
	if err != nil {
		return List{}, err
	}
	keys := make([]store.RequestKey, len(rows))
	for i, r := range rows {
		keys[i] = r.Key()
	}
	last, err := db.LatestEvents(ctx, keys)
	if err != nil {
		return List{}, err
	}
	for _, r := range rows {
		req := RequestOf(r, l.Named)
		if ev, ok := last[r.Key()]; ok {
			s := stepOf(ev)
			req.Last = &s
		}
		l.Requests = append(l.Requests, req)
	}
	return l, nil
}

// CountOf sums the counts (store.Store.PhaseCounts) of insurer, or of
// every insurer when all.
func CountOf(counts []store.PhaseCount, insurer string, all bool) InsurerCount {
	c := InsurerCount{Name: insurer}
	byPhase := map[store.Phase]int{}
	for _, pc := range counts {
		if !all && pc.Insurer != insurer {
			continue
		}
		byPhase[pc.Phase] += pc.N
		c.Total += pc.N
		c.Supplements += pc.Supplements
		if qsync.Reason(pc.Reason).Hold {
			c.Held += pc.N
		}
		if pc.Reason != qsync.ReasonNone && qsync.Reason(pc.Reason).Person {
			c.Person += pc.N
		} else {
			c.Person += pc.Supplements
		}
	}
	for _, p := range qsync.Phases() {
		if n := byPhase[p.Phase]; n > 0 {
			c.Counts = append(c.Counts, PhaseCount{Phase: string(p.Phase), Words: p.Words, N: n})
			delete(byPhase, p.Phase)
		}
	}
	for _, ph := range slices.Sorted(maps.Keys(byPhase)) { // phases this quotesync does not know
		c.Counts = append(c.Counts, PhaseCount{Phase: string(ph), Words: "unknown phase", N: byPhase[ph]})
	}
	return c
}

// insurerNames are the configured insurers, in order, then the others
// that have requests, by name (not "": the rows written before insurers
// had names, which the first start gives to an insurer).
func insurerNames(configured []string, counts []store.PhaseCount) []string {
	out := slices.Clone(configured)
	var others []string
	for _, c := range counts {
		if c.Insurer != "" && !slices.Contains(out, c.Insurer) && !slices.Contains(others, c.Insurer) {
			others = append(others, c.Insurer)
		}
	}
	slices.Sort(others)
	return append(out, others...)
}
