// Package testshops holds shop-management schemas unlike the sample shop,
// with a few rows each, for tests of quotesync init, check and preview: a
// repair-order schema, a denormalised one, one whose names must be quoted,
// and a flat estimate table with no table of jobs. Each says what an
// integrator would answer where no schema can tell (which status means
// final, which code is which work type) and which job a test can take a
// request onto.
package testshops

import (
	"context"
	_ "embed" // the schemas

	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// Shop is one schema and what a test needs to know of it.
type Shop struct {
	Name   string
	Script string // the schema and its rows, statements ending with ";" at a line end
	// Final are the status values the integrator says mean final.
	Final []string
	// WorkTypes maps every operation code of the data to a work type.
	WorkTypes map[string]string
	// Claim is the claim of an existing job with lines; Job its number
	// and Lines how many live lines it has.
	Claim, Job string
	Lines      int
	// Rows reads the job's live lines (one parameter: the job number),
	// written by hand for the schema, not by init: columns line_id,
	// line_no, code, description, quantity, price and total (NULL when
	// the shop leaves it to the reader), in the quote's order.
	Rows string
}

var (
	//go:embed repairorder.sql
	repairOrderSQL string
	//go:embed denormalised.sql
	denormalisedSQL string
	//go:embed reserved.sql
	reservedSQL string
	//go:embed flat.sql
	flatSQL string
)

// Shops are the schemas but the sample shop's (which sampleshop holds).
var Shops = []Shop{
	{
		Name: "repairorder", Script: repairOrderSQL, Final: []string{"F"},
		WorkTypes: map[string]string{"RR": "RemoveReplaceLabour", "RP": "RepairLabour", "PT": "RefinishLabour",
			"PA": "Parts", "SU": "Miscellaneous"},
		Claim: "HX-77001", Job: "RO-000450", Lines: 3,
		Rows: `SELECT l.ro_line_id, l.seq, l.labour_type, l.descr, l.hours_or_qty, l.unit_amt, l.ext_amt
FROM ro_lines l JOIN ro_header h ON h.ro_id = l.ro_id
WHERE h.ro_number = ? AND l.del_flag <> 'Y' ORDER BY l.seq, l.ro_line_id`,
	},
	{
		Name: "denormalised", Script: denormalisedSQL, Final: []string{"final"},
		WorkTypes: map[string]string{"R&R": "RemoveReplaceLabour", "PARTS": "Parts", "MECH": "MechanicalLabour", "PAINT": "RefinishLabour"},
		Claim:     "C-881", Job: "7001", Lines: 3,
		Rows: "SELECT item_id, line, op, text, qty, price, total FROM wo_items WHERE wo_no = ? ORDER BY line, item_id",
	},
	{
		Name: "reserved", Script: reservedSQL, Final: []string{"Definitief"},
		WorkTypes: map[string]string{"RR": "RemoveReplaceLabour", "PART": "Parts", "PNT": "RefinishLabour", "REP": "RepairLabour"},
		Claim:     "VZ-5001", Job: "A1001", Lines: 3,
		Rows: "SELECT l.`LineID`, l.`Position`, l.`Type`, l.`Desc`, l.`Menge`, l.`Stückpreis`, NULL FROM `OrderLine` l " +
			"JOIN `Order` o ON o.`OrderID` = l.`OrderID` WHERE o.`Number` = ? AND l.`Deleted` = 0 ORDER BY l.`Position`, l.`LineID`",
	},
	Flat,
}

// Flat is the flat estimate table: no table of jobs, one table of lines
// that repeat the job number, the claim and the status.
var Flat = Shop{
	Name: "flat", Script: flatSQL, Final: []string{"FINAL"},
	WorkTypes: map[string]string{"R&R": "RemoveReplaceLabour", "PRT": "Parts", "PNT": "RefinishLabour", "RPR": "RepairLabour"},
	Claim:     "INS-3301", Job: "Q-2001", Lines: 3,
	Rows: "SELECT line_id, line_no, op, description, qty, rate, amount FROM quote_lines " +
		"WHERE job_no = ? AND deleted <> 'Y' ORDER BY line_no, line_id",
}

// Sample is the sample shop as one of them.
var Sample = Shop{
	Name: "sample", Final: []string{"FINAL"}, WorkTypes: sampleshop.WorkTypes(),
	Claim: sampleshop.ClaimDraft, Job: sampleshop.JobDraft, Lines: 4,
	Rows: `SELECT l.line_id, l.line_no, l.op_code, l.description, l.qty, l.unit_price, l.line_total
FROM estimate_lines l JOIN estimates e ON e.estimate_id = l.estimate_id JOIN jobs j ON j.job_id = e.job_id
WHERE j.job_no = ? AND l.deleted = 0 ORDER BY l.line_no, l.line_id`,
}

// Apply creates the shop's tables and rows in the current database.
func (s Shop) Apply(ctx context.Context, db sampleshop.Execer) error {
	if s.Script == "" {
		return sampleshop.Apply(ctx, db)
	}
	return sampleshop.Run(ctx, db, "create shop "+s.Name, s.Script)
}
