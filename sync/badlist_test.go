package sync

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/quotesync/quotesync/remote"
)

// listRemote is a Remote whose pending list is given.
type listRemote struct {
	fakeRemote
	reqs []remote.Request
	err  error
}

func (l listRemote) ListRequests(context.Context) ([]remote.Request, error) { return l.reqs, l.err }

// TestListPendingBlindOnlyWhenNoIDCouldBeRead: an undecodable entry makes
// the pass conclude nothing about requests missing from the list only when
// it could be any of them (no id could be read). An entry whose id is of a
// type no request id has, or is too long to be tracked, does not: the
// requests that left the list are probed and marked gone as usual.
func TestListPendingBlindOnlyWhenNoIDCouldBeRead(t *testing.T) {
	for _, tt := range []struct {
		name      string
		skipped   remote.SkippedRequest
		blind     bool
		skippedID string
	}{
		{"ObjectID", remote.SkippedRequest{Index: 0, Unlike: true, Field: "id"}, false, ""},
		{"LongID", remote.SkippedRequest{Index: 0, IDText: "7777… (more than 4088 bytes)", Field: "id"}, false, ""},
		{"ReadableID", remote.SkippedRequest{Index: 0, ID: "17", IDText: "17", Field: "expiry"}, false, "17"},
		{"NoID", remote.SkippedRequest{Index: 0, Field: ""}, true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.skipped.Err = errors.New("bad")
			rem := listRemote{reqs: []remote.Request{{ID: "1"}, {ID: strings.Repeat("9", 65)}},
				err: &remote.DecodeError{Total: 3, Skipped: []remote.SkippedRequest{tt.skipped}}}
			e, err := New(DefaultConfig(), rem, fakeShop{}, fakeStore{}, zap.NewNop())
			if err != nil {
				t.Fatal(err)
			}
			p := &pass{e: e}
			l, err := e.listPending(context.Background(), p)
			if err != nil {
				t.Fatalf("listPending: %v", err)
			}
			if l.blind != tt.blind || len(l.requests) != 1 || l.requests[0].ID != "1" || p.summary.Pending != 3 {
				t.Errorf("blind %v, requests %d, pending %d; want blind %v, request 1 only, 3 pending", l.blind, len(l.requests), p.summary.Pending, tt.blind)
			}
			if tt.skippedID != "" && !l.skipped[tt.skippedID] {
				t.Errorf("skipped %v lacks %s", l.skipped, tt.skippedID)
			}
		})
	}
}
