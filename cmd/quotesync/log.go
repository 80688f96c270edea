package main

// Log field keys of the command's own lines (the engine's are in
// sync/log.go). They are stable: operators filter journald on them.
const (
	fieldVersion  = "version"
	fieldConfig   = "config"
	fieldSchedule = "schedule"
	fieldAddr     = "addr"
	fieldDetail   = "detail"
	fieldSignal   = "signal"
	fieldReason   = "reason"
	fieldWatchdog = "watchdog_interval"
	fieldSince    = "since"
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
	msgMetricsListen   = "metrics listener started"
	msgMetricsFailed   = "metrics listener failed"
	msgDriver          = "mysql driver"
	msgNotifyFailed    = "sd_notify failed"
	msgWatchdogHeld    = "watchdog pings withheld: no progress"
	msgWatchdogResumed = "watchdog pings resumed"
)
