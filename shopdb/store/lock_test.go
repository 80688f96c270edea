package store_test

import (
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quotesync/quotesync/shopdb"
	"github.com/quotesync/quotesync/shopdb/shopdbtest"
	"github.com/quotesync/quotesync/shopdb/store"
)

// TestLockPassesOnWhenHolderDies: the first holder's session is killed;
// the second instance gets the lock and the first sees Lost() close.
func TestLockPassesOnWhenHolderDies(t *testing.T) {
	d := shopdbtest.NewDatabase(t)
	a, b := openStore(t, d, d.Config()), openStore(t, d, d.Config())
	ctx := testContext(t)

	la, err := a.AcquireLock(ctx)
	if err != nil {
		t.Fatalf("first AcquireLock: %v", err)
	}
	defer la.Release()
	if _, err := b.AcquireLock(ctx); !errors.Is(err, store.ErrNotLeader) {
		t.Fatalf("second AcquireLock: %v, want ErrNotLeader", err)
	}
	// Re-entrance through another session of the same pool is refused too.
	if _, err := a.AcquireLock(ctx); !errors.Is(err, store.ErrNotLeader) {
		t.Fatalf("AcquireLock again on the holder's pool: %v, want ErrNotLeader", err)
	}
	n := trips(a)
	if err := la.Check(ctx); err != nil {
		t.Fatalf("Check while held: %v", err)
	}
	if got := n(); got < 1 || got > 2 { // the heartbeat may have run meanwhile
		t.Errorf("Check cost %d round trips, want 1", got)
	}

	kill(t, d, store.LockConnectionID(la))
	select {
	case <-la.Lost():
	case <-time.After(5 * time.Second):
		t.Fatal("Lost() did not close within 5s of the session's death")
	}
	if err := la.Check(ctx); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("Check after the kill: %v, want ErrLeaseLost", err)
	}
	lb, err := b.AcquireLock(ctx)
	if err != nil {
		t.Fatalf("AcquireLock after the holder died: %v", err)
	}
	if err := lb.Check(ctx); err != nil {
		t.Errorf("new holder's Check: %v", err)
	}
	if err := la.Release(); err != nil {
		t.Errorf("Release of a lost lock: %v", err)
	}
	if err := lb.Release(); err != nil {
		t.Fatalf("Release: %v", err)
	}
}

// TestLockRelease: after Release another instance gets the lock at once,
// and the released session does not go back into the pool holding it.
func TestLockRelease(t *testing.T) {
	d := shopdbtest.NewDatabase(t)
	a, b := openStore(t, d, d.Config()), openStore(t, d, d.Config())
	ctx := testContext(t)
	for i := 0; i < 3; i++ {
		la, err := a.AcquireLock(ctx)
		if err != nil {
			t.Fatalf("round %d: AcquireLock: %v", i, err)
		}
		if err := la.Release(); err != nil {
			t.Fatalf("round %d: Release: %v", i, err)
		}
		if err := la.Release(); err != nil {
			t.Errorf("second Release: %v", err)
		}
		select {
		case <-la.Lost():
		default:
			t.Error("Lost() is still open after Release")
		}
		if err := la.Check(ctx); !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("Check after Release: %v, want ErrLeaseLost", err)
		}
		lb, err := b.AcquireLock(ctx)
		if err != nil {
			t.Fatalf("round %d: AcquireLock by the other instance after Release: %v", i, err)
		}
		if err := lb.Release(); err != nil {
			t.Fatal(err)
		}
	}
	// No session of a's pool still holds the lock.
	cfg := d.Config()
	var holders int
	if err := d.SQL.Get(&holders, "SELECT COUNT(*) FROM (SELECT IS_USED_LOCK(?) AS h) x WHERE h IS NOT NULL", lockName(t, cfg)); err != nil {
		t.Fatal(err)
	}
	if holders != 0 {
		t.Errorf("lock still held by %d sessions after Release", holders)
	}
}

// lockName is the lock name a DB derives from cfg.
func lockName(t *testing.T, cfg shopdb.Config) string {
	t.Helper()
	db, err := shopdb.Open(testContext(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return db.Config().LockName
}

// TestLockSurvivesASlowServer: a server that answers the heartbeat's
// check later than the heartbeat's interval (a loaded database) keeps
// the lock: the check waits up to half the session's wait_timeout. A
// 200 ms heartbeat used to time its check out at 200 ms, which closed the
// session and lost the lock under load.
func TestLockSurvivesASlowServer(t *testing.T) {
	d := shopdbtest.NewDatabase(t)
	px := newSlowProxy(t, d.Config().Addr)
	cfg := d.Config()
	cfg.Addr = px.ln.Addr().String()
	db := openStore(t, d, cfg)
	ctx := testContext(t)
	l, err := db.AcquireLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	px.delay.Store(int64(350 * time.Millisecond)) // over the 200 ms heartbeat, under half the 2 s wait_timeout
	select {
	case <-l.Lost():
		t.Fatal("the lock was lost to a server answering in 350 ms")
	case <-time.After(1500 * time.Millisecond):
	}
	px.delay.Store(0)
	if err := l.Check(ctx); err != nil {
		t.Errorf("Check once the server is quick again: %v", err)
	}
}

// slowProxy forwards TCP to upstream, holding each chunk from the server
// for delay first.
type slowProxy struct {
	ln    net.Listener
	delay atomic.Int64 // nanoseconds
}

func newSlowProxy(t *testing.T, upstream string) *slowProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	px := &slowProxy{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			go func() { _, _ = io.Copy(u, c); u.Close() }()
			go func() {
				defer c.Close()
				buf := make([]byte, 32<<10)
				for {
					n, err := u.Read(buf)
					if n > 0 {
						time.Sleep(time.Duration(px.delay.Load()))
						if _, werr := c.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return px
}
