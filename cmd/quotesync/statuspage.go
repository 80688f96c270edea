package main

import (
	"net/http"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/statuspage"
	"github.com/quotesync/quotesync/shopdb"
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
		DB: func() *shopdb.DB {
			if qd := d.current(); qd != nil {
				return qd.DB
			}
			return nil
		},
		Enabled: func() bool {
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.set == nil {
				return set.Metrics.StatusPageOn()
			}
			return d.set.Metrics.StatusPageOn()
		},
		Location: set.Daemon.Sync.Location,
		Version:  version,
	})
}
