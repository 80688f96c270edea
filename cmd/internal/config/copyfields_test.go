package config

import (
	"reflect"
	"testing"

	"github.com/quotesync/quotesync/shopdb"
	qsync "github.com/quotesync/quotesync/sync"
)

// TestCopyFieldsCoversEveryKey: every key of the sections Build copies
// by name (copyFields) reaches a field of the package's Config of the
// same name and type, but those Build sets apart; so a key added to a
// section and not to its package's Config (or with another type) is not
// dropped without a word.
func TestCopyFieldsCoversEveryKey(t *testing.T) {
	for _, tt := range []struct {
		section, config any
		apart           []string
	}{
		{ShopSection{}, shopdb.Config{}, []string{"PasswordFile", "PasswordEnv", "Limits", "WriteBack", "SingleWriter", "Queries"}},
		{SyncSection{}, qsync.Config{}, []string{"TimeZone"}},
		{QuoteSection{}, qsync.QuoteConfig{}, []string{"Rates"}},
	} {
		st, ct := reflect.TypeOf(tt.section), reflect.TypeOf(tt.config)
		for _, f := range reflect.VisibleFields(st) {
			cf, ok := ct.FieldByName(f.Name)
			copied := ok && cf.Type == f.Type
			apart := false
			for _, a := range tt.apart {
				apart = apart || a == f.Name
			}
			if copied == apart {
				t.Errorf("%s.%s: copied %t, set apart %t; want exactly one", st.Name(), f.Name, copied, apart)
			}
		}
	}
}
