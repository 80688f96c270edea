package shopdb

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzRequestParams feeds arbitrary request JSON and parameter paths to
// the extraction of the mapping's named parameters: it never panics, every
// value handed to SQL is nil, a string or a bool, and it fails exactly when
// the request is not valid JSON.
func FuzzRequestParams(f *testing.F) {
	f.Add([]byte(`{"id":17,"claim_number":"C-1","vehicle":{"registration":"AB12 CDE","vin":null},"accident":{"parts":[{"n":1},{"n":2.50}]}}`), "vehicle.registration")
	f.Add([]byte(`{"accident":{"parts":[{"n":1},{"n":2.50}]}}`), "accident.parts.1.n")
	f.Add([]byte(`{"a":{"b":[true,false]}}`), "a.b")
	f.Add([]byte(`[1,2,3]`), "0")
	f.Add([]byte(`{"a":1e400}`), "a")
	f.Add([]byte(`   `), "x")
	f.Add([]byte(`{"a":`), "a")
	f.Add([]byte(`{"a":{"":{"":1}}}`), "a..")
	f.Fuzz(func(t *testing.T, raw []byte, path string) {
		nr := NewRequest{RequestID: "17", ClaimNumber: "C-1", RequestJSON: raw}
		vals, err := requestParams("", nr, map[string]string{"p": path})
		blank := len(bytes.TrimSpace(raw)) == 0
		if err != nil {
			if json.Valid(raw) {
				t.Fatalf("valid JSON %q refused: %v", raw, err)
			}
			return
		}
		// The decoder reads one value and accepts what follows it; what
		// it accepted must start with a valid value (or be blank).
		var v any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber() // as requestParams: 1e400 is a number, not an overflow
		if !blank && dec.Decode(&v) != nil {
			t.Fatalf("invalid JSON %q accepted", raw)
		}
		switch v := vals["p"].(type) {
		case nil, string, bool:
		default:
			t.Fatalf("parameter value %#v (%T) is not a SQL scalar", v, v)
		}
	})
}
