package sync

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
)

// statesShop is a sample shop without shop_changed with n generated jobs
// of two lines each, and quotesync's view of it.
func statesShop(t *testing.T, n int) (*shopdb.DB, []string) {
	t.Helper()
	d := shopdbtest.NewSampleShop(t)
	jobs, err := d.Shop().GenerateJobs(context.Background(), n, 2)
	if err != nil {
		t.Fatal(err)
	}
	cfg := d.Config()
	cfg.Queries.ShopChanged = ""
	return d.Open(t, cfg), jobs
}

// statesRead is the outcome of one estimate-state read.
type statesRead struct {
	states map[string]shopdb.JobState
	bad    map[string]error
	err    error
}

// readStatesAsync reads the states of jobs through s in a goroutine.
func readStatesAsync(ctx context.Context, s *stateReads, db *shopdb.DB, jobs []string) <-chan statesRead {
	ch := make(chan statesRead, 1)
	go func() {
		states, bad, err := s.read(ctx, db, jobs)
		ch <- statesRead{states, bad, err}
	}()
	return ch
}

func TestStateReadsOverlappingShareOneStatement(t *testing.T) {
	db, jobs := statesShop(t, 6)
	aa, bb := jobs[:4], append(slices.Clone(jobs[4:]), "RO-NONE") // one job without an estimate
	want, _, err := db.JobStates(context.Background(), jobs)
	if err != nil || len(want) != len(jobs) {
		t.Fatalf("states of every job: %d, %v", len(want), err)
	}
	// A window no test waits for: the statement is sent once both asked.
	s := &stateReads{engines: 2, window: time.Hour}
	ctx := context.Background()
	chA := readStatesAsync(ctx, s, db.Insurer("aa"), aa)
	chB := readStatesAsync(ctx, s, db.Insurer("bb"), bb)
	for name, c := range map[string]struct {
		ch   <-chan statesRead
		jobs []string
	}{"aa": {chA, aa}, "bb": {chB, bb}} {
		r := <-c.ch
		if r.err != nil {
			t.Fatalf("%s: %v", name, r.err)
		}
		got := slices.Sorted(maps.Keys(r.states))
		mine := slices.Sorted(slices.Values(slices.DeleteFunc(slices.Clone(c.jobs), func(j string) bool { return j == "RO-NONE" })))
		if !slices.Equal(got, mine) {
			t.Errorf("%s got the states of %v, want exactly those of its jobs %v", name, got, mine)
		}
		for _, j := range got {
			if r.states[j] != want[j] {
				t.Errorf("%s: state of %s is %+v, a read of its own says %+v", name, j, r.states[j], want[j])
			}
		}
		if len(r.bad) != 0 {
			t.Errorf("%s: bad %v", name, r.bad)
		}
	}
	if n := s.statements.Load(); n != 1 {
		t.Errorf("%d statements sent for two overlapping reads, want 1", n)
	}
}

func TestStateReadsLoneEngineDoesNotWait(t *testing.T) {
	db, jobs := statesShop(t, 3)
	// One engine: no other could join, the read is sent at once whatever
	// the window.
	s := &stateReads{engines: 1, window: time.Hour}
	done := readStatesAsync(context.Background(), s, db, jobs)
	select {
	case r := <-done:
		if r.err != nil || len(r.states) != len(jobs) {
			t.Fatalf("lone read: %d states, %v", len(r.states), r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a lone engine's read waited for others")
	}
	if n := s.statements.Load(); n != 1 {
		t.Errorf("%d statements, want 1", n)
	}
}

func TestStateReadsAloneAmongSeveralWaitsTheWindowOnly(t *testing.T) {
	db, jobs := statesShop(t, 3)
	s := &stateReads{engines: 3, window: 20 * time.Millisecond}
	start := time.Now()
	states, _, err := s.read(context.Background(), db, jobs)
	if err != nil || len(states) != len(jobs) {
		t.Fatalf("read: %d states, %v", len(states), err)
	}
	if took := time.Since(start); took < 20*time.Millisecond {
		t.Errorf("read took %s, shorter than the window: it did not wait for the others", took)
	}
	// The next read is a statement of its own: the batch sent is not
	// joined.
	if _, _, err := s.read(context.Background(), db, jobs[:1]); err != nil {
		t.Fatal(err)
	}
	if n := s.statements.Load(); n != 2 {
		t.Errorf("%d statements for two reads one after the other, want 2", n)
	}
}

func TestStateReadsErrorReachesEveryCaller(t *testing.T) {
	db, jobs := statesShop(t, 2)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s := &stateReads{engines: 2, window: time.Hour}
	chA := readStatesAsync(context.Background(), s, db, jobs[:1])
	chB := readStatesAsync(context.Background(), s, db, jobs[1:])
	for _, ch := range []<-chan statesRead{chA, chB} {
		if r := <-ch; r.err == nil {
			t.Errorf("read on a closed database: no error, states %v", r.states)
		}
	}
	if n := s.statements.Load(); n != 1 {
		t.Errorf("%d statements, want 1", n)
	}
}

func TestStateReadsPanicIsEveryCallersError(t *testing.T) {
	s := &stateReads{engines: 2, window: time.Hour}
	var db *shopdb.DB // JobStates on it panics
	chA := readStatesAsync(context.Background(), s, db, []string{"RO-1"})
	chB := readStatesAsync(context.Background(), s, db, []string{"RO-2"})
	for _, ch := range []<-chan statesRead{chA, chB} {
		if r := <-ch; r.err == nil || !strings.Contains(r.err.Error(), "panic") {
			t.Errorf("read that panicked: error %v, want the panic", r.err)
		}
	}
}

func TestStateReadsCallerStopsAtItsContext(t *testing.T) {
	db, jobs := statesShop(t, 2)
	s := &stateReads{engines: 3, window: 300 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	chA := readStatesAsync(ctx, s, db, jobs[:1])
	chB := readStatesAsync(context.Background(), s, db, jobs[1:])
	time.Sleep(50 * time.Millisecond) // both asked; the window still runs
	cancel()
	select {
	case r := <-chA:
		if !errors.Is(r.err, context.Canceled) {
			t.Errorf("cancelled caller: error %v, want context.Canceled", r.err)
		}
	case <-time.After(200 * time.Millisecond):
		t.Fatal("a cancelled caller waited for the statement")
	}
	// The other still gets its states, from the same statement.
	if r := <-chB; r.err != nil || len(r.states) != 1 {
		t.Errorf("other caller: %d states, %v", len(r.states), r.err)
	}
	if n := s.statements.Load(); n != 1 {
		t.Errorf("%d statements, want 1", n)
	}
}

func TestStateReadsNobodyWaitingSendsNothing(t *testing.T) {
	db, jobs := statesShop(t, 1)
	s := &stateReads{engines: 2, window: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	ch := readStatesAsync(ctx, s, db, jobs)
	time.Sleep(50 * time.Millisecond) // it asked; the window runs
	cancel()
	if r := <-ch; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled caller: error %v, want context.Canceled", r.err)
	}
	// The next caller is not joined to the abandoned read: it opens one of
	// its own, and the abandoned one sends nothing.
	chB := readStatesAsync(context.Background(), s, db, jobs)
	chC := readStatesAsync(context.Background(), s, db, jobs)
	for _, ch := range []<-chan statesRead{chB, chC} {
		if r := <-ch; r.err != nil || len(r.states) != 1 {
			t.Errorf("later caller: %d states, %v", len(r.states), r.err)
		}
	}
	if n := s.statements.Load(); n != 1 {
		t.Errorf("%d statements, want 1 (none for the abandoned read)", n)
	}
}
