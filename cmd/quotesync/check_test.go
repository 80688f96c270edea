package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// checkLine finds the line of one check in check's output.
func checkLine(out, name string) string {
	re := regexp.MustCompile(`(?m)^(ok|FAIL|warn|skip)\s+` + regexp.QuoteMeta(name) + `\s{2}.*$`)
	return re.FindString(out)
}

// TestCheckBinary runs `quotesync check` on the example config against
// MariaDB and the emulator: green on a good setup, and red (exit 1, the
// failing item named, the secrets never printed) for a refused token, a
// refused database login and an unmapped work type in the shop.
func TestCheckBinary(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, nil)
	e.Emu.AddRequests(emulator.SeedRequest{ClaimNumber: sampleshop.ClaimDraft})
	e.DB.Open(t, e.DB.Config()) // quotesync's tables exist, as after the first start

	t.Run("Green", func(t *testing.T) {
		r := e.run("check", "--config", e.Conf)
		if r.Code != exitOK {
			t.Fatalf("check on a good setup: %s", r)
		}
		for _, name := range []string{"config file", "secrets", "database", "state schema", "shop.queries.line_items", "remote", "work types"} {
			if l := checkLine(r.Stdout, name); !strings.HasPrefix(l, "ok") {
				t.Errorf("line %q = %q, want ok\n%s", name, l, r.Stdout)
			}
		}
		if l := checkLine(r.Stdout, "work types"); !strings.Contains(l, "1 job ") || !strings.Contains(l, "R&R") {
			t.Errorf("work types line %q, want the codes of job %s", l, sampleshop.JobDraft)
		}
		if !strings.Contains(r.Stdout, "verdict: OK: all") {
			t.Errorf("no OK verdict:\n%s", r.Stdout)
		}
	})

	t.Run("BadToken", func(t *testing.T) {
		e.writeSecret("token", "tok-SECRET-stale-0000")
		defer e.writeSecret("token", cliToken)
		r := e.run("check", "--config", e.Conf)
		if r.Code != exitFailure {
			t.Fatalf("exit %d, want 1: %s", r.Code, r)
		}
		l := checkLine(r.Stdout, "remote")
		if !strings.HasPrefix(l, "FAIL") || !strings.Contains(r.Stdout, "refused the token") || !strings.Contains(r.Stdout, "401") {
			t.Errorf("remote line %q; output:\n%s", l, r.Stdout)
		}
		if !strings.Contains(r.Stdout, "verdict: FAIL: 1 of") || strings.Contains(r.Stdout, "tok-SECRET-stale-0000") {
			t.Errorf("verdict or secret:\n%s", r.Stdout)
		}
	})

	t.Run("DatabaseLoginRefused", func(t *testing.T) {
		const wrong = "pw-SECRET-wrong-b81d2e"
		e.writeSecret("db-password", wrong)
		defer e.writeSecret("db-password", e.DB.Config().Password)
		r := e.run("check", "--config", e.Conf)
		if r.Code != exitFailure {
			t.Fatalf("exit %d, want 1: %s", r.Code, r)
		}
		if l := checkLine(r.Stdout, "database"); !strings.HasPrefix(l, "FAIL") || !strings.Contains(l, "Access denied") {
			t.Errorf("database line %q; output:\n%s", l, r.Stdout)
		}
		if !strings.Contains(r.Stdout, "check shop.user") || strings.Contains(r.Stdout+r.Stderr, wrong) {
			t.Errorf("hint missing or password shown:\n%s", r.Stdout)
		}
		if l := checkLine(r.Stdout, "work types"); !strings.HasPrefix(l, "skip") {
			t.Errorf("work types line %q, want skip", l)
		}
	})

	t.Run("UnmappedWorkType", func(t *testing.T) {
		// The shop starts using a code the mapping does not know, on the
		// job of a pending request.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		shop := e.DB.Shop()
		if _, err := shop.AddLine(ctx, sampleshop.JobNoLines, sampleshop.Line{Code: "GLASS", Description: "Windscreen",
			Qty: decimal.NewFromInt(1), UnitPrice: decimal.NewNullDecimal(decimal.RequireFromString("380.00"))}); err != nil {
			t.Fatal(err)
		}
		e.Emu.AddRequests(emulator.SeedRequest{ClaimNumber: sampleshop.ClaimNoLines})
		r := e.run("check", "--config", e.Conf)
		if r.Code != exitFailure {
			t.Fatalf("exit %d, want 1: %s", r.Code, r)
		}
		l := checkLine(r.Stdout, "work types")
		if !strings.HasPrefix(l, "FAIL") || !strings.Contains(r.Stdout, `"GLASS"`) || !strings.Contains(r.Stdout, sampleshop.JobNoLines) {
			t.Errorf("work types line %q; output:\n%s", l, r.Stdout)
		}
		if !strings.Contains(r.Stdout, `under shop.work_types add "GLASS": `) {
			t.Errorf("no fix given:\n%s", r.Stdout)
		}
	})
}
