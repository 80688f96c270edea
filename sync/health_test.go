package sync

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func mustSchedule(t *testing.T, spec string) Config {
	t.Helper()
	s, err := parseScheduleForTest(Config{Schedule: spec, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEvalLive is the watchdog's rule: ping while no pass runs and ticks
// come when due, or while the running pass is younger than pass_timeout
// plus a grace.
func TestEvalLive(t *testing.T) {
	t0 := time.Date(2025, 7, 14, 10, 0, 0, 0, time.UTC)
	every := mustSchedule(t, "@every 1m")
	tests := []struct {
		name string
		in   liveInput
		want bool
	}{
		{"IdleJustStarted", liveInput{now: t0.Add(10 * time.Second), view: progressView{baseline: t0}}, true},
		{"IdleTickRecent", liveInput{now: t0.Add(2 * time.Minute), view: progressView{baseline: t0, lastTick: t0.Add(90 * time.Second)}}, true},
		{"IdleTicksStopped", liveInput{now: t0.Add(10 * time.Minute), view: progressView{baseline: t0, lastTick: t0.Add(time.Minute)}}, false},
		{"NoTickSinceStart", liveInput{now: t0.Add(4 * time.Minute), view: progressView{baseline: t0}}, false},
		{"LongPassWithinTimeout", liveInput{now: t0.Add(9 * time.Minute), busy: true, busySince: t0, passTimeout: 10 * time.Minute,
			view: progressView{baseline: t0}}, true},
		{"PassStuck", liveInput{now: t0.Add(12 * time.Minute), busy: true, busySince: t0, passTimeout: 10 * time.Minute,
			view: progressView{baseline: t0}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.sched = every
			got, why := evalLive(tt.in)
			if got != tt.want {
				t.Errorf("evalLive = %v (%s), want %v", got, why, tt.want)
			}
			if !got && why == "" {
				t.Error("no reason given for withholding the ping")
			}
		})
	}
}

// TestEvalHealth is /healthz's rule.
func TestEvalHealth(t *testing.T) {
	// Friday 2025-07-18 17:00 UTC: the last business-hours pass of the week.
	fri := time.Date(2025, 7, 18, 17, 0, 0, 0, time.UTC)
	business := mustSchedule(t, "0 9-17 * * 1-5")
	every := mustSchedule(t, "@every 1m")
	base := fri.Add(-24 * time.Hour)
	tests := []struct {
		name       string
		in         healthInput
		want       bool
		wantReason string
	}{
		{"RecentSuccess", healthInput{liveInput: liveInput{now: fri.Add(90 * time.Second), sched: every,
			view: progressView{baseline: base, lastTick: fri.Add(60 * time.Second), lastSuccess: fri.Add(60 * time.Second), leader: true}}}, true, "on schedule"},
		{"ThreeMissed", healthInput{liveInput: liveInput{now: fri.Add(4*time.Minute + time.Second), sched: every,
			view: progressView{baseline: base, lastTick: fri.Add(4 * time.Minute), lastSuccess: fri, leader: true, lastErr: errors.New("list pending requests: boom")}}}, false, "boom"},
		{"WeekendIsNotStale", healthInput{liveInput: liveInput{now: fri.Add(60 * time.Hour), sched: business,
			view: progressView{baseline: base, lastTick: fri, lastSuccess: fri, leader: true}}}, true, ""},
		{"MondayNoonIsStale", healthInput{liveInput: liveInput{now: fri.Add(67*time.Hour + 30*time.Minute), sched: business,
			view: progressView{baseline: base, lastTick: fri.Add(67 * time.Hour), lastSuccess: fri, leader: true}}}, false, "last successful pass"},
		{"StandbyNeverPasses", healthInput{liveInput: liveInput{now: fri.Add(time.Hour), sched: every,
			view: progressView{baseline: base, lastTick: fri.Add(time.Hour - 10*time.Second), standby: true}}}, true, "standby"},
		{"DatabaseDown", healthInput{liveInput: liveInput{now: fri.Add(10 * time.Second), sched: every,
			view: progressView{baseline: fri, lastTick: fri, lastSuccess: fri, leader: true}}, dbErr: errors.New("dial tcp: refused")}, false, "database"},
		{"StandbyDatabaseDown", healthInput{liveInput: liveInput{now: fri.Add(10 * time.Second), sched: every,
			view: progressView{baseline: fri, lastTick: fri, standby: true}}, dbErr: errors.New("dial tcp: refused")}, false, "database"},
		{"StartingNotOverdue", healthInput{liveInput: liveInput{now: fri.Add(30 * time.Second), sched: every,
			view: progressView{baseline: fri}}}, true, "not overdue"},
		{"MaxAgeExceeded", healthInput{liveInput: liveInput{now: fri.Add(10 * time.Second), sched: mustSchedule(t, "@every 1h"),
			view: progressView{baseline: base, lastTick: fri, lastSuccess: fri, leader: true}}, maxAge: 5 * time.Second}, false, "last successful pass"},
		{"RunningPassMayStillSucceed", healthInput{liveInput: liveInput{now: fri.Add(5 * time.Minute), sched: every,
			busy: true, busySince: fri.Add(2 * time.Minute), passTimeout: 10 * time.Minute,
			view: progressView{baseline: base, lastTick: fri, lastSuccess: fri, leader: true}}}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.in.passTimeout == 0 {
				tt.in.passTimeout = 10 * time.Minute
			}
			got, rep := evalHealth(tt.in)
			if got != tt.want {
				t.Errorf("evalHealth = %v %+v, want %v", got, rep, tt.want)
			}
			if wantStatus := map[bool]string{true: "ok", false: "unhealthy"}[tt.want]; rep.Status != wantStatus {
				t.Errorf("status %q, want %q", rep.Status, wantStatus)
			}
			if !strings.Contains(rep.Reason+" "+rep.Database, tt.wantReason) {
				t.Errorf("reason %q (database %q) does not contain %q", rep.Reason, rep.Database, tt.wantReason)
			}
		})
	}
}

// TestProgressTick records leadership, standby and success from ticks.
func TestProgressTick(t *testing.T) {
	var p Progress
	t0 := time.Now()
	p.Restart(t0)
	p.Tick(Tick{Leader: false}, t0.Add(time.Second))
	if v := p.viewOf(DefaultInsurer); !v.standby || v.leader || !v.lastSuccess.IsZero() {
		t.Errorf("after a standby tick: %+v", v)
	}
	p.Tick(Tick{Leader: true, Ran: true}, t0.Add(2*time.Second))
	if v := p.viewOf(DefaultInsurer); v.standby || !v.leader || !v.lastSuccess.Equal(t0.Add(2*time.Second)) {
		t.Errorf("after a successful pass: %+v", v)
	}
	p.Tick(Tick{Leader: true, Ran: true, Err: errors.New("x")}, t0.Add(3*time.Second))
	if v := p.viewOf(DefaultInsurer); !v.lastSuccess.Equal(t0.Add(2*time.Second)) || v.lastErr == nil {
		t.Errorf("after a failed pass: %+v", v)
	}
	p.Tick(Tick{Leader: false, Err: errors.New("lock: connection refused")}, t0.Add(4*time.Second))
	if v := p.viewOf(DefaultInsurer); v.standby {
		t.Errorf("a lock error counted as standby: %+v", v)
	}
}

// parseScheduleForTest parses a schedule as Validate would accept it.
func parseScheduleForTest(cfg Config) (Config, error) {
	if _, err := ParseSchedule(cfg.Schedule); err != nil {
		return Config{}, err
	}
	return cfg, nil
}
