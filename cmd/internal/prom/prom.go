// Package prom exposes metrics in the Prometheus text format (version
// 0.0.4): counters, gauges and histograms, with or without labels, the Go
// runtime's and the process's metrics under the names Prometheus's own Go
// client gives them, and the HTTP handler of /metrics.
//
// It is what quotesync needs of that client. The client itself comes with
// protocol buffers, its own parsers and collectors of everything; their
// package initialisation alone, run by every quotesync command at start,
// kept about 2 MiB of an idle daemon resident, a seventh of all it held.
package prom

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Metric types, as the TYPE line names them.
const (
	TypeCounter   = "counter"
	TypeGauge     = "gauge"
	TypeHistogram = "histogram"
	TypeSummary   = "summary"
)

// A Label is one name="value" pair of a series.
type Label struct{ Name, Value string }

// A Quantile is one quantile of a summary.
type Quantile struct{ Q, Value float64 }

// A Series is one labelled value of a Family: Value for counters and
// gauges; for histograms, Buckets (cumulative counts, one per upper
// bound of the family's Bounds), Count and Sum; for summaries,
// Quantiles, Count and Sum.
type Series struct {
	Labels    []Label // sorted by name
	Value     float64
	Bounds    []float64 // histograms: the buckets' upper bounds, without +Inf
	Buckets   []uint64  // histograms: cumulative counts, one per bound
	Quantiles []Quantile
	Count     uint64
	Sum       float64
}

// A Family is one metric as a scrape sees it: its name, help text and
// type, and its series (a family without any is not written).
type Family struct {
	Name, Help, Type string
	Series           []Series
}

// A Collector adds its families at each scrape. Collect may run on
// several scrapes at once.
type Collector interface {
	Collect(add func(Family))
}

// CollectorFunc adapts a function to a Collector.
type CollectorFunc func(add func(Family))

// Collect implements Collector.
func (f CollectorFunc) Collect(add func(Family)) { f(add) }

// Registry holds the collectors one /metrics serves.
type Registry struct {
	mu sync.Mutex
	cs []Collector
	// handlerErrors counts the handler's failures, as Prometheus's client
	// does (promhttp_metric_handler_errors_total).
	handlerErrors *CounterVec
}

// NewRegistry returns a registry with the handler's own error counter.
func NewRegistry() *Registry {
	r := &Registry{handlerErrors: NewCounterVec("promhttp_metric_handler_errors_total",
		"Total number of internal errors encountered by the promhttp metric handler.", "cause")}
	r.handlerErrors.WithLabelValues("gathering")
	r.handlerErrors.WithLabelValues("encoding")
	r.MustRegister(r.handlerErrors)
	return r
}

// MustRegister adds collectors.
func (r *Registry) MustRegister(cs ...Collector) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cs = append(r.cs, cs...)
}

// Gather collects every family, sorted by name, each family's series by
// their label values; families without series are left out.
func (r *Registry) Gather() []Family {
	r.mu.Lock()
	cs := slices.Clone(r.cs)
	r.mu.Unlock()
	var fams []Family
	for _, c := range cs {
		c.Collect(func(f Family) {
			if len(f.Series) > 0 {
				fams = append(fams, f)
			}
		})
	}
	slices.SortStableFunc(fams, func(a, b Family) int { return strings.Compare(a.Name, b.Name) })
	for _, f := range fams {
		slices.SortStableFunc(f.Series, func(a, b Series) int { return compareLabels(a.Labels, b.Labels) })
	}
	return fams
}

// compareLabels orders series as Prometheus's client does: by their number
// of labels, then by the values in order.
func compareLabels(a, b []Label) int {
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	for i := range a {
		if c := strings.Compare(a[i].Value, b[i].Value); c != 0 {
			return c
		}
	}
	return 0
}

// value is a float64 updated atomically.
type value struct{ bits atomic.Uint64 }

func (v *value) load() float64   { return math.Float64frombits(v.bits.Load()) }
func (v *value) store(f float64) { v.bits.Store(math.Float64bits(f)) }
func (v *value) add(f float64) {
	for {
		old := v.bits.Load()
		if v.bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+f)) {
			return
		}
	}
}

// Counter is a value that only goes up.
type Counter struct {
	name, help string
	v          value
}

// NewCounter returns a counter without labels.
func NewCounter(name, help string) *Counter { return &Counter{name: name, help: help} }

// Inc adds 1.
func (c *Counter) Inc() { c.v.add(1) }

// Add adds d, which must not be negative.
func (c *Counter) Add(d float64) {
	if d < 0 {
		panic("prom: a counter cannot decrease")
	}
	c.v.add(d)
}

// Value returns the count.
func (c *Counter) Value() float64 { return c.v.load() }

// Collect implements Collector.
func (c *Counter) Collect(add func(Family)) {
	add(Family{Name: c.name, Help: c.help, Type: TypeCounter, Series: []Series{{Value: c.v.load()}}})
}

// Gauge is a value that goes up and down.
type Gauge struct {
	name, help string
	v          value
}

// NewGauge returns a gauge without labels.
func NewGauge(name, help string) *Gauge { return &Gauge{name: name, help: help} }

// Set sets the value.
func (g *Gauge) Set(f float64) { g.v.store(f) }

// Value returns the value.
func (g *Gauge) Value() float64 { return g.v.load() }

// Collect implements Collector.
func (g *Gauge) Collect(add func(Family)) {
	add(Family{Name: g.name, Help: g.help, Type: TypeGauge, Series: []Series{{Value: g.v.load()}}})
}

// Histogram counts observations in buckets.
type Histogram struct {
	name, help string
	bounds     []float64 // sorted upper bounds, without +Inf

	mu     sync.Mutex
	counts []uint64 // per bucket, not cumulative; the last is +Inf's
	count  uint64
	sum    float64
}

// NewHistogram returns a histogram without labels with these upper
// bounds (sorted; +Inf is implied).
func NewHistogram(name, help string, bounds []float64) *Histogram {
	h := newHistogram(bounds)
	h.name, h.help = name, help
	return h
}

func newHistogram(bounds []float64) *Histogram {
	if !sort.Float64sAreSorted(bounds) {
		panic("prom: histogram bounds not sorted")
	}
	if n := len(bounds); n > 0 && math.IsInf(bounds[n-1], +1) {
		bounds = bounds[:n-1]
	}
	return &Histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

// Observe counts v in the first bucket whose bound is at least v.
func (h *Histogram) Observe(v float64) {
	i := sort.SearchFloat64s(h.bounds, v)
	h.mu.Lock()
	h.counts[i]++
	h.count++
	h.sum += v
	h.mu.Unlock()
}

// series returns the histogram's cumulative counts.
func (h *Histogram) series(labels []Label) Series {
	s := Series{Labels: labels, Bounds: h.bounds, Buckets: make([]uint64, len(h.bounds))}
	h.mu.Lock()
	var cum uint64
	for i := range h.bounds {
		cum += h.counts[i]
		s.Buckets[i] = cum
	}
	s.Count, s.Sum = h.count, h.sum
	h.mu.Unlock()
	return s
}

// Collect implements Collector.
func (h *Histogram) Collect(add func(Family)) {
	add(Family{Name: h.name, Help: h.help, Type: TypeHistogram, Series: []Series{h.series(nil)}})
}

// vec is a family of metrics of one kind told apart by label values.
type vec[M any] struct {
	name, help, typ string
	labels          []string // in the order WithLabelValues takes them
	order           []int    // the label indexes sorted by name
	newM            func() M
	series          func(M, []Label) Series

	mu       sync.Mutex
	children map[string]*child[M]
}

type child[M any] struct {
	labels []Label // sorted by name
	m      M
}

func newVec[M any](name, help, typ string, labels []string, newM func() M, series func(M, []Label) Series) *vec[M] {
	order := make([]int, len(labels))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(labels[a], labels[b]) })
	return &vec[M]{name: name, help: help, typ: typ, labels: labels, order: order, newM: newM, series: series,
		children: map[string]*child[M]{}}
}

// with returns the metric of these label values, made on first use.
func (v *vec[M]) with(values []string) M {
	if len(values) != len(v.labels) {
		panic("prom: " + v.name + ": wrong number of label values")
	}
	key := strings.Join(values, "\xff")
	v.mu.Lock()
	defer v.mu.Unlock()
	c, ok := v.children[key]
	if !ok {
		c = &child[M]{m: v.newM(), labels: make([]Label, len(values))}
		for i, j := range v.order {
			c.labels[i] = Label{Name: v.labels[j], Value: values[j]}
		}
		v.children[key] = c
	}
	return c.m
}

// Collect implements Collector.
func (v *vec[M]) Collect(add func(Family)) {
	v.mu.Lock()
	children := make([]*child[M], 0, len(v.children))
	for _, c := range v.children {
		children = append(children, c)
	}
	v.mu.Unlock()
	f := Family{Name: v.name, Help: v.help, Type: v.typ, Series: make([]Series, len(children))}
	for i, c := range children {
		f.Series[i] = v.series(c.m, c.labels)
	}
	add(f)
}

// CounterVec is counters told apart by labels.
type CounterVec struct{ *vec[*Counter] }

// NewCounterVec returns counters with these label names.
func NewCounterVec(name, help string, labels ...string) *CounterVec {
	return &CounterVec{newVec(name, help, TypeCounter, labels, func() *Counter { return &Counter{} },
		func(c *Counter, l []Label) Series { return Series{Labels: l, Value: c.v.load()} })}
}

// WithLabelValues returns the counter of these label values (in the
// order of the names), made at 0 on first use.
func (v *CounterVec) WithLabelValues(values ...string) *Counter { return v.with(values) }

// GaugeVec is gauges told apart by labels.
type GaugeVec struct{ *vec[*Gauge] }

// NewGaugeVec returns gauges with these label names.
func NewGaugeVec(name, help string, labels ...string) *GaugeVec {
	return &GaugeVec{newVec(name, help, TypeGauge, labels, func() *Gauge { return &Gauge{} },
		func(g *Gauge, l []Label) Series { return Series{Labels: l, Value: g.v.load()} })}
}

// WithLabelValues returns the gauge of these label values, made at 0 on
// first use.
func (v *GaugeVec) WithLabelValues(values ...string) *Gauge { return v.with(values) }

// HistogramVec is histograms told apart by labels.
type HistogramVec struct{ *vec[*Histogram] }

// NewHistogramVec returns histograms with these bounds and label names.
func NewHistogramVec(name, help string, bounds []float64, labels ...string) *HistogramVec {
	newHistogram(bounds) // checks the bounds now
	return &HistogramVec{newVec(name, help, TypeHistogram, labels, func() *Histogram { return newHistogram(bounds) },
		(*Histogram).series)}
}

// WithLabelValues returns the histogram of these label values, made empty
// on first use.
func (v *HistogramVec) WithLabelValues(values ...string) *Histogram { return v.with(values) }
