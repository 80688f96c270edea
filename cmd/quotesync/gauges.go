package main

import (
	"context"
	gosync "sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quotesync/quotesync/shopdb"
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
	mu gosync.Mutex
	db *shopdb.DB

	phases, held, person, supplements *prometheus.Desc
	scrapeErrors                      prometheus.Counter
}

func newPhaseGauges() *phaseGauges {
	return &phaseGauges{
		phases: prometheus.NewDesc(metricsNamespace+"_requests", "Tracked requests by phase, from quotesync's state.",
			[]string{"phase"}, nil),
		held: prometheus.NewDesc(metricsNamespace+"_requests_held", "Jobs held back (invalid shop data, or a mapping that does not allow the push).",
			nil, nil),
		person: prometheus.NewDesc(metricsNamespace+"_requests_needing_person", "Requests that need a person (rejected, taken elsewhere, accept outcome unknown, held, supplement needed, …).",
			nil, nil),
		supplements: prometheus.NewDesc(metricsNamespace+"_requests_supplement_needed", "Submitted quotes whose lines changed after submission.",
			nil, nil),
		scrapeErrors: prometheus.NewCounter(prometheus.CounterOpts{Namespace: metricsNamespace, Name: "state_scrape_errors_total",
			Help: "Scrapes whose count of the state failed (the database did not answer in time)."}),
	}
}

// use makes the gauges count on db (nil: none).
func (g *phaseGauges) use(db *shopdb.DB) {
	g.mu.Lock()
	g.db = db
	g.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (g *phaseGauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- g.phases
	ch <- g.held
	ch <- g.person
	ch <- g.supplements
	g.scrapeErrors.Describe(ch)
}

// Collect implements prometheus.Collector.
func (g *phaseGauges) Collect(ch chan<- prometheus.Metric) {
	defer g.scrapeErrors.Collect(ch)
	g.mu.Lock()
	db := g.db
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
	byPhase := map[shopdb.Phase]int{}
	var held, person, supplements int
	for _, c := range counts {
		byPhase[c.Phase] += c.N
		supplements += c.Supplements
		ri := qsync.Reason(c.Reason)
		if ri.Hold {
			held += c.N
		}
		if c.Reason != qsync.ReasonNone && ri.Person {
			person += c.N
		} else if c.Supplements > 0 {
			person += c.Supplements
		}
	}
	for _, p := range qsync.Phases() {
		ch <- prometheus.MustNewConstMetric(g.phases, prometheus.GaugeValue, float64(byPhase[p.Phase]), string(p.Phase))
	}
	ch <- prometheus.MustNewConstMetric(g.held, prometheus.GaugeValue, float64(held))
	ch <- prometheus.MustNewConstMetric(g.person, prometheus.GaugeValue, float64(person))
	ch <- prometheus.MustNewConstMetric(g.supplements, prometheus.GaugeValue, float64(supplements))
}
