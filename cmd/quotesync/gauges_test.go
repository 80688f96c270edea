package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// scrape parses Prometheus text output into series ("name{labels}") and
// their values, and the set of metric names.
func scrape(t *testing.T, body string) (series map[string]float64, names map[string]bool) {
	t.Helper()
	series, names = map[string]float64{}, map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if i < 0 || err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		series[line[:i]] = v
		name, _, _ := strings.Cut(line[:i], "{")
		names[name] = true
	}
	return series, names
}

// TestPhaseGaugesEveryState puts requests into every state an operator
// alerts on, scrapes /metrics and finds each state's count; then checks
// the table of states and the example alert rules of docs/metrics.md against the
// same scrape: every series they name is served, every phase they name
// exists.
func TestPhaseGaugesEveryState(t *testing.T) {
	db, _ := shopdbtest.New(t)
	st := store.New(db)
	ctx := context.Background()
	rows := []store.Request{
		{Phase: qsync.PhaseWaiting, Reason: qsync.ReasonNoJob},
		{Phase: qsync.PhaseReserved},
		{Phase: qsync.PhaseAcceptUnknown, Reason: qsync.ReasonAcceptLost},
		{Phase: qsync.PhaseAccepted},
		{Phase: qsync.PhaseAccepted, Reason: qsync.ReasonShopData},
		{Phase: qsync.PhaseDrafted},
		{Phase: qsync.PhaseDrafted},
		{Phase: qsync.PhaseDrafted, Reason: qsync.ReasonUnmappedCode},
		{Phase: qsync.PhaseSubmitted},
		{Phase: qsync.PhaseSubmitted, SupplementNeeded: true},
		{Phase: qsync.PhaseRejected, Reason: qsync.ReasonRefused},
		{Phase: qsync.PhaseTakenElsewhere, Reason: qsync.ReasonOtherReference},
		{Phase: qsync.PhaseGone, Reason: qsync.ReasonExpired},
	}
	for i, row := range rows {
		row.RequestID = fmt.Sprint("s", i)
		if _, err := st.Insert(ctx, row, store.Event{}); err != nil {
			t.Fatal(err)
		}
	}
	m := newPromMetrics()
	m.state.use(st, []string{qsync.DefaultInsurer})
	m.insurers([]string{qsync.DefaultInsurer})
	series, names := scrape(t, getMetrics(t, m))
	phase := func(p string) float64 { return series[`quotesync_requests{insurer="default",phase="`+p+`"}`] }
	for _, tt := range []struct {
		state string
		got   float64
		want  float64
	}{
		{"pending (waiting, reserved, accept_unknown)", phase("waiting") + phase("reserved") + phase("accept_unknown"), 3},
		{"accepted", phase("accepted"), 2},
		{"drafting", phase("drafted"), 3},
		{"submitted", phase("submitted"), 2},
		{"held", series[`quotesync_requests_held{insurer="default"}`], 2},
		{"rejected", phase("rejected"), 1},
		{"taken elsewhere", phase("taken_elsewhere"), 1},
		{"supplement needed", series[`quotesync_requests_supplement_needed{insurer="default"}`], 1},
		{"gone", phase("gone"), 1},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: %v in /metrics, want %v", tt.state, tt.got, tt.want)
		}
	}
	for _, p := range qsync.Phases() {
		if _, ok := series[`quotesync_requests{insurer="default",phase="`+string(p.Phase)+`"}`]; !ok {
			t.Errorf("phase %s is not exported", p.Phase)
		}
	}

	page, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	rules := pageAlertRules(t, string(page))
	if len(rules) < 3 {
		t.Fatalf("docs/metrics.md has %d example alert rules, want the held, needs-a-person and supplement ones at least", len(rules))
	}
	var exprs []string
	for _, r := range rules {
		exprs = append(exprs, r.Expr)
		if r.Alert == "" || r.Expr == "" {
			t.Errorf("alert rule %+v lacks a name or an expression", r)
		}
	}
	held := false
	for _, r := range rules {
		held = held || (strings.Contains(r.Expr, "quotesync_requests_held > 0") && r.For == "1h")
	}
	if !held {
		t.Error(`docs/metrics.md's alert rules have no "held > 0 for an hour" rule`)
	}
	tableStart := strings.Index(string(page), "| state | series |")
	if tableStart < 0 {
		t.Fatal("docs/metrics.md has no table of states and series")
	}
	table, _, _ := strings.Cut(string(page)[tableStart:], "\n\n")
	checkNamedSeries(t, append(exprs, strings.ReplaceAll(table, `\|`, "|")), names)
}

// alertRule is one rule of a Prometheus rule file.
type alertRule struct {
	Alert string `yaml:"alert"`
	Expr  string `yaml:"expr"`
	For   string `yaml:"for"`
}

// pageAlertRules parses a page's example rule file (the yaml block that
// holds "groups:").
func pageAlertRules(t *testing.T, page string) []alertRule {
	t.Helper()
	for _, block := range strings.Split(page, "```yaml\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if !strings.HasPrefix(block, "groups:") {
			continue
		}
		var f struct {
			Groups []struct {
				Rules []alertRule `yaml:"rules"`
			} `yaml:"groups"`
		}
		if err := yaml.Unmarshal([]byte(block), &f); err != nil {
			t.Fatalf("the example alert rules: %v", err)
		}
		var out []alertRule
		for _, g := range f.Groups {
			out = append(out, g.Rules...)
		}
		return out
	}
	t.Fatal("no example alert rules (a yaml block starting with groups:)")
	return nil
}

var (
	metricName = regexp.MustCompile(`\bquotesync_[a-z_]+\b`)
	phaseMatch = regexp.MustCompile(`phase=~?"([^"]+)"`)
)

// checkNamedSeries checks that every quotesync metric the texts name is
// served, and every phase they match on exists.
func checkNamedSeries(t *testing.T, texts []string, names map[string]bool) {
	t.Helper()
	phases := map[string]bool{}
	for _, p := range qsync.Phases() {
		phases[string(p.Phase)] = true
	}
	for _, text := range texts {
		for _, n := range metricName.FindAllString(text, -1) {
			if !names[n] {
				t.Errorf("%q names %s, which /metrics does not serve", text, n)
			}
		}
		for _, m := range phaseMatch.FindAllStringSubmatch(text, -1) {
			for _, p := range strings.Split(m[1], "|") {
				if !phases[p] {
					t.Errorf("%q matches phase %q, which is not a phase", text, p)
				}
			}
		}
	}
}
