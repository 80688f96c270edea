package sync_test

import (
	"fmt"
	"testing"

	"github.com/quotesync/quotesync/shopdb/sampleshop"

	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// TestCacheKeepsWhatAReadGives: with shop_changed, after every pass the
// rows and estimate states the engine keeps for the next (packed) are
// those reading them again gives: after passes that wrote, idle passes
// that used the cache, and a change in the shop that did not change
// quotesync's state.
func TestCacheKeepsWhatAReadGives(t *testing.T) {
	r := newRig(t, rigOptions{})
	// check compares what the next pass would use (want: "rows",
	// "states") with a read.
	check := func(step string, want ...string) {
		t.Helper()
		diff, used, err := r.engine.CacheDiff(r.ctx)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if diff != "" {
			t.Fatalf("%s: the cache differs from a read:\n%s", step, diff)
		}
		if fmt.Sprint(used) != fmt.Sprint(want) {
			t.Fatalf("%s: the next pass would use %v of the cache, want %v", step, used, want)
		}
	}
	r.seed(sampleshop.ClaimDraft, sampleshop.ClaimFinal, sampleshop.ClaimNoLines, sampleshop.ClaimBadLine, "CLM-2001")
	r.pass()
	check("after accepting and drafting") // the state changed: nothing to use
	r.pass()
	check("after the first idle pass", "rows", "states")
	trips := shopdbtest.RoundTrips(r.db)
	r.pass()
	if got := shopdbtest.RoundTrips(r.db) - trips; got != 1 {
		t.Fatalf("idle pass cost %d round trips, want 1 (the cache)", got)
	}
	check("after an idle pass on the cache", "rows", "states")

	// A line of a tracked job changes: re-drafted, then idle again.
	lines, err := r.shop.Lines(r.ctx, sampleshop.JobDraft)
	if err != nil {
		t.Fatal(err)
	}
	l := lines[0]
	l.Description += " (changed)"
	if err := r.shop.EditLine(r.ctx, l); err != nil {
		t.Fatal(err)
	}
	if s := r.pass(); s.Redrafted != 1 {
		t.Fatalf("after an edit: %+v, want 1 re-draft", s)
	}
	check("after a re-draft")
	r.pass()
	check("idle after the re-draft", "rows", "states")

	// The shop changes where quotesync tracks nothing: the rows come from
	// the cache, the states are read again.
	if _, err := r.shop.AddLine(r.ctx, sampleshop.JobWalkIn, sampleshop.Line{Code: "RPR", Description: "Walk-in repair",
		Qty: d("1"), UnitPrice: price("10.0000")}); err != nil {
		t.Fatal(err)
	}
	trips = shopdbtest.RoundTrips(r.db)
	if s := r.pass(); s.Changed() {
		t.Fatalf("a change to an untracked job changed state: %+v", s)
	}
	if got := shopdbtest.RoundTrips(r.db) - trips; got != 2 {
		t.Errorf("pass after a change in the shop cost %d round trips, want 2 (what changed, the states)", got)
	}
	check("after a change in the shop only", "rows", "states")
	r.pass()
	check("idle after it", "rows", "states")
}
