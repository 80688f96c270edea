package sync

import (
	"strings"
	"unicode"
)

// DocumentedWorkTypes are the item types the service's public
// documentation lists (quotesync check warns about a mapped type outside
// them: a service that follows its documentation refuses the others).
var DocumentedWorkTypes = []string{"RemoveReplaceLabour", "RepairLabour", "RefinishLabour", "MechanicalLabour", "Parts", "Miscellaneous"}

// codeWorkTypes are operation codes shop systems use, by the documented
// work type they stand for; keys are normalised as normCode does. Codes
// that mean different things in different shops (P, PT, PA, M, L) are not
// here: a person says what they are.
var codeWorkTypes = map[string]string{
	"RR": "RemoveReplaceLabour", "RANDR": "RemoveReplaceLabour", "RNR": "RemoveReplaceLabour",
	"REMOVEREPLACE": "RemoveReplaceLabour", "REPLACE": "RemoveReplaceLabour", "REMREP": "RemoveReplaceLabour",
	"RPR": "RepairLabour", "REP": "RepairLabour", "REPAIR": "RepairLabour", "RP": "RepairLabour",
	"PANEL": "RepairLabour", "BODY": "RepairLabour",
	"PNT": "RefinishLabour", "PAINT": "RefinishLabour", "REF": "RefinishLabour", "REFIN": "RefinishLabour",
	"REFINISH": "RefinishLabour", "PAINTING": "RefinishLabour",
	"MECH": "MechanicalLabour", "MEC": "MechanicalLabour", "MECHANICAL": "MechanicalLabour",
	"PART": "Parts", "PARTS": "Parts", "PRT": "Parts",
	"SUNDRY": "Miscellaneous", "SUNDRIES": "Miscellaneous", "SUN": "Miscellaneous", "MISC": "Miscellaneous",
	"MISCELLANEOUS": "Miscellaneous", "SUBLET": "Miscellaneous", "CONSUMABLES": "Miscellaneous",
	"CONS": "Miscellaneous", "MATERIALS": "Miscellaneous", "OTHER": "Miscellaneous",
}

// GuessWorkType returns the documented work type a shop's operation code
// usually stands for, and whether the code is one it recognises. A code is
// compared by its letters and digits only, upper case: "R&R", "R/R" and
// "rr" are RR. It is a guess for a person to confirm (quotesync init
// marks it CHECK), never a mapping of its own.
func GuessWorkType(code string) (string, bool) {
	t, ok := codeWorkTypes[normCode(code)]
	return t, ok
}

// normCode is a code's letters and digits, upper case.
func normCode(code string) string {
	var b strings.Builder
	for _, r := range code {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}
