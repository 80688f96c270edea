package main

import (
	"context"
	"slices"
	gosync "sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quotesync/quotesync/cmd/internal/statuspage"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// gaugeTimeout bounds the count query of one scrape.
const gaugeTimeout = 5 * time.Second

// phaseGauges exports, at every scrape, how many requests quotesync's
// state holds in each phase, how many are held, need a person, or need a
// supplement: counted from the state tables (one GROUP BY), so that an
// alert such as "held > 0 for an hour" sees what `quotesync status` sees.
// It counts on the database the daemon uses now (a reload swaps it).
type phaseGauges struct {
	mu       gosync.Mutex
	db       *store.Store
	insurers []string // configured: exported at 0 when they have no row

	phases, held, person, supplements *prometheus.Desc
	scrapeErrors                      prometheus.Counter
}

func newPhaseGauges() *phaseGauges {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(metricsNamespace+name, help, labels, nil)
	}
	return &phaseGauges{
		phases: desc("_requests", "Tracked requests by phase, from quotesync's state.", labelInsurer, "phase"),
		held:   desc("_requests_held", "Jobs held back (invalid shop data, or a mapping that does not allow the push).", labelInsurer),
		person: desc("_requests_needing_person",
			"Requests that need a person (rejected, taken elsewhere, accept outcome unknown, held, supplement needed, …).", labelInsurer),
		supplements: desc("_requests_supplement_needed", "Submitted quotes whose lines changed after submission.", labelInsurer),
		scrapeErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: metricsNamespace + "_state_scrape_errors_total",
			Help: "Scrapes whose count of the state failed (the database did not answer in time)."}),
	}
}

// use makes the gauges count on db (nil: none), each configured insurer
// of insurers exported even without a row.
func (g *phaseGauges) use(db *store.Store, insurers []string) {
	g.mu.Lock()
	g.db, g.insurers = db, insurers
	g.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (g *phaseGauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{g.phases, g.held, g.person, g.supplements, g.scrapeErrors.Desc()} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (g *phaseGauges) Collect(ch chan<- prometheus.Metric) {
	defer func() { ch <- g.scrapeErrors }()
	g.mu.Lock()
	db, insurers := g.db, g.insurers
	g.mu.Unlock()
	if db == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), gaugeTimeout)
	defer cancel()
	counts, err := db.PhaseCounts(ctx)
	if err != nil {
		g.scrapeErrors.Inc()
		return
	}
	names := slices.Clone(insurers)
	for _, c := range counts {
		if !slices.Contains(names, c.Insurer) {
			names = append(names, c.Insurer)
		}
	}
	gauge := func(d *prometheus.Desc, v int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	for _, ins := range names {
		t := statuspage.CountOf(counts, ins, false)
		byPhase := map[string]int{}
		for _, pc := range t.Counts {
			byPhase[pc.Phase] = pc.N
		}
		for _, p := range qsync.Phases() {
			gauge(g.phases, byPhase[string(p.Phase)], ins, string(p.Phase))
		}
		gauge(g.held, t.Held, ins)
		gauge(g.person, t.Person, ins)
		gauge(g.supplements, t.Supplements, ins)
	}
}
