package prom

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// goMetric is one of the Go collector's gauges and counters: its name, help
// and type, and its value from what runtime/metrics read (v, by name).
type goMetric struct {
	name, help, typ string
	value           func(v func(string) uint64) float64
}

// rm returns the value of one runtime/metrics name.
func rm(name string) func(func(string) uint64) float64 {
	return func(v func(string) uint64) float64 { return float64(v(name)) }
}

// goMetrics are the Go collector's metrics read from runtime/metrics, named
// and computed as Prometheus's Go client (collectors.NewGoCollector with
// its defaults) computes them.
var goMetrics = []goMetric{
	{"go_gc_gogc_percent", "Heap size target percentage configured by the user, otherwise 100. This value is set by the GOGC environment variable, and the runtime/debug.SetGCPercent function. Sourced from /gc/gogc:percent.",
		TypeGauge, rm("/gc/gogc:percent")},
	{"go_gc_gomemlimit_bytes", "Go runtime memory limit configured by the user, otherwise math.MaxInt64. This value is set by the GOMEMLIMIT environment variable, and the runtime/debug.SetMemoryLimit function. Sourced from /gc/gomemlimit:bytes.",
		TypeGauge, rm("/gc/gomemlimit:bytes")},
	{"go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.",
		TypeGauge, rm("/memory/classes/heap/objects:bytes")},
	{"go_memstats_alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.",
		TypeCounter, rm("/gc/heap/allocs:bytes")},
	{"go_memstats_buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.",
		TypeGauge, rm("/memory/classes/profiling/buckets:bytes")},
	{"go_memstats_frees_total", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.",
		TypeCounter, func(v func(string) uint64) float64 {
			return float64(v("/gc/heap/frees:objects") + v("/gc/heap/tiny/allocs:objects"))
		}},
	{"go_memstats_gc_sys_bytes", "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.",
		TypeGauge, rm("/memory/classes/metadata/other:bytes")},
	{"go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.",
		TypeGauge, rm("/memory/classes/heap/objects:bytes")},
	{"go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.",
		TypeGauge, func(v func(string) uint64) float64 {
			return float64(v("/memory/classes/heap/released:bytes") + v("/memory/classes/heap/free:bytes"))
		}},
	{"go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes",
		TypeGauge, func(v func(string) uint64) float64 {
			return float64(v("/memory/classes/heap/objects:bytes") + v("/memory/classes/heap/unused:bytes"))
		}},
	{"go_memstats_heap_objects", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.",
		TypeGauge, rm("/gc/heap/objects:objects")},
	{"go_memstats_heap_released_bytes", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.",
		TypeGauge, rm("/memory/classes/heap/released:bytes")},
	{"go_memstats_heap_sys_bytes", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.",
		TypeGauge, func(v func(string) uint64) float64 {
			return float64(v("/memory/classes/heap/objects:bytes") + v("/memory/classes/heap/unused:bytes") +
				v("/memory/classes/heap/released:bytes") + v("/memory/classes/heap/free:bytes"))
		}},
	{"go_memstats_mallocs_total", "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.",
		TypeCounter, func(v func(string) uint64) float64 {
			return float64(v("/gc/heap/allocs:objects") + v("/gc/heap/tiny/allocs:objects"))
		}},
	{"go_memstats_mcache_inuse_bytes", "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.",
		TypeGauge, rm("/memory/classes/metadata/mcache/inuse:bytes")},
	{"go_memstats_mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.",
		TypeGauge, func(v func(string) uint64) float64 {
			return float64(v("/memory/classes/metadata/mcache/inuse:bytes") + v("/memory/classes/metadata/mcache/free:bytes"))
		}},
	{"go_memstats_mspan_inuse_bytes", "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.",
		TypeGauge, rm("/memory/classes/metadata/mspan/inuse:bytes")},
	{"go_memstats_mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.",
		TypeGauge, func(v func(string) uint64) float64 {
			return float64(v("/memory/classes/metadata/mspan/inuse:bytes") + v("/memory/classes/metadata/mspan/free:bytes"))
		}},
	{"go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.",
		TypeGauge, rm("/gc/heap/goal:bytes")},
	{"go_memstats_other_sys_bytes", "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.",
		TypeGauge, rm("/memory/classes/other:bytes")},
	{"go_memstats_stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.",
		TypeGauge, rm("/memory/classes/heap/stacks:bytes")},
	{"go_memstats_stack_sys_bytes", "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.",
		TypeGauge, func(v func(string) uint64) float64 {
			return float64(v("/memory/classes/heap/stacks:bytes") + v("/memory/classes/os-stacks:bytes"))
		}},
	{"go_memstats_sys_bytes", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.",
		TypeGauge, rm("/memory/classes/total:bytes")},
	{"go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously. Sourced from /sched/gomaxprocs:threads.",
		TypeGauge, rm("/sched/gomaxprocs:threads")},
}

// goCollector is GoCollector's state: the samples it reads, made once.
type goCollector struct {
	mu      sync.Mutex
	samples []metrics.Sample
	index   map[string]int
}

// GoCollector returns the collector of the Go runtime's metrics: the
// go_* series of Prometheus's Go client with its default options.
func GoCollector() Collector {
	c := &goCollector{index: map[string]int{}}
	for _, m := range goMetrics {
		m.value(func(name string) uint64 {
			if _, ok := c.index[name]; !ok {
				c.index[name] = len(c.samples)
				c.samples = append(c.samples, metrics.Sample{Name: name})
			}
			return 0
		})
	}
	return c
}

// Collect implements Collector.
func (c *goCollector) Collect(add func(Family)) {
	gauge := func(name, help string, v float64, labels ...Label) {
		add(Family{Name: name, Help: help, Type: TypeGauge, Series: []Series{{Labels: labels, Value: v}}})
	}
	gauge("go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine()))
	threads, _ := runtime.ThreadCreateProfile(nil)
	gauge("go_threads", "Number of OS threads created.", float64(threads))

	var stats debug.GCStats
	stats.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&stats)
	gc := Series{Count: uint64(stats.NumGC), Sum: stats.PauseTotal.Seconds()}
	for i, q := range stats.PauseQuantiles {
		gc.Quantiles = append(gc.Quantiles, Quantile{Q: float64(i) / float64(len(stats.PauseQuantiles)-1), Value: q.Seconds()})
	}
	add(Family{Name: "go_gc_duration_seconds", Type: TypeSummary, Series: []Series{gc},
		Help: "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles."})
	gauge("go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.",
		float64(stats.LastGC.UnixNano())/1e9)
	gauge("go_info", "Information about the Go environment.", 1, Label{"version", runtime.Version()})

	c.mu.Lock()
	defer c.mu.Unlock()
	metrics.Read(c.samples)
	v := func(name string) uint64 {
		s := c.samples[c.index[name]].Value
		switch s.Kind() {
		case metrics.KindUint64:
			return s.Uint64()
		case metrics.KindFloat64:
			return uint64(s.Float64())
		}
		return 0 // not in this Go's runtime/metrics
	}
	for _, m := range goMetrics {
		add(Family{Name: m.name, Help: m.help, Type: m.typ, Series: []Series{{Value: m.value(v)}}})
	}
}
