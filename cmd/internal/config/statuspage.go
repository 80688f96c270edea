package config

// DefaultStatusPage: the status page is served (on the metrics listener,
// when metrics.listen is set) unless metrics.status_page is false.
const DefaultStatusPage = true

// StatusPageOn reports whether the listener serves the status page
// (metrics.status_page, default DefaultStatusPage).
func (m MetricsSection) StatusPageOn() bool { return m.StatusPage == nil || *m.StatusPage }
