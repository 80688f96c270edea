package main

// Log field keys of the command's own lines (the engine's are in
// sync/log.go). They are stable: operators filter journald on them.
const (
	fieldVersion  = "version"
	fieldConfig   = "config"
	fieldSite     = "site" // --site: the site of the template unit this daemon runs
	fieldSchedule = "schedule"
	fieldDatabase = "database" // the shop database, as shopdb.Config.String shows it (no password)
	fieldRemote   = "remote"   // remote.base_url
	fieldAddr     = "addr"
	fieldNextAddr = "next_addr" // the address a listener moves to
	fieldDetail   = "detail"
	fieldSignal   = "signal"
	fieldReason   = "reason"
	fieldWatchdog = "watchdog_interval"
	fieldDuring   = "during"  // what a stop interrupted (duringStart)
	fieldWaited   = "waited"  // how long a stop waited for the pass
	fieldRunning  = "running" // the value in force when a reload cannot change it

	fieldAuth         = "auth"           // who opens the status page: users or none
	fieldScrapeAuth   = "scrape_auth"    // who reads /metrics and /healthz: users or none
	fieldTLS          = "tls"            // the listener serves HTTPS
	fieldUsersFile    = "users_file"     // metrics.users_file
	fieldUsers        = "users"          // how many users it has
	fieldCertNotAfter = "cert_not_after" // when the listener's certificate expires
	fieldMode         = "mode"           // a file's permissions, octal
	fieldWeakUsers    = "weak_users"     // users whose bcrypt hash is cheaper than cost 10
)

// Values of fieldDuring.
const duringStart = "start"

// loggerHTTP names the listener's child logger (the "logger" field).
const loggerHTTP = "http"

// Log messages of the command: short lower-case constants.
const (
	msgStarted        = "started"
	msgReady          = "ready"
	msgStopping       = "stopping"
	msgStopped        = "stopped"
	msgStopTimeout    = "stop timed out; exiting with the pass still running"
	msgStartFailed    = "start failed"
	msgSchedulerDied  = "scheduler stopped on its own"
	msgReloading      = "reloading configuration"
	msgReloaded       = "configuration reloaded; it takes effect at the next pass"
	msgReloadRejected = "configuration reload rejected; the running configuration stays"
	msgLogFormatKept  = "log.format changes take effect at the next restart"
	msgMetricsListen  = "metrics listener started"
	msgMetricsFailed  = "metrics listener failed"
	msgMetricsRebind  = "metrics listener closed to listen again on its port"
	msgMetricsLost    = "metrics listener lost: its port could not be listened on again; reload or restart to get it back"

	msgListenerAuth           = "listener login"
	msgListenerOpenDeprecated = "listener open to the network by metrics.allow_non_loopback (deprecated): set metrics.users_file, or metrics.auth: none"
	msgListenerNoUsers        = "listener login: the users file has no users; add one with quotesync passwd"
	msgListenerCertExpired    = "listener login: the TLS certificate has expired"
	msgListenerOpen           = "listener open to the network without a login (metrics.auth or metrics.scrape_auth: none)"
	msgListenerInClear        = "listener login without TLS beyond loopback: passwords and session cookies cross the network in clear; set metrics.tls_cert_file and tls_key_file"
	msgListenerUsersOpen      = "listener login: the users file is readable by others; chmod 600 it"
	msgListenerWeakHashes     = "listener login: users whose bcrypt hash costs less than 10; set their passwords again with quotesync passwd"
	msgDriver                 = "mysql driver"
	msgNotifyFailed           = "sd_notify failed"
	msgWatchdogHeld           = "watchdog pings withheld: no progress"
	msgWatchdogResumed        = "watchdog pings resumed"
)
