package discover

import "fmt"

// noteNonTransactional says, for each table create_job writes that ignores
// transactions (MyISAM), what a crash after create_job, before the
// reservation commits, leaves behind, and what the next pass does with it.
func (p *Proposal) noteNonTransactional(q *Queries) {
	if n := p.Numbering; n.Method == "counter" && n.Table.NonTransactional {
		q.note("create_job", true, "%s is %s, which keeps what a statement wrote even when the transaction around it rolls back: "+
			"should quotesync stop (a crash, a lost connection) after the counter's bump and before the reservation commits, "+
			"the bump stays and a job number is skipped, never given twice", n.Table.Name, n.Table.Engine)
	}
	for _, t := range []*Table{p.Job, p.Mid} {
		if t == nil || !t.NonTransactional {
			continue
		}
		what := "the job's row"
		if t == p.Mid {
			what = "the job's " + t.Name + " row"
		}
		var after string
		switch {
		case t == p.Mid && !p.Job.NonTransactional:
			after = fmt.Sprintf("%s's row rolls back, so this row stays pointing at no job, unused, and the next pass makes the job again", p.Job.Name)
		case p.Claim == nil:
			after = "with no claim column to find it by, the next pass makes another job and this one stays unused, for the shop to cancel"
		default:
			after = fmt.Sprintf("the next pass's find_job finds the job by its claim (create_job writes the request's claim into %s.%s) and the request takes it: no second job; "+
				"a job find_job leaves out (by its status, say) would stay unused, for the shop to cancel", p.Job.Name, p.Claim.Name)
		}
		q.note("create_job", true, "%s is %s, which keeps what a statement wrote even when the transaction around it rolls back: "+
			"should quotesync stop (a crash, a lost connection) after create_job wrote %s and before the reservation commits, "+
			"it stays with no request holding it; %s", t.Name, t.Engine, what, after)
	}
}
