package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// TestHistoryBinary runs real passes (`once`) against the emulator and
// the sample shop, then reads requests' timelines with `history`, by
// request id and by job number, as a table and as JSON; and its exit
// codes for what is not tracked and for a bad command line.
func TestHistoryBinary(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, nil)

	r := e.run("history", "--config", e.Conf, "1001")
	if r.Code != exitFailure || !strings.Contains(r.Stderr, "state tables do not exist yet") {
		t.Errorf("history before the first start: %s", r)
	}

	ids := e.Emu.AddRequests(
		emulator.SeedRequest{ClaimNumber: sampleshop.ClaimFinal},
		emulator.SeedRequest{ClaimNumber: sampleshop.ClaimBadLine},
	)
	reqFinal, reqBad := ids[0], ids[1]
	for range 2 {
		if r := e.run("once", "--config", e.Conf); r.Code != exitOK {
			t.Fatalf("once: %s", r)
		}
	}

	t.Run("Table", func(t *testing.T) {
		r := e.run("history", "--config", e.Conf, reqFinal)
		if r.Code != exitOK {
			t.Fatalf("history %s: %s", reqFinal, r)
		}
		for _, want := range []string{
			"request " + reqFinal + "  claim " + sampleshop.ClaimFinal + "  job " + sampleshop.JobFinal,
			"phase: submitted (submitted for assessment)",
			"TIME", "EVENT", "PHASE", "WHAT",
			"reserved -> accepted",
		} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("history lacks %q:\n%s", want, r.Stdout)
			}
		}
		// The steps in order, each on its own line.
		steps := []string{"listed by the insurer; job " + sampleshop.JobFinal + " reserved for it",
			"accepted with referenceId " + sampleshop.JobFinal, "Draft pushed: 4 lines, hash ",
			"Submitted for assessment (the Draft with hash "}
		last := -1
		for _, s := range steps {
			i := strings.Index(r.Stdout, s)
			if i < last {
				t.Errorf("history lacks %q after the step before:\n%s", s, r.Stdout)
			}
			last = i
		}
	})

	t.Run("ByJob", func(t *testing.T) {
		// The flags may follow the argument.
		r := e.run("history", sampleshop.JobBadLine, "--config", e.Conf)
		if r.Code != exitOK {
			t.Fatalf("history %s: %s", sampleshop.JobBadLine, r)
		}
		for _, want := range []string{"request " + reqBad, "held: a line of the job's estimate is invalid",
			"details: ", "what to do: fix the line in the shop", "held: nothing is pushed until the cause is fixed"} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("history by job lacks %q:\n%s", want, r.Stdout)
			}
		}
	})

	t.Run("JSON", func(t *testing.T) {
		r := e.run("history", "--config", e.Conf, "--json", reqFinal)
		if r.Code != exitOK {
			t.Fatalf("history --json: %s", r)
		}
		var doc struct {
			Requests []struct {
				Request, Job, Phase string
				Timeline            []struct {
					Kind, What, Hash, Job string
					Items                 int
				}
			}
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatalf("history --json is not JSON: %v\n%s", err, r.Stdout)
		}
		if len(doc.Requests) != 1 || doc.Requests[0].Request != reqFinal || doc.Requests[0].Phase != "submitted" {
			t.Fatalf("history --json: %+v", doc)
		}
		var kinds []string
		var drafted, submitted string
		for _, s := range doc.Requests[0].Timeline {
			kinds = append(kinds, s.Kind)
			switch s.Kind {
			case "drafted":
				drafted = s.Hash
				if s.Items != 4 {
					t.Errorf("the Draft has %d items, want 4", s.Items)
				}
			case "submitted":
				submitted = s.Hash
			}
		}
		if got, want := strings.Join(kinds, " "), "reserved accepted drafted submitted"; got != want {
			t.Errorf("timeline kinds = %q, want %q", got, want)
		}
		if drafted == "" || drafted != submitted {
			t.Errorf("submitted Draft %q, pushed Draft %q: want the same hash", submitted, drafted)
		}
	})

	t.Run("NotFound", func(t *testing.T) {
		r := e.run("history", "--config", e.Conf, "no-such-thing")
		if r.Code != exitFailure || !strings.Contains(r.Stderr, `no tracked request has the id or the job number "no-such-thing"`) {
			t.Errorf("history of nothing: %s", r)
		}
	})

	t.Run("Usage", func(t *testing.T) {
		if r := e.run("history", "--config", e.Conf); r.Code != exitUsage || !strings.Contains(r.Stderr, "a request id or a job number is missing") {
			t.Errorf("history without an argument: %s", r)
		}
		if r := e.run("history", "--config", e.Conf, "a", "b"); r.Code != exitUsage {
			t.Errorf("history with two arguments: %s", r)
		}
		if r := e.run("history", "--config", e.Conf, "--limit", "-1", "a"); r.Code != exitUsage {
			t.Errorf("history --limit -1: %s", r)
		}
		r := e.run("history", "--help")
		if r.Code != exitOK || !strings.Contains(r.Stdout, "Usage: quotesync history") || !strings.Contains(r.Stdout, "Example:") {
			t.Errorf("history --help: %s", r)
		}
	})
}
