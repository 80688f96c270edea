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
			if qd, set := d.current(); qd != nil && set != nil {
				return qsync.RequestsStore(qd.Store, set.Daemon)
			}
			return nil
		},
		Insurers: func() []string {
			if _, cur := d.current(); cur != nil {
				return cur.Daemon.Names()
			}
			return set.Daemon.Names()
		},
		Enabled: func() bool {
			if _, cur := d.current(); cur != nil {
				return cur.Metrics.StatusPageOn()
			}
			return set.Metrics.StatusPageOn()
		},
		Health:   d.pageHealth,
		Location: set.Daemon.Sync.Location,
		Version:  version,
	})
}

// pageHealth is /healthz's verdict for the page, without the database
// ping (the page's own reads say whether the database answers).
func (d *daemon) pageHealth() (bool, string, time.Time) {
	qd, set := d.current()
	if qd == nil || set == nil {
		return false, "starting", time.Time{}
	}
	ok, rep := qd.Health(time.Now(), &d.prog, set.Metrics.HealthMaxAge, nil)
	last, _ := time.Parse(time.RFC3339, rep.LastSuccess)
	return ok, rep.Reason, last
}
