package main

import (
	"errors"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
	qsync "github.com/quotesync/quotesync/sync"
)

// metricsNamespace prefixes every metric name.
const metricsNamespace = "quotesync"

// Outcomes of quotesync_passes_total and quotesync_config_reloads_total.
const (
	outcomeOK           = "ok"
	outcomeFailed       = "failed"
	outcomeUnauthorized = "unauthorized"
	outcomeInterrupted  = "interrupted"
)

// openPhases are the phases of quotesync_open_requests; a phase without
// requests is reported as 0, not left out.
var openPhases = []shopdb.Phase{shopdb.PhaseWaiting, shopdb.PhaseReserved, shopdb.PhaseAccepted, shopdb.PhaseDrafted}

// errorKinds are the values of quotesync_errors_total's kind label, exported
// at 0 from the start so that rate() works on the first error.
var errorKinds = []string{
	qsync.ErrKindList, qsync.ErrKindState, qsync.ErrKindShopData, qsync.ErrKindReserve,
	qsync.ErrKindTemporary, qsync.ErrKindRejected, qsync.ErrKindUnauthorized, qsync.ErrKindLock,
}

// promMetrics exports the engine's counters and gauges (it implements
// qsync.Metrics) and the remote client's calls (observe) to Prometheus. It
// lives as long as the process: a reload hands the same one to the new
// engine, so counters never go back.
type promMetrics struct {
	reg *prometheus.Registry

	passes         *prometheus.CounterVec
	passDuration   prometheus.Histogram
	transitions    *prometheus.CounterVec
	errors         *prometheus.CounterVec
	open           *prometheus.GaugeVec
	leader         prometheus.Gauge
	lastSuccess    prometheus.Gauge
	remoteCalls    *prometheus.CounterVec
	remoteDuration *prometheus.HistogramVec
	reloads        *prometheus.CounterVec
}

// newPromMetrics registers quotesync's metrics, the Go runtime's and the
// process's on a registry of their own (never the global default one).
func newPromMetrics() *promMetrics {
	reg := prometheus.NewRegistry()
	m := &promMetrics{
		reg: reg,
		passes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Name: "passes_total",
			Help: "Passes run, by outcome (ok, failed, unauthorized, interrupted).",
		}, []string{"outcome"}),
		passDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: metricsNamespace, Name: "pass_duration_seconds",
			Help:    "Duration of passes, whatever their outcome.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600},
		}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Name: "transitions_total",
			Help: "Phase changes of tracked requests, by from and to phase.",
		}, []string{"from", "to"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Name: "errors_total",
			Help: "Errors by kind (list, state, shop_data, reserve, temporary, rejected, unauthorized, lock).",
		}, []string{"kind"}),
		open: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: metricsNamespace, Name: "open_requests",
			Help: "Tracked requests not yet in a terminal phase, by phase, after the last pass.",
		}, []string{"phase"}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: metricsNamespace, Name: "leader",
			Help: "1 while this instance holds the single-instance lock, else 0.",
		}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: metricsNamespace, Name: "last_success_timestamp_seconds",
			Help: "Unix time of the end of the last successful pass; 0 before the first.",
		}),
		remoteCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Name: "remote_calls_total",
			Help: "Attempts of remote calls, by route template and class (ok, temporary, unauthorized, not_found, conflict, rejected).",
		}, []string{"route", "class"}),
		remoteDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: metricsNamespace, Name: "remote_call_duration_seconds",
			Help:    "Duration of remote call attempts, by route template.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metricsNamespace, Name: "config_reloads_total",
			Help: "Configuration reloads (SIGHUP), by outcome (ok, failed).",
		}, []string{"outcome"}),
	}
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: metricsNamespace, Name: "build_info",
		Help: "Always 1; the labels say which quotesync runs.",
	}, []string{"version", "goversion"})
	info.WithLabelValues(version, runtime.Version()).Set(1)
	reg.MustRegister(m.passes, m.passDuration, m.transitions, m.errors, m.open, m.leader,
		m.lastSuccess, m.remoteCalls, m.remoteDuration, m.reloads, info,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, o := range []string{outcomeOK, outcomeFailed, outcomeUnauthorized, outcomeInterrupted} {
		m.passes.WithLabelValues(o)
	}
	for _, k := range errorKinds {
		m.errors.WithLabelValues(k)
	}
	for _, ph := range openPhases {
		m.open.WithLabelValues(string(ph))
	}
	for _, o := range []string{outcomeOK, outcomeFailed} {
		m.reloads.WithLabelValues(o)
	}
	return m
}

// PassDone implements qsync.Metrics.
func (m *promMetrics) PassDone(d time.Duration, err error) {
	m.passDuration.Observe(d.Seconds())
	switch {
	case err == nil:
		m.passes.WithLabelValues(outcomeOK).Inc()
		m.lastSuccess.Set(float64(time.Now().UnixNano()) / 1e9)
	case errors.Is(err, qsync.ErrUnauthorized):
		m.passes.WithLabelValues(outcomeUnauthorized).Inc()
	case errors.Is(err, qsync.ErrInterrupted):
		m.passes.WithLabelValues(outcomeInterrupted).Inc()
	default:
		m.passes.WithLabelValues(outcomeFailed).Inc()
	}
}

// Transition implements qsync.Metrics.
func (m *promMetrics) Transition(from, to shopdb.Phase) {
	f := string(from)
	if f == "" {
		f = "new"
	}
	m.transitions.WithLabelValues(f, string(to)).Inc()
}

// Error implements qsync.Metrics.
func (m *promMetrics) Error(kind string) { m.errors.WithLabelValues(kind).Inc() }

// OpenPhases implements qsync.Metrics.
func (m *promMetrics) OpenPhases(counts map[shopdb.Phase]int) {
	for _, ph := range openPhases {
		m.open.WithLabelValues(string(ph)).Set(float64(counts[ph]))
	}
	for ph, n := range counts {
		if !isOpenPhase(ph) {
			m.open.WithLabelValues(string(ph)).Set(float64(n))
		}
	}
}

func isOpenPhase(ph shopdb.Phase) bool {
	for _, p := range openPhases {
		if p == ph {
			return true
		}
	}
	return false
}

// Leader implements qsync.Metrics.
func (m *promMetrics) Leader(leader bool) {
	v := 0.0
	if leader {
		v = 1
	}
	m.leader.Set(v)
}

// observe is the remote client's per-attempt hook (remote.Config.Observe).
func (m *promMetrics) observe(ci remote.CallInfo) {
	m.remoteCalls.WithLabelValues(ci.Route, ci.Class).Inc()
	m.remoteDuration.WithLabelValues(ci.Route).Observe(ci.Duration.Seconds())
}

// reloaded counts one configuration reload.
func (m *promMetrics) reloaded(ok bool) {
	o := outcomeOK
	if !ok {
		o = outcomeFailed
	}
	m.reloads.WithLabelValues(o).Inc()
}
