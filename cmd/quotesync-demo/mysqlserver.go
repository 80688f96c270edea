package main

import (
	"cmp"
	"context"
	"crypto/rand"
	gosql "database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/memory"
	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
	vmysql "github.com/dolthub/vitess/go/mysql"
	"github.com/go-sql-driver/mysql"
	"github.com/sirupsen/logrus"

	"github.com/quotesync/quotesync/shopdb/sampleshop"
)

// Of the embedded server.
const (
	// DefaultMySQLAddr listens on a free loopback port.
	DefaultMySQLAddr = "127.0.0.1:0"
	// DefaultMySQLUser is the account the daemon logs in with, with a
	// random password.
	DefaultMySQLUser = "quotesync"
	// DefaultMySQLDatabase is the in-memory database created at start.
	DefaultMySQLDatabase = "shop"
	// DefaultLockWaitTimeout bounds how long a statement waits for another
	// session's transaction (see turnHandler), like innodb_lock_wait_timeout.
	DefaultLockWaitTimeout = 10 * time.Second
)

// startMySQL starts go-mysql-server in-process with one empty in-memory
// database and one superuser, listening on addr (DefaultMySQLAddr when
// empty; keep it on loopback: the server holds no real data but accepts any
// SQL), with whole transactions serialised (turnHandler), a statement
// waiting at most lockWait (DefaultLockWaitTimeout when zero; negative
// serves raw go-mysql-server, whose concurrent transactions lose writes:
// only the probes that pin that behaviour want it). It returns the client's
// configuration (parseTime=true, the database selected), usable at once,
// and an idempotent stop func that closes the listener and every open
// session.
func startMySQL(addr string, lockWait time.Duration) (mc *mysql.Config, stop func() error, err error) {
	addr, lockWait = cmp.Or(addr, DefaultMySQLAddr), cmp.Or(lockWait, DefaultLockWaitTimeout)
	// go-mysql-server and its vitess fork log through logrus's standard
	// logger: the demo shows none of it.
	logrus.SetOutput(io.Discard)
	logrus.SetLevel(logrus.PanicLevel)
	// Primary keys are indexes (later GMS versions always do this; there
	// these two calls no longer exist). Without them a FOREIGN KEY to a
	// primary key fails: "missing index for foreign key … on the referenced
	// table …". The option covers databases made by CREATE DATABASE.
	db := memory.NewDatabase(DefaultMySQLDatabase)
	db.BaseDatabase.EnablePrimaryKeyIndexes()
	pro := memory.NewDBProvider(db)
	pro.WithOption(memory.NativeIndexProvider(true))
	engine := sqle.NewDefault(pro)
	mdb, password := engine.Analyzer.Catalog.MySQLDb, rand.Text()
	ed := mdb.Editor()
	// "localhost" matches every loopback client (GMS maps 127.0.0.1 and ::1 to it).
	mdb.AddSuperUser(ed, DefaultMySQLUser, "localhost", password)
	ed.Close()

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	var turns *turnHandler
	wrap := func(h vmysql.Handler) (vmysql.Handler, error) {
		if lockWait < 0 {
			return h, nil
		}
		turns = &turnHandler{Handler: h, wait: lockWait, turn: make(chan struct{}, 1)}
		return turns, nil
	}
	srv, err := server.NewServerWithHandler(server.Config{Protocol: "tcp", Address: ln.Addr().String(), Listener: ln},
		engine, sql.NewContext, memory.NewSessionBuilder(pro), nil, wrap)
	if err != nil {
		_ = ln.Close()
		return nil, nil, fmt.Errorf("create embedded mysql server: %w", err)
	}
	if turns != nil {
		turns.sessions = srv.SessionManager()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Start() // returns when the listener is closed
	}()
	stop = sync.OnceValue(func() error {
		err := srv.Close()
		<-done
		// Close the sessions still open so their goroutines end too.
		for _, p := range engine.ProcessList.Processes() {
			srv.SessionManager().KillConnection(p.Connection)
		}
		// Engine.Close always reports the cancellation of its own
		// background threads' context: that is its normal end.
		if cerr := engine.Close(); !errors.Is(cerr, context.Canceled) {
			err = errors.Join(err, cerr)
		}
		return err
	})
	mc = mysql.NewConfig()
	mc.User, mc.Passwd, mc.Net, mc.Addr = DefaultMySQLUser, password, "tcp", ln.Addr().String()
	mc.DBName, mc.ParseTime = DefaultMySQLDatabase, true
	return mc, stop, nil
}

// startShop starts the embedded server and loads the sample shop through
// a pool of the shop application's own.
func startShop(ctx context.Context, addr string) (mc *mysql.Config, stop func() error, pool *gosql.DB, err error) {
	if mc, stop, err = startMySQL(addr, 0); err != nil {
		return nil, nil, nil, fmt.Errorf("start the embedded mysql server: %w", err)
	}
	if pool, err = gosql.Open("mysql", mc.FormatDSN()); err == nil {
		pool.SetMaxOpenConns(2)
		if err = sampleshop.Apply(ctx, pool); err != nil {
			_ = pool.Close()
		}
	}
	if err != nil {
		return nil, nil, nil, errors.Join(fmt.Errorf("load the sample shop: %w", err), stop())
	}
	return mc, stop, pool, nil
}

// serveMySQL starts the embedded server with the sample shop loaded,
// prints its DSN and serves until ctx ends (Ctrl-C): for looking around
// with a MySQL client, or running shopdb's tests against it (EMBEDDED-SERVER.md).
func serveMySQL(ctx context.Context, addr string, stdout, stderr io.Writer) int {
	mc, stop, pool, err := startShop(ctx, addr)
	if err != nil {
		fmt.Fprintf(stderr, "quotesync-demo: %v\n", err)
		return 1
	}
	_ = pool.Close() // the shop is loaded; a client brings its own connections
	// The password is random and the data in memory: printing the DSN is
	// the point of this mode.
	fmt.Fprintf(stdout, "embedded MySQL-compatible server ready, sample shop loaded\n  DSN: %s\nPress Ctrl-C to stop.\n", mc.FormatDSN())
	<-ctx.Done()
	if err := stop(); err != nil {
		fmt.Fprintf(stderr, "quotesync-demo: stop the embedded mysql server: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "stopped")
	return 0
}
