package sync

import (
	"context"
	"errors"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
)

// Preview is the quote of one shop job exactly as a pass would build it
// from the database now, and what a pass would do with it.
type Preview struct {
	Job string
	// Quote is what a Draft push would send (its items are Lines, in
	// order), and Hash its canonical hash, as a pass compares it.
	Quote remote.Quote
	Hash  string
	// Lines are the valid shop rows, each the source of the item at the
	// same index.
	Lines []shopdb.Line
	// Held are the rows that hold the job back, each with its reason and
	// fix: while there is one, a pass pushes nothing for the job.
	Held []*shopdb.RowError
	// FieldsErr is what is wrong with the job's quote_fields row, when
	// something is (it holds the job too).
	FieldsErr error
	// State is the job's estimate_state row; StateErr what is wrong with
	// it; NoState that the query returned no row for the job.
	State    shopdb.JobState
	StateErr error
	NoState  bool
	// Total sums the items' totals; ByType sums them per work type.
	Total  decimal.Decimal
	ByType map[string]decimal.Decimal
	// Request is the request quotesync tracks for this job ("" when
	// none, or when its tables do not exist yet), of Insurer, and Pushed
	// whether the remote already holds exactly this quote.
	Insurer string
	Request string
	Phase   store.Phase
	Pushed  bool
}

// ErrWhichInsurer: no request holds the job, several insurers are
// configured and none was named: the quote depends on whose pass builds
// it (quote_fields may use :insurer, an insurer may map its own work
// types).
var ErrWhichInsurer = errors.New("no request holds it, and several insurers are configured, each pass building its own quote")

// ErrNoSuchJob: the shop's queries return nothing for the job.
var ErrNoSuchJob = errors.New("the shop's queries return no lines and no estimate state for this job")

// PreviewJob reads one job's lines, estimate state and quote fields (its
// Lines, JobStates and QuoteFields) and the request that holds it
// (holders' JobHolder), and builds its quote with the pass's own builder
// and hash (cfg's quote settings). It calls nothing remote and writes
// nothing.
func PreviewJob(ctx context.Context, shop Shop, holders Store, cfg Config, job string) (Preview, error) {
	cfg = cfg.withDefaults()
	pv := Preview{Job: job, ByType: map[string]decimal.Decimal{}}
	lines, err := shop.Lines(ctx, []string{job})
	if err != nil {
		return pv, fmt.Errorf("read the lines of job %s: %w", job, err)
	}
	pv.Lines, pv.Held = lines[job].Lines, lines[job].Bad
	states, badStates, err := shop.JobStates(ctx, []string{job})
	if err != nil {
		return pv, fmt.Errorf("read the estimate state of job %s: %w", job, err)
	}
	st, ok := states[job]
	switch {
	case ok:
		pv.State = st
	case badStates[job] != nil:
		pv.StateErr = badStates[job]
	default:
		pv.NoState = true
	}
	fields, badFields, err := shop.QuoteFields(ctx, []string{job})
	if err != nil {
		return pv, fmt.Errorf("read the quote fields of job %s: %w", job, err)
	}
	pv.FieldsErr = badFields[job]
	if pv.NoState && len(pv.Lines) == 0 && len(pv.Held) == 0 {
		return pv, fmt.Errorf("job %s: %w: check the job number (as find_job returns it)", job, ErrNoSuchJob)
	}
	pv.Quote = buildQuote(cfg.Quote, job, pv.Lines, fields[job])
	pv.Hash = hashQuote(pv.Quote)
	for _, it := range pv.Quote.Items {
		pv.Total = pv.Total.Add(it.Total)
		pv.ByType[it.Type] = pv.ByType[it.Type].Add(it.Total)
	}
	if r, err := holders.JobHolder(ctx, job); err == nil && r.RequestID != "" {
		pv.Insurer, pv.Request, pv.Phase = r.Insurer, r.RequestID, r.Phase
		pv.Pushed = r.PushedHash != "" && r.PushedHash == pv.Hash
	}
	return pv, nil
}

// Pushable says whether a pass would push the quote (given the request is
// accepted): nothing holds it, estimate_state has a row for the job (a
// pass pushes no job without one) and it has items.
func (pv Preview) Pushable() bool {
	return len(pv.Held) == 0 && pv.FieldsErr == nil && pv.StateErr == nil && !pv.NoState && len(pv.Quote.Items) > 0
}
