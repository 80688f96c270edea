package sync

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		change  func(c *Config)
		wantErr string // "" means valid
	}{
		{"defaults", func(c *Config) {}, ""},
		{"zero value", func(c *Config) { *c = Config{} }, ""},
		{"five fields", func(c *Config) { c.Schedule = "*/5 * * * *" }, ""},
		{"bad schedule", func(c *Config) { c.Schedule = "every minute" }, "sync.schedule:"},
		{"six fields", func(c *Config) { c.Schedule = "0 */5 * * * *" }, "sync.schedule:"},
		{"never fires", func(c *Config) { c.Schedule = "0 0 30 2 *" }, "never fires"},
		{"zero interval", func(c *Config) { c.Schedule = "@every 0s" }, "at least 1s"},
		{"nanosecond interval", func(c *Config) { c.Schedule = "@every 1ns" }, "at least 1s"},
		{"negative interval", func(c *Config) { c.Schedule = "@every -5s" }, "at least 1s"},
		{"zone prefix hides zero interval", func(c *Config) { c.Schedule = "CRON_TZ=UTC @every 0s" }, "at least 1s"},
		{"zone prefix alone", func(c *Config) { c.Schedule = "TZ=" }, "sync.schedule:"},
		{"zone prefix never fires", func(c *Config) { c.Schedule = "TZ=Europe/London 0 0 31 4 *" }, "never fires"},
		{"fraction of a second", func(c *Config) { c.Schedule = "@every 1500ms" }, "whole number of seconds"},
		{"zone prefix", func(c *Config) { c.Schedule = "TZ=Europe/London @every 90s" }, ""},
		{"one second", func(c *Config) { c.Schedule = "@every 1s" }, ""},
		{"hourly", func(c *Config) { c.Schedule = "@hourly" }, ""},
		{"concurrency", func(c *Config) { c.Concurrency = -1 }, "sync.concurrency:"},
		{"concurrency too high", func(c *Config) { c.Concurrency = 1000 }, "sync.concurrency:"},
		{"pass timeout", func(c *Config) { c.PassTimeout = time.Millisecond }, "sync.pass_timeout:"},
		{"backoff order", func(c *Config) { c.RetryBackoffMin, c.RetryBackoffMax = time.Hour, time.Minute }, "sync.retry_backoff_max:"},
		{"negative rate", func(c *Config) { c.Quote.Rates = map[string]decimal.Decimal{"Parts": dec("-1")} }, "quote.rates.Parts:"},
		{"empty rate type", func(c *Config) { c.Quote.Rates = map[string]decimal.Decimal{"": dec("1")} }, "quote.rates:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.change(&c)
			err := c.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("Validate() = nil, want an error about %s", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("Validate() = %v, want it to name %s", err, tt.wantErr)
			}
		})
	}
}

func TestWithDefaults(t *testing.T) {
	got := Config{Concurrency: 9}.withDefaults()
	if got.Concurrency != 9 || got.Schedule != DefaultSchedule || got.Quote.Type != DefaultQuoteType || got.Location == nil {
		t.Errorf("withDefaults() = %+v", got)
	}
}

func TestNextRuns(t *testing.T) {
	c := DefaultConfig()
	c.Schedule, c.Location = "30 9 * * 1-5", time.UTC
	from := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC) // a Friday, after 09:30
	got := c.NextRuns(from, 3)
	want := []time.Time{
		time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC),
		time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC),
		time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC),
	}
	if len(got) != len(want) {
		t.Fatalf("NextRuns = %v, want %v", got, want)
	}
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Errorf("run %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestScheduleItem(t *testing.T) {
	c := DefaultConfig()
	c.Schedule, c.Location = "30 9 * * 1-5", time.UTC
	it := ScheduleItem(c, time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)) // a Friday, after 09:30
	want := `"30 9 * * 1-5" in time zone UTC: next passes Mon 2026-11-30 09:30:00 UTC, Tue 2026-12-01 09:30:00 UTC, Wed 2026-12-02 09:30:00 UTC (and one at start)`
	if it.Status != CheckOK || it.Name != "sync.schedule" || it.Detail != want {
		t.Errorf("ScheduleItem = %+v, want ok sync.schedule %s", it, want)
	}
}
