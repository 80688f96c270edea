package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/quotesync/quotesync/cmd/internal/config"
	qsync "github.com/quotesync/quotesync/sync"
)

// checkItemTypes warns about each item type shop.work_types maps a code
// to that the service's documentation does not list
// (qsync.DocumentedWorkTypes); it adds nothing when all are listed. A type
// outside them may still be taken (the specification shows others, such
// as RemoveReplace), but a service that follows the documentation refuses
// it with 400.
func checkItemTypes(cl *checklist, fc *config.File) {
	var odd []string
	for _, code := range slices.Sorted(maps.Keys(fc.Shop.WorkTypes)) {
		if typ := fc.Shop.WorkTypes[code]; !slices.Contains(qsync.DocumentedWorkTypes, typ) {
			odd = append(odd, fmt.Sprintf("%s → %s", code, typ))
		}
	}
	if len(odd) == 0 {
		return
	}
	cl.add(qsync.CheckWarn, "item types", "shop.work_types maps to item types the service's documentation does not list: %s; "+
		"a service that follows it refuses them (400): use one of %s, unless the insurer confirmed the type",
		strings.Join(odd, ", "), strings.Join(qsync.DocumentedWorkTypes, ", "))
}
