package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/cmd/internal/config"
	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// insurerRowRE matches one row of the status table with its INSURER
// column: insurer, request, claim, job, phase.
var insurerRowRE = regexp.MustCompile(`(?m)^(\S+) +(\S+) +(\S+) +(\S+) +(\S+)(?: |$)`)

// statusByInsurer reads insurer → "request claim job phase" from the
// status table.
func statusByInsurer(out string) map[string]string {
	m := map[string]string{}
	table, _, _ := strings.Cut(out, "\n\n")
	for _, g := range insurerRowRE.FindAllStringSubmatch(table, -1) {
		if g[1] != "INSURER" {
			m[g[1]] = strings.Join(g[2:], " ")
		}
	}
	return m
}

// TestE2EInsurersShown drives the real binary with two insurers, each an
// emulator over real HTTP, both sending request 7301 (aa's drafted, bb's
// refused): status shows both with an INSURER column and counts each
// insurer, --insurer keeps one; history refuses the ambiguous id, listing
// both, and shows each with --insurer; the daemon's status page lists
// both, filters by insurer and serves each request's page.
func TestE2EInsurersShown(t *testing.T) {
	bbEmu, bbSrv := mustEmulator(t, emulator.Options{Token: bbToken, Seed: 7})
	e := newCLIEnv(t, func(fc *config.File) {
		twoInsurers(bbSrv.URL)(fc)
		fc.Metrics.Listen = "127.0.0.1:0"
	})
	e.writeSecret("bb-token", bbToken)
	e.Emu.AddRequests(emulator.SeedRequest{ID: "7301", ClaimNumber: sampleshop.ClaimDraft})
	bbEmu.AddRequests(emulator.SeedRequest{ID: "7301", ClaimNumber: "CLM-BB-1"})
	bbEmu.AddFault(emulator.Fault{Route: emulator.RouteAccept, Action: emulator.FaultStatus, Status: 422, Count: 1})
	if r := e.run("once", "--config", e.Conf); r.Code != exitOK {
		t.Fatalf("once: %s", r)
	}

	t.Run("Status", func(t *testing.T) {
		r := e.run("status", "--config", e.Conf)
		t.Logf("quotesync status:\n%s", r.Stdout)
		got := statusByInsurer(r.Stdout)
		if r.Code != exitOK || !strings.HasPrefix(r.Stdout, "INSURER  REQUEST") || len(got) != 2 ||
			got["aa"] != "7301 "+sampleshop.ClaimDraft+" "+sampleshop.JobDraft+" drafted" || !strings.HasPrefix(got["bb"], "7301 CLM-BB-1 ") ||
			!strings.HasSuffix(got["bb"], " rejected") {
			t.Fatalf("status: want 7301 of aa (drafted) and of bb (rejected), each named: %v\n%s", got, r)
		}
		for _, want := range []string{"  7301 (insurer bb, job ", "what to do: fix what the error says, then `quotesync retry --insurer bb 7301`",
			"2 requests in progress or needing attention: 1 drafted, 1 rejected\n  aa: 1 drafted\n  bb: 1 rejected\n", "status change: aa: "} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("status lacks %q:\n%s", want, r.Stdout)
			}
		}

		r = e.run("status", "--config", e.Conf, "--insurer", "bb")
		got = statusByInsurer(r.Stdout)
		if r.Code != exitOK || len(got) != 1 || got["bb"] == "" || !strings.Contains(r.Stdout, "1 request in progress or needing attention: 1 rejected\n") {
			t.Errorf("status --insurer bb: want bb's 7301 alone: %v\n%s", got, r)
		}
		r = e.run("status", "--config", e.Conf, "--insurer", "zz")
		if r.Code != exitOK || !strings.Contains(r.Stdout, "no requests of insurer zz in progress or needing attention (not configured)") {
			t.Errorf("status --insurer zz:\n%s", r)
		}
		if r := e.run("status", "--config", e.Conf, "--insurer", "no such"); r.Code != exitUsage || !strings.Contains(r.Stderr, "not an insurer name") {
			t.Errorf("status --insurer 'no such':\n%s", r)
		}

		r = e.run("status", "--config", e.Conf, "--json")
		var doc statusDoc
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != exitOK {
			t.Fatalf("status --json: %v\n%s", err, r)
		}
		ins := map[string]string{}
		for _, row := range doc.Requests {
			ins[row.Insurer] = row.Request + " " + row.Phase
			if row.Insurer == "bb" && !strings.Contains(row.Fix, "--insurer bb 7301") {
				t.Errorf("bb's fix in --json: %q", row.Fix)
			}
		}
		if ins["aa"] != "7301 drafted" || ins["bb"] != "7301 rejected" || doc.Insurers["aa"].Counts["drafted"] != 1 ||
			doc.Insurers["bb"].Total != 1 || !doc.Insurers["bb"].Configured {
			t.Errorf("status --json: rows %v, insurers %+v", ins, doc.Insurers)
		}
	})

	t.Run("History", func(t *testing.T) {
		r := e.run("history", "--config", e.Conf, "7301")
		t.Logf("quotesync history 7301:\n%s%s", r.Stdout, r.Stderr)
		got := statusByInsurer(r.Stdout)
		if r.Code != exitFailure || !strings.HasPrefix(r.Stdout, "request 7301 is tracked for 2 insurers:\nINSURER  REQUEST") ||
			got["aa"] != "7301 "+sampleshop.ClaimDraft+" "+sampleshop.JobDraft+" drafted" || !strings.HasPrefix(got["bb"], "7301 CLM-BB-1 ") ||
			!strings.Contains(r.Stderr, "request 7301 is tracked for several insurers (aa, bb): pass --insurer NAME") {
			t.Errorf("history of the ambiguous 7301: want the two listed, exit 1: %v\n%s", got, r)
		}
		r = e.run("history", "--config", e.Conf, "--json", "7301")
		var amb struct {
			Ambiguous []struct{ Insurer, Request, Claim string }
		}
		if err := json.Unmarshal([]byte(r.Stdout), &amb); err != nil || r.Code != exitFailure || len(amb.Ambiguous) != 2 ||
			amb.Ambiguous[0].Insurer != "aa" || amb.Ambiguous[1].Claim != "CLM-BB-1" {
			t.Errorf("history --json of the ambiguous 7301: %v %+v\n%s", err, amb, r)
		}

		r = e.run("history", "--config", e.Conf, "--insurer", "bb", "7301")
		if r.Code != exitOK || !strings.Contains(r.Stdout, "request 7301  insurer bb  claim CLM-BB-1  job ") ||
			!strings.Contains(r.Stdout, "phase: rejected") || strings.Contains(r.Stdout, sampleshop.ClaimDraft) ||
			!strings.Contains(r.Stdout, "then `quotesync retry --insurer bb 7301`") {
			t.Errorf("history --insurer bb 7301: want bb's refused request:\n%s", r)
		}
		r = e.run("history", "7301", "--config", e.Conf, "--insurer", "aa")
		if r.Code != exitOK || !strings.Contains(r.Stdout, "request 7301  insurer aa  claim "+sampleshop.ClaimDraft+"  job "+sampleshop.JobDraft) ||
			!strings.Contains(r.Stdout, "accepted with referenceId "+sampleshop.JobDraft) || strings.Contains(r.Stdout, "CLM-BB-1") {
			t.Errorf("history --insurer aa 7301: want aa's drafted request:\n%s", r)
		}
		// A job number names one request, whatever its insurer.
		r = e.run("history", "--config", e.Conf, "--json", sampleshop.JobDraft)
		var doc struct {
			Requests []struct{ Insurer, Request, Claim string }
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != exitOK || len(doc.Requests) != 1 ||
			doc.Requests[0].Insurer != "aa" || doc.Requests[0].Request != "7301" {
			t.Errorf("history --json %s: want aa's 7301: %v %+v\n%s", sampleshop.JobDraft, err, doc, r)
		}
		if r := e.run("history", "--config", e.Conf, "--insurer", "zz", "7301"); r.Code != exitFailure || !strings.Contains(r.Stderr, "insurer zz has no tracked request") {
			t.Errorf("history --insurer zz 7301:\n%s", r)
		}
	})

	t.Run("Page", func(t *testing.T) {
		d := startDaemon(t, e)
		base := "http://" + d.addr
		code, body := httpGet(t, base+"/status")
		if code != 200 || !strings.Contains(body, `id="request-aa/7301"`) || !strings.Contains(body, `id="request-bb/7301"`) ||
			!strings.Contains(body, `<a href="/status?insurer=bb">bb (1)</a>`) {
			t.Errorf("/status: %d, want both 7301 cards and a link per insurer\n%s", code, body)
		}
		code, body = httpGet(t, base+"/status?insurer=bb")
		if code != 200 || !strings.Contains(body, `id="request-bb/7301"`) || strings.Contains(body, `id="request-aa/7301"`) {
			t.Errorf("/status?insurer=bb: %d, want bb's card alone\n%s", code, body)
		}
		code, body = httpGet(t, base+"/status/requests/bb/7301")
		if code != 200 || !strings.Contains(body, "<dt>Insurer</dt><dd>bb</dd>") || !strings.Contains(body, "CLM-BB-1") || strings.Contains(body, sampleshop.ClaimDraft) {
			t.Errorf("/status/requests/bb/7301: %d, want bb's request\n%s", code, body)
		}
		code, body = httpGet(t, base+"/status/requests/7301")
		if code != 200 || !strings.Contains(body, `href="/status/requests/aa/7301"`) || !strings.Contains(body, `href="/status/requests/bb/7301"`) {
			t.Errorf("/status/requests/7301: %d, want a choice of aa's and bb's\n%s", code, body)
		}
		d.stop(t)
	})
}
