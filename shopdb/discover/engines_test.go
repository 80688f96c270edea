package discover_test

import (
	"strings"
	"testing"

	"github.com/quotesync/quotesync/shopdb/discover/testshops"
)

// TestNonTransactionalTables: on a shop whose tables are MyISAM (the
// repair-order shop, as an older system keeps it), create_job's notes
// say, for the counter and for the job table, what a crash before the
// reservation commits leaves and what the next pass does with it; on
// InnoDB they say nothing of it.
func TestNonTransactionalTables(t *testing.T) {
	ro := testshops.Shops[0]
	if ro.Name != "repairorder" {
		t.Fatalf("the first held-out shop is %s, not repairorder", ro.Name)
	}
	myisam := ro
	myisam.Name, myisam.Script = "repairorder-myisam", strings.ReplaceAll(ro.Script, "ENGINE=InnoDB", "ENGINE=MyISAM")
	p, q, _ := propose(t, myisam, myisam.Final, nil)
	if !p.Job.NonTransactional || p.Job.Engine != "MyISAM" {
		t.Fatalf("%s read as engine %q, non-transactional %v", p.Job.Name, p.Job.Engine, p.Job.NonTransactional)
	}
	var notes []string
	for _, n := range q.Notes["create_job"] {
		if n.Check {
			notes = append(notes, n.Text)
		}
	}
	all := strings.Join(notes, "\n")
	for _, want := range []string{
		"sequences is MyISAM, which keeps what a statement wrote even when the transaction around it rolls back",
		"the bump stays and a job number is skipped, never given twice",
		"ro_header is MyISAM",
		"the next pass's find_job finds the job by its claim (create_job writes the request's claim into ro_header.ins_claim_no) and the request takes it: no second job",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("create_job's notes do not say %q:\n%s", want, all)
		}
	}
	_, q, _ = propose(t, ro, ro.Final, nil)
	for _, n := range q.Notes["create_job"] {
		if strings.Contains(n.Text, "MyISAM") || strings.Contains(n.Text, "rolls back") {
			t.Errorf("an InnoDB shop's create_job note speaks of rollbacks: %s", n.Text)
		}
	}
}
