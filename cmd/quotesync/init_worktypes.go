package main

import (
	"strings"
	"unicode"

	"github.com/quotesync/quotesync/shopdb/discover"
)

// workTypeChoice is the work type of one operation code: given by a
// person (--work-type or an answer), proposed from the code's name (a
// guess, marked CHECK in the file), or none (lines with the code hold
// their job until it is mapped).
type workTypeChoice struct {
	Type     string // "" when none
	Count    int64  // lines with the code among the newest rows
	Proposed bool   // from the code's name, not confirmed
}

// knownCodes are operation codes shop systems use, by the work type the
// service's documentation names for them. A code is compared with its
// letters and digits only, upper case: "R&R", "R/R" and "rr" are RR.
// Codes that mean different things in different shops (P, PT, PA, M, L)
// are not here: a person says what they are.
var knownCodes = map[string]string{
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

// proposeWorkTypes decides a work type for every code in use: given ones
// first, then proposals for the codes knownCodes recognises. Given codes
// not seen in the data are kept too.
func proposeWorkTypes(codes []discover.ValueCount, given map[string]string) map[string]workTypeChoice {
	out := map[string]workTypeChoice{}
	for _, c := range codes {
		if c.Null || strings.TrimSpace(c.Value) == "" {
			continue
		}
		wc := workTypeChoice{Count: c.Count}
		if t, ok := knownCodes[normCode(c.Value)]; ok {
			wc.Type, wc.Proposed = t, true
		}
		out[c.Value] = wc
	}
	for code, t := range given {
		wc := out[code]
		wc.Type, wc.Proposed = t, false
		out[code] = wc
	}
	return out
}
