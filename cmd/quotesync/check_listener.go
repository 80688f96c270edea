package main

import (
	"fmt"
	"os"
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
		notes = append(notes, fmt.Sprintf("%s: %s", dec.UsersFile, plural(a.users.Len(), "user")))
		if a.users.Len() == 0 {
			warn("nobody can log in yet: add a user with quotesync passwd --file %s USER", dec.UsersFile)
		}
		if fi, err := os.Stat(dec.UsersFile); err == nil && fi.Mode().Perm()&0o077 != 0 {
			warn("%s is readable by others (mode %04o): chmod 600 %s", dec.UsersFile, fi.Mode().Perm(), dec.UsersFile)
		}
	}
	if dec.Scrape == config.AuthUsers && !dec.TLS() {
		warn("Prometheus cannot scrape /metrics: it logs in by HTTP Basic, which quotesync takes only over TLS; set metrics.tls_cert_file and tls_key_file, or metrics.scrape_auth: none")
	}
	if a.pair != nil {
		until := webauth.NotAfter(a.pair)
		if now.After(until) {
			warn("the certificate %s expired on %s: browsers refuse it", dec.TLSCertFile, until.Format(time.DateOnly))
		} else {
			notes = append(notes, fmt.Sprintf("certificate valid until %s", until.Format(time.DateOnly)))
		}
	}
	cl.add(status, "listener", "%s", strings.Join(notes, "\n"))
}
