package store

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// escaped is s as go-sql-driver/mysql interpolates a string argument
// (escapeStringBackslash), written out here independently of literalLen.
func escaped(s string) string {
	return "'" + strings.NewReplacer("\x00", `\0`, "\n", `\n`, "\r", `\r`, "\x1a", `\Z`,
		"'", `\'`, `"`, `\"`, `\`, `\\`).Replace(s) + "'"
}

// TestMarkerDoc: each JSON array markerDoc makes is valid JSON holding its
// rows exactly, within the byte bound once escaped as the driver does it,
// and as full as the bound allows.
func TestMarkerDoc(t *testing.T) {
	pieces := []string{"a", "Z", "'", `"`, `\`, "\x00", "\n", "\r", "\t", "\x1a", "\x01", "\x7f", "é", "😀", "\u2028", "?", " "}
	rng := rand.New(rand.NewPCG(1, 2))
	text := func() string {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	us := make([]MarkerUpdate, 2000)
	for i := range us {
		us[i] = MarkerUpdate{RequestID: fmt.Sprint(i, text()), Version: rng.Int64N(1 << 40), Marker: text()}
	}
	for _, max := range []int{1, 200, 4096, 1 << 16, 1 << 30} {
		rest, chunks := us, 0
		var buf []byte
		for len(rest) > 0 {
			var n int
			buf, n = markerDoc(buf, rest, max)
			if n < 1 || n > len(rest) {
				t.Fatalf("max %d: markerDoc took %d of %d rows", max, n, len(rest))
			}
			size := len(escaped(string(buf)))
			if n > 1 && size > max {
				t.Errorf("max %d: %d rows take %d bytes escaped", max, n, size)
			}
			if n < len(rest) {
				if more, _ := markerDoc(nil, rest[:n+1], 1<<40); len(escaped(string(more))) <= max {
					t.Errorf("max %d: %d rows sent, but %d fit (%d bytes)", max, n, n+1, len(escaped(string(more))))
				}
			}
			var rows [][3]any
			d := json.NewDecoder(strings.NewReader(string(buf)))
			d.UseNumber()
			if err := d.Decode(&rows); err != nil {
				t.Fatalf("max %d: not JSON: %v\n%s", max, err, buf)
			}
			for i, r := range rows {
				u := rest[i]
				if r[0] != u.RequestID || r[1] != json.Number(fmt.Sprint(u.Version)) || r[2] != u.Marker {
					t.Fatalf("max %d: row %d reads back as %q, want %+v", max, i, r, u)
				}
			}
			if len(rows) != n {
				t.Fatalf("max %d: %d rows in the array, markerDoc says %d", max, len(rows), n)
			}
			rest = rest[n:]
			chunks++
		}
		t.Logf("max %d: %d statements", max, chunks)
	}
}
