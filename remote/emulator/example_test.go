package emulator_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/quotesync/quotesync/remote/emulator"
)

// Example serves the emulator with httptest, accepts a seeded request with
// a plain HTTP client, and reads the history the emulator kept.
func Example() {
	emu, err := emulator.New(emulator.Options{Token: "devtoken", Seed: 1})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(emu)
	defer srv.Close()
	emu.AddRequests(emulator.SeedRequest{ID: "1001", ClaimNumber: "CLM-1", Expiry: time.Now().Add(time.Hour)})

	req, _ := http.NewRequest("POST", srv.URL+emulator.APIPrefix+"/requests/1001", strings.NewReader(`{"referenceId":"RO-1"}`))
	req.Header.Set("Authorization", "Bearer devtoken")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, strings.TrimPrefix(resp.Header.Get("Location"), srv.URL))
	fmt.Print(string(body))

	for _, h := range emu.State().History {
		fmt.Println(h.Seq, h.Kind, h.Route, h.RequestID, h.JobID)
	}
	fmt.Println(emu.Calls())
	// Output:
	// 201 /integrations/repairer/jobs/RO-1
	// {"id":"RO-1","requestId":1001,"claim_number":"CLM-1"}
	// 1 accept POST /requests/{id} 1001 RO-1
	// map[POST /requests/{id}:1]
}
