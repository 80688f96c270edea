package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/cmd/internal/webauth"
	qsync "github.com/quotesync/quotesync/sync"
)

// checkListener adds the line "listener": who the metrics listener lets
// in and why, with the users file and the certificate read as the daemon
// reads them. Nothing when metrics.listen is off. A listener the daemon
// would refuse to start fails the config file line before this one.
func checkListener(cl *checklist, set *config.Settings, now time.Time) {
	dec := set.Listener
	if dec.Listen == "" {
		return
	}
	a, err := loadListenerAuth(set)
	if err != nil {
		cl.add(qsync.CheckFail, "listener", "%s\n%v", strings.Join(dec.Why, "\n"), err)
		return
	}
	status, notes := qsync.CheckOK, slices.Clone(dec.Why)
	warn := func(format string, args ...any) {
		status = qsync.CheckWarn
		notes = append(notes, fmt.Sprintf(format, args...))
	}
	if dec.Exposed {
		status = qsync.CheckWarn // the words say who reaches what
	}
	if a.users != nil {
		notes = append(notes, fmt.Sprintf("%s: %s", dec.UsersFile, qsync.Plural(a.users.Len(), "user")))
	}
	if dec.Scrape == config.AuthUsers && !dec.TLS() {
		warn("Prometheus cannot scrape /metrics: it logs in by HTTP Basic, which quotesync takes only over TLS; set metrics.tls_cert_file and tls_key_file, or metrics.scrape_auth: none")
	}
	if a.pair != nil && !now.After(webauth.NotAfter(a.pair)) {
		notes = append(notes, fmt.Sprintf("certificate valid until %s", webauth.NotAfter(a.pair).Format(time.DateOnly)))
	}
	for _, p := range a.problems(now) {
		status = qsync.CheckWarn
		if p.words != "" {
			notes = append(notes, p.words)
		}
	}
	cl.add(status, "listener", "%s", strings.Join(notes, "\n"))
}
