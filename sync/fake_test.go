package sync

import (
	"context"
	"errors"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
)

// errNotFaked is returned by every method of the fakes: the pure unit
// tests of this package build an engine without calling its parts. The
// engine's behaviour against the real client, emulator and database is
// tested with the rig (rig_test.go).
var errNotFaked = errors.New("not faked")

// fakeRemote is a Remote that refuses every call.
type fakeRemote struct{}

func (fakeRemote) ListRequests(context.Context) ([]remote.Request, error) { return nil, errNotFaked }
func (fakeRemote) Accept(context.Context, string, string, time.Time) (remote.Job, error) {
	return remote.Job{}, errNotFaked
}
func (fakeRemote) CreateQuote(context.Context, string, remote.Quote) (remote.Quote, error) {
	return remote.Quote{}, errNotFaked
}
func (fakeRemote) UpdateDraft(context.Context, string, remote.Quote) (remote.Quote, error) {
	return remote.Quote{}, errNotFaked
}
func (fakeRemote) SetStatus(context.Context, string, string, string) (remote.Quote, error) {
	return remote.Quote{}, errNotFaked
}
func (fakeRemote) StatusForm() (string, bool) { return "", false }
func (fakeRemote) UseStatusForm(string) error { return errNotFaked }

// fakeStore is a Store that refuses every call.
type fakeStore struct{}

func (fakeStore) OpenRequests(context.Context, shopdb.OpenQuery) ([]shopdb.Request, error) {
	return nil, errNotFaked
}
func (fakeStore) Request(context.Context, string) (shopdb.Request, error) {
	return shopdb.Request{}, errNotFaked
}
func (fakeStore) InTx(context.Context, shopdb.NewRequest, func(context.Context, *shopdb.Tx) error) error {
	return errNotFaked
}
func (fakeStore) ReadTx(context.Context, shopdb.NewRequest, func(context.Context, *shopdb.Tx) error) error {
	return errNotFaked
}
func (fakeStore) Insert(context.Context, shopdb.Request, shopdb.Event) (shopdb.Request, error) {
	return shopdb.Request{}, errNotFaked
}
func (fakeStore) Update(context.Context, shopdb.Request, shopdb.Request, shopdb.Event) (shopdb.Request, error) {
	return shopdb.Request{}, errNotFaked
}
func (fakeStore) Move(context.Context, shopdb.Request, string, shopdb.Event) (shopdb.Request, error) {
	return shopdb.Request{}, errNotFaked
}

func (fakeStore) JobHolder(context.Context, string) (shopdb.Request, error) {
	return shopdb.Request{}, errNotFaked
}
func (fakeStore) JobStates(context.Context, []string) (map[string]shopdb.JobState, map[string]error, error) {
	return nil, nil, errNotFaked
}
func (fakeStore) LineItems(context.Context, []string) (map[string][]shopdb.Line, map[string]error, error) {
	return nil, nil, errNotFaked
}
func (fakeStore) LineTexts(context.Context, []string, func(string, []shopdb.LineText)) ([]string, error) {
	return nil, errNotFaked
}
func (fakeStore) QuoteFields(context.Context, []string) (map[string]map[string]string, map[string]error, error) {
	return nil, nil, nil
}
func (fakeStore) Setting(context.Context, string) (string, bool, error) {
	return "", false, errNotFaked
}
func (fakeStore) PutSetting(context.Context, string, string) error { return errNotFaked }
func (fakeStore) HasShopChanged() bool                             { return false }
func (fakeStore) Fingerprint(context.Context) (shopdb.Fingerprint, error) {
	return shopdb.Fingerprint{}, errNotFaked
}
func (fakeStore) UpdateMarkers(context.Context, []shopdb.MarkerUpdate) (int, error) {
	return 0, errNotFaked
}
