package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Lock is the single-instance lock: a MySQL user lock (GET_LOCK) held by
// one pinned connection. The lock lives exactly as long as that session, so
// a heartbeat checks it every Config.LockHeartbeat and closes Lost() the
// moment the session or the lock is gone; the session's wait_timeout
// (Config.LockSessionTimeout) frees the lock soon after a holder vanishes
// without a word. Cancel the leader's work when Lost() closes.
type Lock struct {
	name      string
	conn      *sql.Conn
	connID    int64
	heartbeat time.Duration
	// checkTimeout bounds one heartbeat's check: a check that times out
	// closes the session (and frees the lock), so it is given half the
	// session's wait_timeout, not the heartbeat's interval. A loaded
	// server answering in 300 ms must not cost a 200 ms heartbeat its
	// lock, and a vanished holder still stops well before the server
	// frees the lock for another instance.
	checkTimeout time.Duration

	mu       sync.Mutex // serialises use of conn
	released bool

	lost     chan struct{}
	lostOnce sync.Once
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// AcquireLock takes the lock without waiting: ErrNotLeader when another
// session holds it.
func (st *Store) AcquireLock(ctx context.Context) (*Lock, error) {
	ctx, cancel := st.timeout(ctx)
	defer cancel()
	name := st.cfg.LockName
	conn, err := st.x.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("acquire lock %s: %w", name, err)
	}
	l := &Lock{name: name, conn: conn, heartbeat: st.cfg.LockHeartbeat, lost: make(chan struct{}),
		checkTimeout: max(st.cfg.LockHeartbeat, st.cfg.LockSessionTimeout/2)}
	secs := int((st.cfg.LockSessionTimeout + time.Second - 1) / time.Second)
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("SET SESSION wait_timeout = %d", secs)); err != nil {
		l.drop()
		return nil, fmt.Errorf("acquire lock %s: set wait_timeout: %w", name, err)
	}
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0), CONNECTION_ID()", name).Scan(&got, &l.connID); err != nil {
		l.drop()
		return nil, fmt.Errorf("acquire lock %s: %w", name, err)
	}
	if !got.Valid || got.Int64 != 1 {
		var holder sql.NullInt64
		_ = conn.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", name).Scan(&holder)
		l.drop()
		if holder.Valid {
			return nil, fmt.Errorf("acquire lock %s: held by connection %d: %w", name, holder.Int64, ErrNotLeader)
		}
		return nil, fmt.Errorf("acquire lock %s: %w", name, ErrNotLeader)
	}
	hctx, hcancel := context.WithCancel(context.Background())
	l.cancel = hcancel
	l.wg.Add(1)
	go l.beat(hctx)
	return l, nil
}

// beat checks the lock every heartbeat until it is lost or released.
func (l *Lock) beat(ctx context.Context) {
	defer l.wg.Done()
	t := time.NewTicker(l.heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, l.checkTimeout)
		err := l.Check(cctx)
		cancel()
		if errors.Is(err, ErrLeaseLost) {
			return
		}
	}
}

// Check asks the server, in one round trip on the pinned connection,
// whether this session still holds the lock. ErrLeaseLost (and Lost()
// closes) when it does not or the connection failed.
func (l *Lock) Check(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return fmt.Errorf("check lock %s: released: %w", l.name, ErrLeaseLost)
	}
	select {
	case <-l.lost:
		return fmt.Errorf("check lock %s: %w", l.name, ErrLeaseLost)
	default:
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("check lock %s: %w", l.name, err) // no verdict
	}
	// Any failure from here on means the session is gone (the driver
	// closes a connection whose query is cancelled), and the lock with it.
	var mine sql.NullBool
	err := l.conn.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?) = CONNECTION_ID()", l.name).Scan(&mine)
	if err == nil && mine.Valid && mine.Bool {
		return nil
	}
	l.markLost()
	if err != nil {
		return fmt.Errorf("check lock %s: %v: %w", l.name, err, ErrLeaseLost)
	}
	return fmt.Errorf("check lock %s: no longer held by this session: %w", l.name, ErrLeaseLost)
}

// markLost closes Lost() and drops the connection (once); l.mu is held.
func (l *Lock) markLost() {
	l.lostOnce.Do(func() {
		close(l.lost)
		l.drop()
	})
}

// Lost is closed when the lock is found gone (or once it is released).
func (l *Lock) Lost() <-chan struct{} { return l.lost }

// Release frees the lock and closes its connection (not back into the
// pool: a pooled session could still hold the lock). Safe to call twice.
func (l *Lock) Release() error {
	if l.cancel != nil {
		l.cancel()
	}
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return nil
	}
	l.released = true
	var err error
	select {
	case <-l.lost:
	default:
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var freed sql.NullInt64 // SELECT, not DO: go-mysql-server has no DO
		err = l.conn.QueryRowContext(ctx, "SELECT RELEASE_LOCK(?)", l.name).Scan(&freed)
		cancel()
	}
	l.markLost()
	return wrapf(err, "release lock %s", l.name)
}

// drop closes the pinned connection for good.
func (l *Lock) drop() {
	_ = l.conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = l.conn.Close()
}
