package main

// Log field keys of the command's own lines (the engine's are in
// sync/log.go). They are stable: operators filter journald on them.
const (
	fieldVersion  = "version"
	fieldConfig   = "config"
	fieldSchedule = "schedule"
	fieldDatabase = "database" // the shop database, as shopdb.Config.String shows it (no password)
	fieldRemote   = "remote"   // remote.base_url
	fieldAddr     = "addr"
	fieldDetail   = "detail"
	fieldSignal   = "signal"
	fieldReason   = "reason"
	fieldWatchdog = "watchdog_interval"
	fieldDuring   = "during"  // what a stop interrupted (duringStart)
	fieldWaited   = "waited"  // how long a stop waited for the pass
	fieldRunning  = "running" // the value in force when a reload cannot change it
)

// Values of fieldDuring.
const duringStart = "start"

// Names of the command's child loggers (the "logger" field).
const (
	loggerSync  = "sync"
	loggerMySQL = "mysql"
	loggerHTTP  = "http"
)

// Log messages of the command: short lower-case constants.
const (
	msgStarted         = "started"
	msgReady           = "ready"
	msgStopping        = "stopping"
	msgStopped         = "stopped"
	msgStopTimeout     = "stop timed out; exiting with the pass still running"
	msgStartFailed     = "start failed"
	msgSchedulerDied   = "scheduler stopped on its own"
	msgReloading       = "reloading configuration"
	msgReloaded        = "configuration reloaded; it takes effect at the next pass"
	msgReloadRejected  = "configuration reload rejected; the running configuration stays"
	msgLogFormatKept   = "log.format changes take effect at the next restart"
	msgMetricsListen   = "metrics listener started"
	msgMetricsFailed   = "metrics listener failed"
	msgDriver          = "mysql driver"
	msgNotifyFailed    = "sd_notify failed"
	msgWatchdogHeld    = "watchdog pings withheld: no progress"
	msgWatchdogResumed = "watchdog pings resumed"
)
