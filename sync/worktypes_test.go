package sync

import (
	"slices"
	"testing"
)

// TestWorkTypeVocabulary: every work type a shop code is guessed as is a
// documented one, and every documented type is guessed for some code, so
// the guesses and the list check warns against are one vocabulary.
func TestWorkTypeVocabulary(t *testing.T) {
	guessed := map[string]bool{}
	for code, typ := range codeWorkTypes {
		if !slices.Contains(DocumentedWorkTypes, typ) {
			t.Errorf("code %s is guessed as %q, not a documented work type %q", code, typ, DocumentedWorkTypes)
		}
		if normCode(code) != code {
			t.Errorf("code %q is not normalised (%q): GuessWorkType would never find it", code, normCode(code))
		}
		guessed[typ] = true
	}
	for _, typ := range DocumentedWorkTypes {
		if !guessed[typ] {
			t.Errorf("no shop code is guessed as %s", typ)
		}
	}
	for _, c := range []struct{ code, want string }{{"R&R", "RemoveReplaceLabour"}, {"r/r", "RemoveReplaceLabour"}, {"Paint", "RefinishLabour"}, {"PT", ""}} {
		if got, _ := GuessWorkType(c.code); got != c.want {
			t.Errorf("GuessWorkType(%q) = %q, want %q", c.code, got, c.want)
		}
	}
}
