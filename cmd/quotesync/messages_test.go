package main

// Messages the real binary prints: counts in words, no empty lists.

import (
	"strings"
	"testing"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// TestPlanCountsItems: a dry run's plan says "push draft (1 item)" for a
// job of one line, not "1 items".
func TestPlanCountsItems(t *testing.T) {
	t.Parallel()
	e := newE2E(t, e2eOptions{})
	e.seed(sampleshop.ClaimNoLines, "")
	e.mustOnce() // accepted; nothing to push yet
	e.addLine(sampleshop.JobNoLines, 1)
	res := e.once("--dry-run")
	if res.Code != exitOK {
		t.Fatalf("once --dry-run: exit %d\n%s", res.Code, res.Output)
	}
	if !strings.Contains(res.Output, "push draft (1 item) ") || strings.Contains(res.Output, "1 items") {
		t.Errorf("the plan does not say \"push draft (1 item)\":\n%s", res.Output)
	}
}

// TestCheckWorkTypesNoLines: when the only job check can look at has no
// lines yet, the work types line says so instead of an empty "codes
// seen:".
func TestCheckWorkTypesNoLines(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, nil)
	e.Emu.AddRequests(emulator.SeedRequest{ClaimNumber: sampleshop.ClaimNoLines})
	r := e.run("check", "--config", e.Conf)
	if r.Code != exitOK {
		t.Fatalf("check: %s", r)
	}
	l := checkLine(r.Stdout, "work types")
	if strings.HasSuffix(strings.TrimSpace(l), "codes seen:") || !strings.Contains(l, "no lines yet on 1 job (0 tracked, 1 found for pending requests)") {
		t.Errorf("work types line %q, want it to say the job has no lines yet", l)
	}
}

// TestStatusShowsRetryError: a request the daemon tries again on its own
// is shown with the whole error of its last attempt and when the next is
// due; before, status showed only the reason "retrying", and the details
// of a needs-person request only.
func TestStatusShowsRetryError(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, nil)
	e.Emu.AddRequests(emulator.SeedRequest{ClaimNumber: sampleshop.ClaimDraft})
	e.Emu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultStatus, Status: 503})
	if r := e.run("once", "--config", e.Conf); r.Code != exitOK {
		t.Fatalf("once: %s", r)
	}
	r := e.run("status", "--config", e.Conf)
	if r.Code != exitOK {
		t.Fatalf("status: %s", r)
	}
	for _, want := range []string{"tried again on its own", "(job " + sampleshop.JobDraft + ", reserved): a remote call failed for now; next attempt in ", "last error: ", "503"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, r.Stdout)
		}
	}
}
