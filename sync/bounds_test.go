package sync_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/shopdb/sampleshop"
	qsync "github.com/quotesync/quotesync/sync"
)

// A line whose price no repair estimate has holds its job, with the line,
// the column and the bound named, while the other jobs are pushed; the job
// is pushed once the bound is raised (a configuration change lifts it).
func TestOutOfBoundsHeld(t *testing.T) {
	r := newRig(t, rigOptions{})
	ids := r.seed(sampleshop.ClaimNoLines, sampleshop.ClaimDraft)
	r.pass()
	l, err := r.shop.AddLine(r.ctx, sampleshop.JobNoLines, sampleshop.Line{Code: "PART", Description: "Gold bumper", Qty: d("1"), UnitPrice: price("20000000")})
	if err != nil {
		t.Fatal(err)
	}
	before := r.emu.Calls()
	r.pass()
	row := r.row(ids[0])
	if row.Reason != qsync.ReasonOutOfBounds || !strings.Contains(row.LastError, fmt.Sprintf("line_id %d", l.LineID)) ||
		!strings.Contains(row.LastError, "column price is 20000000") || !strings.Contains(row.LastError, "shop.limits.max_price") {
		t.Fatalf("row of %s: %s (%s) %q; want held out_of_bounds naming the line, the price and shop.limits.max_price",
			sampleshop.JobNoLines, row.Phase, row.Reason, row.LastError)
	}
	if w := r.writes(before); len(w) != 0 {
		t.Fatalf("a job with an implausible price was pushed: %v", w)
	}
	if got := r.row(ids[1]).Phase; got != qsync.PhaseDrafted {
		t.Errorf("the other job is %s, want drafted", got)
	}
	r.restart(func(s *qsync.Settings) { s.Shop.Limits.MaxPrice = decimal.NewFromInt(50_000_000) })
	if s := r.pass(); s.Drafted != 1 {
		t.Fatalf("pass with the bound raised: %+v, want the held job pushed", s)
	}
	if row := r.row(ids[0]); row.Phase != qsync.PhaseDrafted || row.Reason != qsync.ReasonNone {
		t.Errorf("after the bound was raised: %s (%s) %q", row.Phase, row.Reason, row.LastError)
	}
}
