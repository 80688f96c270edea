package main

import (
	"cmp"
	"errors"
	"net/http"
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/quotesync/quotesync/remote"
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

// errorKinds are the values of quotesync_errors_total's kind label, exported
// at 0 from the start so that rate() works on the first error.
var errorKinds = []string{errKindList, errKindState, errKindShopData, errKindReserve,
	errKindTemporary, errKindRejected, errKindUnauthorized, errKindLock}

// Kinds of quotesync_errors_total.
const (
	errKindList         = "list"         // a pending-list entry could not be taken, or the list not read
	errKindState        = "state"        // a pass failed otherwise (reading or writing the state, the shop)
	errKindShopData     = "shop_data"    // a job is held back
	errKindReserve      = "reserve"      // allocating a job number failed
	errKindTemporary    = "temporary"    // a remote call failed for now
	errKindRejected     = "rejected"     // the remote refused for good, or someone else took the request
	errKindUnauthorized = "unauthorized" // the remote refused the token
	errKindLock         = "lock"         // the single-instance lock failed or was lost
)

// eventErrorKinds counts these events as errors of a kind.
var eventErrorKinds = map[qsync.EventKind]string{
	qsync.EventSkipped:        errKindList,
	qsync.EventHeld:           errKindShopData,
	qsync.EventReserveFailed:  errKindReserve,
	qsync.EventRetrying:       errKindTemporary,
	qsync.EventRejected:       errKindRejected,
	qsync.EventTakenElsewhere: errKindRejected,
	qsync.EventLockFailed:     errKindLock,
	qsync.EventLeaseLost:      errKindLock,
}

// promMetrics exports the engines' events (it is a qsync.Observer) and the
// remote clients' calls (observe) to Prometheus, the series of requests and
// passes labelled by insurer. It lives as long as the process: a reload
// hands the same one to the new engines, so counters never go back.
type promMetrics struct {
	handler http.Handler // serves /metrics, gzipped when the scraper accepts it

	passes         *prometheus.CounterVec
	passDuration   *prometheus.HistogramVec
	transitions    *prometheus.CounterVec
	errors         *prometheus.CounterVec
	leader         prometheus.Gauge
	lastSuccess    *prometheus.GaugeVec
	remoteCalls    *prometheus.CounterVec
	remoteDuration *prometheus.HistogramVec
	reloads        *prometheus.CounterVec
	pending        *prometheus.GaugeVec
	state          *phaseGauges
}

// labelInsurer is the label of the series of one insurer's requests and
// passes; "" on an error of the daemon as a whole (the lock).
const labelInsurer = "insurer"

// newPromMetrics registers quotesync's metrics, the Go runtime's and the
// process's on a registry of their own (never the global default one).
func newPromMetrics() *promMetrics {
	reg := prometheus.NewRegistry()
	counters := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricsNamespace + name, Help: help}, labels)
	}
	gauges := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: metricsNamespace + name, Help: help}, labels)
	}
	m := &promMetrics{
		passes: counters("_passes_total",
			"Passes run, by insurer and outcome (ok, failed, unauthorized, interrupted).",
			labelInsurer, "outcome"),
		passDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: metricsNamespace + "_pass_duration_seconds",
			Help:    "Duration of passes, by insurer, whatever their outcome.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}}, []string{labelInsurer}),
		transitions: counters("_transitions_total",
			"Phase changes of tracked requests, by insurer, from and to phase.",
			labelInsurer, "from", "to"),
		errors: counters("_errors_total",
			"Errors by insurer (\"\" for the lock's) and kind (list, state, shop_data, reserve, temporary, rejected, unauthorized, lock).",
			labelInsurer, "kind"),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: metricsNamespace + "_leader",
			Help: "1 while this instance holds the single-instance lock, else 0."}),
		lastSuccess: gauges("_last_success_timestamp_seconds",
			"Unix time of the end of the insurer's last successful pass; 0 before the first.", labelInsurer),
		remoteCalls: counters("_remote_calls_total",
			"Attempts of remote calls, by insurer, route template and class (ok, temporary, unauthorized, not_found, conflict, rejected).",
			labelInsurer, "route", "class"),
		remoteDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: metricsNamespace + "_remote_call_duration_seconds",
			Help:    "Duration of remote call attempts, by insurer and route template.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}, []string{labelInsurer, "route"}),
		reloads: counters("_config_reloads_total",
			"Configuration reloads (SIGHUP), by outcome (ok, failed).",
			"outcome"),
		pending: gauges("_pending_requests",
			"Requests the insurer's service listed as pending at its last pass.", labelInsurer),
		state: newPhaseGauges(),
	}
	info := gauges("_build_info", "Always 1; the labels say which quotesync runs.", "version", "goversion")
	info.WithLabelValues(version, runtime.Version()).Set(1)
	reg.MustRegister(m.passes, m.passDuration, m.transitions, m.errors, m.leader,
		m.lastSuccess, m.remoteCalls, m.remoteDuration, m.reloads, m.pending, m.state, info,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg, ErrorHandling: promhttp.ContinueOnError})
	for _, o := range []string{outcomeOK, outcomeFailed} {
		m.reloads.WithLabelValues(o)
	}
	m.errors.WithLabelValues("", errKindLock)
	return m
}

// insurers exports the zero series of each insurer of names (the
// configured ones, at the start and at each reload), so that rate() works
// on the first pass and the first error.
func (m *promMetrics) insurers(names []string) {
	for _, name := range names {
		for _, o := range []string{outcomeOK, outcomeFailed, outcomeUnauthorized, outcomeInterrupted} {
			m.passes.WithLabelValues(name, o)
		}
		for _, k := range errorKinds {
			if k != errKindLock {
				m.errors.WithLabelValues(name, k)
			}
		}
		m.passDuration.WithLabelValues(name)
		m.lastSuccess.WithLabelValues(name)
		m.pending.WithLabelValues(name)
	}
}

// Observe implements qsync.Observer.
func (m *promMetrics) Observe(ev qsync.Event) {
	if ev.From != ev.To && ev.To != "" {
		from := cmp.Or(string(ev.From), "new")
		m.transitions.WithLabelValues(ev.Insurer, from, string(ev.To)).Inc()
	}
	if kind, ok := eventErrorKinds[ev.Kind]; ok {
		m.errors.WithLabelValues(ev.Insurer, kind).Inc()
	}
	switch ev.Kind {
	case qsync.EventPassDone:
		m.passDone(ev)
	case qsync.EventLeader:
		m.leader.Set(1)
	case qsync.EventStandby, qsync.EventLeaseLost:
		m.leader.Set(0)
	}
}

// passDone counts a pass of an insurer by its outcome.
func (m *promMetrics) passDone(ev qsync.Event) {
	ins := ev.Insurer
	m.passDuration.WithLabelValues(ins).Observe(ev.Duration.Seconds())
	if ev.Summary != nil && ev.Err == nil {
		m.pending.WithLabelValues(ins).Set(float64(ev.Summary.Pending))
	}
	switch err := ev.Err; {
	case err == nil:
		m.passes.WithLabelValues(ins, outcomeOK).Inc()
		m.lastSuccess.WithLabelValues(ins).Set(float64(ev.At.UnixNano()) / 1e9)
	case errors.Is(err, qsync.ErrUnauthorized):
		m.passes.WithLabelValues(ins, outcomeUnauthorized).Inc()
		m.errors.WithLabelValues(ins, errKindUnauthorized).Inc()
	case errors.Is(err, qsync.ErrInterrupted):
		m.passes.WithLabelValues(ins, outcomeInterrupted).Inc()
	default:
		m.passes.WithLabelValues(ins, outcomeFailed).Inc()
		m.errors.WithLabelValues(ins, errKindState).Inc()
	}
}

// observe is the remote clients' per-attempt hook (remote.Config.Observe),
// told which insurer's client made the call.
func (m *promMetrics) observe(insurer string, ci remote.CallInfo) {
	m.remoteCalls.WithLabelValues(insurer, ci.Route, ci.Class).Inc()
	m.remoteDuration.WithLabelValues(insurer, ci.Route).Observe(ci.Duration.Seconds())
}

// reloaded counts one configuration reload.
func (m *promMetrics) reloaded(ok bool) {
	o := outcomeOK
	if !ok {
		o = outcomeFailed
	}
	m.reloads.WithLabelValues(o).Inc()
}
