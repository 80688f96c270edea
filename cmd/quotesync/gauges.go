package main

import (
	"context"
	gosync "sync"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/prom"
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

	scrapeErrors *prom.Counter
}

// Names and help of the gauges.
const (
	phasesName       = metricsNamespace + "_requests"
	phasesHelp       = "Tracked requests by phase, from quotesync's state."
	heldName         = metricsNamespace + "_requests_held"
	heldHelp         = "Jobs held back (invalid shop data, or a mapping that does not allow the push)."
	personName       = metricsNamespace + "_requests_needing_person"
	personHelp       = "Requests that need a person (rejected, taken elsewhere, accept outcome unknown, held, supplement needed, …)."
	supplementsName  = metricsNamespace + "_requests_supplement_needed"
	supplementsHelp  = "Submitted quotes whose lines changed after submission."
	scrapeErrorsName = metricsNamespace + "_state_scrape_errors_total"
	scrapeErrorsHelp = "Scrapes whose count of the state failed (the database did not answer in time)."
)

func newPhaseGauges() *phaseGauges {
	return &phaseGauges{scrapeErrors: prom.NewCounter(scrapeErrorsName, scrapeErrorsHelp)}
}

// use makes the gauges count on db (nil: none).
func (g *phaseGauges) use(db *shopdb.DB) {
	g.mu.Lock()
	g.db = db
	g.mu.Unlock()
}

// Collect implements prom.Collector.
func (g *phaseGauges) Collect(add func(prom.Family)) {
	defer g.scrapeErrors.Collect(add)
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
	phases := prom.Family{Name: phasesName, Help: phasesHelp, Type: prom.TypeGauge}
	for _, p := range qsync.Phases() {
		phases.Series = append(phases.Series, prom.Series{Labels: []prom.Label{{Name: "phase", Value: string(p.Phase)}},
			Value: float64(byPhase[p.Phase])})
	}
	add(phases)
	gauge := func(name, help string, v int) {
		add(prom.Family{Name: name, Help: help, Type: prom.TypeGauge, Series: []prom.Series{{Value: float64(v)}}})
	}
	gauge(heldName, heldHelp, held)
	gauge(personName, personHelp, person)
	gauge(supplementsName, supplementsHelp, supplements)
}
