package main

import (
	"io"
	"slices"
	"time"

	"github.com/quotesync/quotesync/cmd/internal/statuspage"
	"github.com/quotesync/quotesync/shopdb/store"
	qsync "github.com/quotesync/quotesync/sync"
)

// statusReport is what status shows.
type statusReport struct {
	rows   []store.Request // newest first, at most --limit of them
	total  int             // the requests selected, however many are shown
	counts map[store.Phase]int
	// insurers are the configured insurers, in order, then the others
	// with requests selected, by name; byInsurer counts each one's
	// requests by phase.
	insurers   []string
	byInsurer  map[string]map[store.Phase]int
	configured []string
	all        bool   // --all: submitted and gone requests too
	insurer    string // --insurer: that insurer's requests only
	// named: the requests name their insurer (statuspage.NameInsurers:
	// several configured, or a request of another insurer than the lone
	// configured one).
	named bool
}

// newStatusReport counts rows (selected with --all and --insurer) and
// keeps the newest limit of them (0: all).
func newStatusReport(rows []store.Request, configured []string, insurer string, all bool, limit int) statusReport {
	rep := statusReport{total: len(rows), counts: map[store.Phase]int{}, byInsurer: map[string]map[store.Phase]int{},
		configured: configured, all: all, insurer: insurer, insurers: slices.Clone(configured)}
	if insurer != "" {
		rep.insurers = []string{insurer}
	}
	var others []string
	for _, r := range rows {
		rep.counts[r.Phase]++
		if !slices.Contains(rep.insurers, r.Insurer) && !slices.Contains(others, r.Insurer) {
			others = append(others, r.Insurer)
		}
		if rep.byInsurer[r.Insurer] == nil {
			rep.byInsurer[r.Insurer] = map[store.Phase]int{}
		}
		rep.byInsurer[r.Insurer][r.Phase]++
	}
	slices.Sort(others)
	rep.insurers = append(rep.insurers, others...)
	rep.named = statuspage.NameInsurers(configured, rep.insurers...)
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	rep.rows = rows
	return rep
}

// unconfigured is " (not configured)" for an insurer the configuration
// does not have, else "".
func (rep statusReport) unconfigured(name string) string {
	switch {
	case name == "":
		return " (written before insurers had names: 'quotesync insurers adopt NAME' gives them to one)"
	case slices.Contains(rep.configured, name):
		return ""
	}
	return " (not configured)"
}

// statusRow is one request in status --json.
type statusRow struct {
	Insurer          string    `json:"insurer"`
	Request          string    `json:"request"`
	Claim            string    `json:"claim"`
	Job              string    `json:"job"`
	ReleasedJob      string    `json:"released_job,omitempty"`
	Phase            string    `json:"phase"`
	ResumePhase      string    `json:"resume_phase,omitempty"`
	Reason           string    `json:"reason,omitempty"`
	ReasonWords      string    `json:"reason_words,omitempty"`
	Fix              string    `json:"fix,omitempty"`
	Held             bool      `json:"held"`
	NeedsPerson      bool      `json:"needs_person"`
	Intent           string    `json:"intent,omitempty"`
	SupplementNeeded bool      `json:"supplement_needed"`
	Attempts         int       `json:"attempts"`
	NextAttemptAt    time.Time `json:"next_attempt_at,omitzero"`
	LastError        string    `json:"last_error"`
	Expiry           time.Time `json:"expiry,omitzero"`
	CreatedAt        time.Time `json:"created_at,omitzero"`
	UpdatedAt        time.Time `json:"updated_at,omitzero"`
	PushedAt         time.Time `json:"pushed_at,omitzero"`
	SubmittedAt      time.Time `json:"submitted_at,omitzero"`
}

// statusDoc is the document status --json prints.
type statusDoc struct {
	Requests     []statusRow    `json:"requests"`
	Counts       map[string]int `json:"counts"`
	Total        int            `json:"total"`
	StatusChange string         `json:"status_change"`
	// Insurers counts each insurer's requests: every configured one, and
	// any other with requests shown.
	Insurers map[string]insurerCounts `json:"insurers"`
}

// insurerCounts is one insurer's part of status --json.
type insurerCounts struct {
	Total      int            `json:"total"`
	Counts     map[string]int `json:"counts"`
	Configured bool           `json:"configured"`
}

// phaseCounts is counts keyed by the phases' names.
func phaseCounts(counts map[store.Phase]int) (map[string]int, int) {
	out, total := make(map[string]int, len(counts)), 0
	for ph, n := range counts {
		out[string(ph)] = n
		total += n
	}
	return out, total
}

func writeStatusJSON(w io.Writer, rep statusReport, form string) int {
	doc := statusDoc{Requests: make([]statusRow, 0, len(rep.rows)), Total: rep.total, StatusChange: form,
		Insurers: make(map[string]insurerCounts, len(rep.insurers))}
	doc.Counts, _ = phaseCounts(rep.counts)
	for _, name := range rep.insurers {
		ic := insurerCounts{Configured: slices.Contains(rep.configured, name)}
		ic.Counts, ic.Total = phaseCounts(rep.byInsurer[name])
		doc.Insurers[name] = ic
	}
	for _, r := range rep.rows {
		q := statuspage.RequestOf(r, rep.named)
		row := statusRow{
			Insurer: r.Insurer, Request: r.RequestID, Claim: r.ClaimNumber, Job: r.JobNumber, ReleasedJob: r.ReleasedJob, Phase: string(r.Phase),
			ResumePhase: string(r.ResumePhase), Reason: string(r.Reason), Held: q.Held, NeedsPerson: q.NeedsPerson,
			Intent: string(r.Intent), SupplementNeeded: r.SupplementNeeded, Attempts: r.Attempts,
			NextAttemptAt: r.NextAttemptAt.UTC(), LastError: r.LastError, Expiry: r.Expiry.UTC(),
			CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), PushedAt: r.PushedAt.UTC(),
			SubmittedAt: r.SubmittedAt.UTC(),
		}
		if r.Reason != qsync.ReasonNone { // not a supplement's words
			row.ReasonWords, row.Fix = q.ReasonWords, q.Fix
		}
		doc.Requests = append(doc.Requests, row)
	}
	if err := writeJSON(w, doc); err != nil {
		return exitFailure
	}
	return exitOK
}
