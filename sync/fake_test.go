package sync

import (
	"context"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/store"
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

// fakeShop is a Shop that refuses every call.
type fakeShop struct{}

func (fakeShop) Jobs(*sqlx.Tx, shopdb.NewRequest) *shopdb.Jobs { return nil }
func (fakeShop) JobStates(context.Context, []string) (map[string]shopdb.JobState, map[string]error, error) {
	return nil, nil, errNotFaked
}
func (fakeShop) Lines(context.Context, []string) (map[string]shopdb.JobLines, error) {
	return nil, errNotFaked
}
func (fakeShop) EachLines(context.Context, []string, func(string, shopdb.JobLines)) error {
	return errNotFaked
}
func (fakeShop) QuoteFields(context.Context, []string) (map[string]map[string]string, map[string]error, error) {
	return nil, nil, nil
}
func (fakeShop) HasShopChanged() bool { return false }
func (fakeShop) Fingerprint(context.Context, string) (shopdb.Fingerprint, error) {
	return shopdb.Fingerprint{}, errNotFaked
}

// fakeStore is a Store that refuses every call.
type fakeStore struct{}

func (fakeStore) OpenRequests(context.Context, store.OpenQuery) ([]store.Request, error) {
	return nil, errNotFaked
}
func (fakeStore) Request(context.Context, string) (store.Request, error) {
	return store.Request{}, errNotFaked
}
func (fakeStore) InTx(context.Context, string, func(context.Context, *store.Tx) error) error {
	return errNotFaked
}
func (fakeStore) ReadTx(context.Context, string, func(context.Context, *store.Tx) error) error {
	return errNotFaked
}
func (fakeStore) Insert(context.Context, store.Request, store.Event) (store.Request, error) {
	return store.Request{}, errNotFaked
}
func (fakeStore) Update(context.Context, store.Request, store.Request, store.Event) (store.Request, error) {
	return store.Request{}, errNotFaked
}
func (fakeStore) Move(context.Context, []store.Request, string, []store.Event, *store.Rekey) ([]store.Request, store.Adopted, error) {
	return nil, store.Adopted{}, errNotFaked
}
func (fakeStore) RecordOnce(context.Context, store.Event) (bool, error) { return false, errNotFaked }
func (fakeStore) JobHolder(context.Context, string) (store.Request, error) {
	return store.Request{}, errNotFaked
}
func (fakeStore) Setting(context.Context, string) (string, bool, error) {
	return "", false, errNotFaked
}
func (fakeStore) PutSetting(context.Context, string, string) error { return errNotFaked }
func (fakeStore) StateFingerprint() string                         { return "SELECT ''" }
func (fakeStore) UpdateMarkers(context.Context, []store.MarkerUpdate) (int, error) {
	return 0, errNotFaked
}
