package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
	"github.com/quotesync/quotesync/shopdb/discover/testshops"
)

// TestE2EMyISAMCreateJobKilled: the repair-order shop as an older system
// keeps it, every table MyISAM (which ignores transactions). init and
// check say, for each create_job statement, that its table keeps what it
// wrote when the reservation rolls back, and what then happens. Then the
// real binary is killed (SIGKILL) between create_job's INSERT of the job
// and the commit of the reservation: the job row and the counter's bump
// stay, quotesync's record of the request is gone, and the request is
// still pending at the insurer. The next pass finds that job by its claim
// (find_job), reserves and accepts it: no second job, no number given
// twice, and history says the job was found by find_job.
func TestE2EMyISAMCreateJobKilled(t *testing.T) {
	t.Parallel()
	shop := testshops.Shops[0]
	if shop.Name != "repairorder" {
		t.Fatalf("the first held-out shop is %s, not repairorder", shop.Name)
	}
	shop.Name, shop.Script = "repairorder-myisam", strings.ReplaceAll(shop.Script, "ENGINE=InnoDB", "ENGINE=MyISAM")
	w := newInitWorld(t, nil, shop)
	text := w.initYes()
	for _, want := range []string{"# CHECK: sequences is MyISAM, which keeps what a statement wrote", "# CHECK: ro_header is MyISAM, which keeps what a statement wrote"} {
		if !strings.Contains(text, want) {
			t.Errorf("init does not say %q:\n%s", want, text)
		}
	}
	emu, srv := mustEmulator(t, emulator.Options{Token: cliToken, Seed: 5})
	text = w.pointAt(text, srv, emulator.ModeSpec)
	r := w.run("check", "--config", w.conf)
	if r.Code != exitOK {
		t.Fatalf("check: %s", r)
	}
	for _, want := range []string{"warn  shop.queries.create_job[0]", "writes sequences (MyISAM), which ignores transactions",
		"warn  shop.queries.create_job[1]", "writes ro_header (MyISAM), which ignores transactions"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("check does not say %q:\n%s", want, r.Stdout)
		}
	}

	// A pause after create_job's INSERT, inside the reservation's
	// transaction: the test kills the binary there.
	paused := pauseBeforeLastCreateJob(t, text)
	if err := os.WriteFile(w.conf, []byte(paused), 0o644); err != nil {
		t.Fatal(err)
	}
	const claim = "HX-77123"
	id := emu.AddRequests(emulator.SeedRequest{ClaimNumber: claim, Expiry: time.Now().Add(48 * time.Hour)})[0]
	var out bytes.Buffer
	cmd := exec.Command(w.bin, "once", "--config", w.conf)
	cmd.Env, cmd.Stdout, cmd.Stderr = w.env, &out, &out
	p := startBackground(t, cmd, nil)
	jobs := func() (n int, last int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := w.db.SQL.QueryRowContext(ctx, "SELECT (SELECT COUNT(*) FROM ro_header WHERE ins_claim_no = ?), (SELECT last_no FROM sequences WHERE seq_name = 'RO')", claim).Scan(&n, &last); err != nil {
			t.Fatal(err)
		}
		return n, last
	}
	if !waitFor(60*time.Second, func() bool { n, _ := jobs(); return n > 0 }) {
		t.Fatalf("create_job wrote no job for %s within 60s:\n%s", claim, out.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if ended, _ := p.wait(10 * time.Second); !ended {
		t.Fatal("the killed binary did not end")
	}
	n, last := jobs()
	if n != 1 || last != 453 {
		t.Errorf("after the kill: %d jobs for %s, counter at %d; want the job row and the bump kept by MyISAM (1, 453)", n, claim, last)
	}
	var rows int
	if err := w.db.SQL.QueryRow("SELECT COUNT(*) FROM quotesync_requests WHERE request_id = ?", id).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("quotesync's record of %s after the kill: %d rows (%v); want none, rolled back", id, rows, err)
	}
	if rq, _ := emu.State().Request(id); rq.Status != emulator.RequestPending {
		t.Errorf("request %s is %s after the kill, want still pending (no accept sent)", id, rq.Status)
	}

	// The next pass, with the pause gone.
	if err := os.WriteFile(w.conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := w.run("once", "--config", w.conf); r.Code != exitOK {
		t.Fatalf("the pass after the kill: %s", r)
	}
	if rq, _ := emu.State().Request(id); rq.ReferenceID != "RO-000453" {
		t.Errorf("request %s accepted with %q, want the job the killed pass made, RO-000453", id, rq.ReferenceID)
	}
	if n, last := jobs(); n != 1 || last != 453 {
		t.Errorf("after the next pass: %d jobs for %s, counter at %d; want no second job (1, 453)", n, claim, last)
	}
	if r := w.run("history", "--config", w.conf, id); !strings.Contains(r.Stdout, "job RO-000453 found by find_job") {
		t.Errorf("history of %s does not say the job was found by find_job:\n%s", id, r)
	}
}

// pauseBeforeLastCreateJob adds a statement that sleeps 5 s before the
// last statement of create_job in an init-written file.
func pauseBeforeLastCreateJob(t *testing.T, text string) string {
	t.Helper()
	start := strings.Index(text, "\n    create_job:\n")
	if start < 0 {
		t.Fatalf("no create_job in:\n%s", text)
	}
	// The list ends at the next line indented by four spaces.
	end := start + len("\n    create_job:\n")
	for end < len(text) {
		nl := strings.IndexByte(text[end:], '\n')
		line := text[end : end+nl+1]
		if !strings.HasPrefix(line, "      ") {
			break
		}
		end += nl + 1
	}
	last := strings.LastIndex(text[:end], "\n      - |-\n")
	if last < start {
		t.Fatalf("no list item in create_job:\n%s", text[start:end])
	}
	return text[:last+1] + "      - DO SLEEP(5)\n" + text[last+1:]
}
