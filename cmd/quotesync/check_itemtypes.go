package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/quotesync/quotesync/cmd/internal/config"
	qsync "github.com/quotesync/quotesync/sync"
)

// checkItemTypes warns about each item type shop.work_types (or an
// insurer's own work_types under remotes:) maps a code to that the
// service's documentation does not list (qsync.DocumentedWorkTypes); it
// adds nothing when all are listed. A type outside them may still be
// taken (the specification shows others, such as RemoveReplace), but a
// service that follows the documentation refuses it with 400.
func checkItemTypes(cl *checklist, fc *config.File) {
	type mapping struct {
		key string
		m   map[string]string
	}
	mappings := []mapping{{"shop.work_types", fc.Shop.WorkTypes}}
	for _, e := range fc.Remotes {
		mappings = append(mappings, mapping{"remotes[" + e.Name + "].work_types", e.WorkTypes})
	}
	for _, wt := range mappings {
		var odd []string
		for _, code := range slices.Sorted(maps.Keys(wt.m)) {
			if typ := wt.m[code]; !slices.Contains(qsync.DocumentedWorkTypes, typ) {
				odd = append(odd, fmt.Sprintf("%s → %s", code, typ))
			}
		}
		if len(odd) == 0 {
			continue
		}
		cl.add(qsync.CheckWarn, "item types", "%s maps to item types the service's documentation does not list: %s; "+
			"a service that follows it refuses them (400): use one of %s, unless the insurer confirmed the type",
			wt.key, strings.Join(odd, ", "), strings.Join(qsync.DocumentedWorkTypes, ", "))
	}
}
