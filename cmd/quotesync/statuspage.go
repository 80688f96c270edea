package main

import (
	"net/http"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/statuspage"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// withStatusPage serves the status page (/status and below) beside obs,
// the listener's other handlers.
func withStatusPage(obs, page http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", obs)
	mux.Handle("/status", page)
	mux.Handle("/status/", page)
	return mux
}

// statusPage is the daemon's status page: it reads the database the
// daemon uses now (a reload swaps it) and is on while the running
// configuration's metrics.status_page says so.
func (d *daemon) statusPage(set *config.Settings) http.Handler {
	return statuspage.New(statuspage.Options{
		Store: func() *store.Store {
			d.mu.Lock()
			qd, set := d.cur, d.set
			d.mu.Unlock()
			if qd != nil && set != nil {
				return qsync.RequestsStore(qd.Store, set.Daemon)
			}
			return nil
		},
		Insurers: func() []string {
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.set == nil {
				return set.Daemon.Names()
			}
			return d.set.Daemon.Names()
		},
		Enabled: func() bool {
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.set == nil {
				return set.Metrics.StatusPageOn()
			}
			return d.set.Metrics.StatusPageOn()
		},
		Health:   d.pageHealth,
		Location: set.Daemon.Sync.Location,
		Version:  version,
	})
}

// pageHealth is /healthz's verdict for the page, without the database
// ping (the page's own reads say whether the database answers).
func (d *daemon) pageHealth() (bool, string, time.Time) {
	d.mu.Lock()
	qd, set := d.cur, d.set
	d.mu.Unlock()
	if qd == nil || set == nil {
		return false, "starting", time.Time{}
	}
	ok, rep := qd.Health(time.Now(), &d.prog, set.Metrics.HealthMaxAge, nil)
	last, _ := time.Parse(time.RFC3339, rep.LastSuccess)
	return ok, rep.Reason, last
}
