package sync

import (
	"context"
	"errors"
	"time"

	"github.com/quotesync/quotesync/remote"
	"github.com/quotesync/quotesync/shopdb"
)

// errNotFaked is returned by a fake method the test did not set.
var errNotFaked = errors.New("not faked")

// fakeRemote is a Remote of function fields, for pure unit tests. The
// engine's behaviour against the real client, emulator and database is
// tested in engine_test.go.
type fakeRemote struct {
	list   func(ctx context.Context) ([]remote.Request, error)
	accept func(ctx context.Context, requestID, referenceID string, bookingDate time.Time) (remote.Job, error)
	create func(ctx context.Context, jobID string, q remote.Quote) (remote.Quote, error)
	update func(ctx context.Context, jobID string, q remote.Quote) (remote.Quote, error)
	status func(ctx context.Context, jobID, quoteType, status string) (remote.Quote, error)
}

func (f *fakeRemote) ListRequests(ctx context.Context) ([]remote.Request, error) {
	if f.list == nil {
		return nil, errNotFaked
	}
	return f.list(ctx)
}

func (f *fakeRemote) Accept(ctx context.Context, requestID, referenceID string, bookingDate time.Time) (remote.Job, error) {
	if f.accept == nil {
		return remote.Job{}, errNotFaked
	}
	return f.accept(ctx, requestID, referenceID, bookingDate)
}

func (f *fakeRemote) CreateQuote(ctx context.Context, jobID string, q remote.Quote) (remote.Quote, error) {
	if f.create == nil {
		return remote.Quote{}, errNotFaked
	}
	return f.create(ctx, jobID, q)
}

func (f *fakeRemote) UpdateDraft(ctx context.Context, jobID string, q remote.Quote) (remote.Quote, error) {
	if f.update == nil {
		return remote.Quote{}, errNotFaked
	}
	return f.update(ctx, jobID, q)
}

func (f *fakeRemote) SetStatus(ctx context.Context, jobID, quoteType, status string) (remote.Quote, error) {
	if f.status == nil {
		return remote.Quote{}, errNotFaked
	}
	return f.status(ctx, jobID, quoteType, status)
}

// fakeStore is a Store of function fields, for pure unit tests.
type fakeStore struct {
	open        func(ctx context.Context, since time.Time) ([]shopdb.Request, error)
	reserve     func(ctx context.Context, nr shopdb.NewRequest) (shopdb.Request, error)
	planReserve func(ctx context.Context, nr shopdb.NewRequest) (string, bool, error)
	deferReq    func(ctx context.Context, nr shopdb.NewRequest, reason string, next time.Time) (shopdb.Request, error)
	update      func(ctx context.Context, cur, next shopdb.Request, ev shopdb.Event) (shopdb.Request, error)
	states      func(ctx context.Context, jobs []string) (map[string]shopdb.JobState, map[string]error, error)
	lines       func(ctx context.Context, jobs []string) (map[string][]shopdb.Line, map[string]error, error)
}

func (f *fakeStore) OpenRequests(ctx context.Context, since time.Time) ([]shopdb.Request, error) {
	if f.open == nil {
		return nil, errNotFaked
	}
	return f.open(ctx, since)
}

func (f *fakeStore) Reserve(ctx context.Context, nr shopdb.NewRequest) (shopdb.Request, error) {
	if f.reserve == nil {
		return shopdb.Request{}, errNotFaked
	}
	return f.reserve(ctx, nr)
}

func (f *fakeStore) PlanReserve(ctx context.Context, nr shopdb.NewRequest) (string, bool, error) {
	if f.planReserve == nil {
		return "", false, errNotFaked
	}
	return f.planReserve(ctx, nr)
}

func (f *fakeStore) Update(ctx context.Context, cur, next shopdb.Request, ev shopdb.Event) (shopdb.Request, error) {
	if f.update == nil {
		return shopdb.Request{}, errNotFaked
	}
	return f.update(ctx, cur, next, ev)
}

func (f *fakeStore) Defer(ctx context.Context, nr shopdb.NewRequest, reason string, next time.Time) (shopdb.Request, error) {
	if f.deferReq == nil {
		return shopdb.Request{}, errNotFaked
	}
	return f.deferReq(ctx, nr, reason, next)
}

func (f *fakeStore) JobStates(ctx context.Context, jobs []string) (map[string]shopdb.JobState, map[string]error, error) {
	if f.states == nil {
		return nil, nil, errNotFaked
	}
	return f.states(ctx, jobs)
}

func (f *fakeStore) LineItems(ctx context.Context, jobs []string) (map[string][]shopdb.Line, map[string]error, error) {
	if f.lines == nil {
		return nil, nil, errNotFaked
	}
	return f.lines(ctx, jobs)
}
