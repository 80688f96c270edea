package main

import (
	"strings"
	"testing"

	"github.com/quotesync/quotesync/cmd/internal/config"
)

// TestCheckItemTypes: `quotesync check` warns about a work type mapped to
// an item type the service's documentation does not list (the seed's
// RemoveReplace, say), naming the code and the documented types, without
// failing the check; the example's mapping gets no such line.
func TestCheckItemTypes(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t, func(fc *config.File) {
		fc.Shop.WorkTypes["R&R"] = "RemoveReplace"
		fc.Shop.WorkTypes["GLASS"] = "Glass"
	})
	e.DB.Open(t, e.DB.Config())
	r := e.run("check", "--config", e.Conf)
	if r.Code != exitOK {
		t.Fatalf("check with undocumented item types: %s; want a warning, not a failure", r)
	}
	l := checkLine(r.Stdout, "item types")
	for _, want := range []string{"warn", "R&R → RemoveReplace", "GLASS → Glass", "RemoveReplaceLabour, RepairLabour"} {
		if !strings.Contains(l, want) {
			t.Errorf("item types line %q does not say %q", l, want)
		}
	}
	if strings.Contains(l, "RPR") {
		t.Errorf("item types line %q names a documented type's code", l)
	}

	e.writeConfig(nil)
	if r := e.run("check", "--config", e.Conf); checkLine(r.Stdout, "item types") != "" || r.Code != exitOK {
		t.Errorf("the example's mapping: exit %d, item types line %q; want none", r.Code, checkLine(r.Stdout, "item types"))
	}
}
