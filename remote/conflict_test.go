package remote

import (
	"fmt"
	"testing"
)

// TestHolder reads the acceptance a 409 names from the bodies the service
// may send, and nothing from the rest.
func TestHolder(t *testing.T) {
	tests := []struct {
		name, body string
		ref, req   string
	}{
		{"EmulatorSeedBody", `{"error":{"code":"request_already_accepted","message":"x","referenceId":"PORTAL-77","requestId":"1001"}}`, "PORTAL-77", "1001"},
		{"TopLevel", `{"message":"request already accepted by another repairer","referenceId":"PORTAL-77"}`, "PORTAL-77", ""},
		{"SnakeCase", `{"reference_id":"RO-1","request_id":"9"}`, "RO-1", "9"},
		{"NumericReference", `{"referenceId":50001}`, "50001", ""},
		{"PlainText", `request already accepted`, "", ""},
		{"NoReference", `{"error":{"code":"conflict"}}`, "", ""},
		{"EmptyReference", `{"referenceId":""}`, "", ""},
		{"Garbage", `{"referenceId":`, "", ""},
		{"Empty", ``, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := &Error{Method: "POST", Path: "/requests/1", Status: 409, Body: tt.body, Err: ErrConflict}
			ref, req := Holder(fmt.Errorf("accept: %w", err))
			if ref != tt.ref || req != tt.req {
				t.Errorf("Holder(%s) = %q, %q; want %q, %q", tt.body, ref, req, tt.ref, tt.req)
			}
		})
	}
	if ref, req := Holder(fmt.Errorf("not a remote error")); ref != "" || req != "" {
		t.Errorf("Holder of another error = %q, %q", ref, req)
	}
}
