package shopdbtest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
)

// Server is a MariaDB server of the tests' own, on a fresh data directory
// and its own port on loopback: for what the shared test server cannot be
// made without touching every other test (a server-wide sql_mode, TLS with
// a certificate a test made). Its root logs in over TCP without a password.
type Server struct {
	// Addr is host:port on loopback.
	Addr string
	// Mode is the server's sql_mode, as it reports it.
	Mode string
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
	log  *bytes.Buffer
	stop sync.Once
}

// ServerOptions say how to start a Server.
type ServerOptions struct {
	// SQLMode is the server's sql_mode (every session starts with it): ""
	// the empty mode of old servers, nil MariaDB's default.
	SQLMode *string
	// TLSCert, TLSKey and TLSCA are PEM files: the server's certificate and
	// key, and the CA it names (ssl_cert, ssl_key, ssl_ca); empty: no TLS.
	TLSCert, TLSKey, TLSCA string
}

// MySQL8Mode is the sql_mode MySQL 8 sets by default; EmptyMode the empty
// one of old servers (and of shops that turned the strict modes off).
const (
	MySQL8Mode = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"
	EmptyMode  = ""
)

// ErrNoServerBinary says that this machine has no mariadbd (or
// mariadb-install-db) to start a server of a test's own with.
var ErrNoServerBinary = errors.New("no mariadbd or mariadb-install-db on this machine (Debian: apt-get install mariadb-server)")

// serverBinaries finds the server and its installer, in PATH or the
// usual directories of programs (sbin is often not in a user's PATH).
func serverBinaries() (server, install string, err error) {
	dirs := append(filepath.SplitList(os.Getenv("PATH")), "/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin")
	find := func(names ...string) string {
		for _, n := range names {
			for _, dir := range dirs {
				if p, err := exec.LookPath(filepath.Join(dir, n)); err == nil && filepath.IsAbs(p) {
					return p
				}
			}
		}
		return ""
	}
	server, install = find("mariadbd", "mysqld"), find("mariadb-install-db", "mysql_install_db")
	if server == "" || install == "" {
		return "", "", ErrNoServerBinary
	}
	return server, install, nil
}

// StartServer starts a server of the test's own, stopped and removed in
// tb.Cleanup. Without a mariadbd on the machine the test is skipped,
// saying so loudly; any other failure fails it.
func StartServer(tb testing.TB, o ServerOptions) *Server {
	tb.Helper()
	s, err := LaunchServer(o)
	if errors.Is(err, ErrNoServerBinary) {
		tb.Skipf("SKIPPED, NOT RUN: this test starts a MariaDB server of its own and %v", err)
	}
	if err != nil {
		tb.Fatalf("shopdbtest: %v", err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// LaunchServer starts a server that lives until Stop (for a server
// shared by the tests of a package, stopped in TestMain); the error wraps
// ErrNoServerBinary when the machine has none.
func LaunchServer(o ServerOptions) (*Server, error) {
	server, install, err := serverBinaries()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "qstest-server-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, done: make(chan struct{}), log: &bytes.Buffer{}}
	// Small files: a test server holds a few tables.
	small := []string{"--innodb-log-file-size=4M", "--innodb-buffer-pool-size=16M", "--innodb-data-file-path=ibdata1:4M:autoextend"}
	args := append([]string{"--no-defaults", "--datadir=" + filepath.Join(dir, "data"), "--auth-root-authentication-method=normal", "--skip-test-db"}, small...)
	args = append(args, runAs()...)
	if out, err := exec.Command(install, args...).CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("make a data directory with %s: %v\n%s", install, err, lastLines(string(out), 20))
	}
	for attempt := 0; ; attempt++ {
		err := s.start(server, o, small)
		if err == nil {
			return s, nil
		}
		s.end()
		if attempt == 2 || !strings.Contains(s.log.String(), "Address already in use") {
			os.RemoveAll(dir)
			return nil, err
		}
		// Another process took the port between our look and the
		// server's bind: try another.
		s.done, s.stop, s.log = make(chan struct{}), sync.Once{}, &bytes.Buffer{}
	}
}

// runAs is --user for root (mariadbd refuses to run as root without it).
func runAs() []string {
	if os.Geteuid() != 0 {
		return nil
	}
	name := "root"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return []string{"--user=" + name}
}

// start runs mariadbd on a free port and waits until root can log in.
func (s *Server) start(server string, o ServerOptions, small []string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	args := append([]string{"--no-defaults", "--datadir=" + filepath.Join(s.dir, "data"),
		"--socket=" + filepath.Join(s.dir, "sock"), "--pid-file=" + filepath.Join(s.dir, "pid"),
		"--port=" + strconv.Itoa(port), "--bind-address=127.0.0.1",
		"--max-connections=300", "--performance-schema=0"}, small...)
	args = append(args, runAs()...)
	if o.SQLMode != nil {
		args = append(args, "--sql-mode="+*o.SQLMode)
	}
	if o.TLSCert != "" {
		args = append(args, "--ssl-cert="+o.TLSCert, "--ssl-key="+o.TLSKey, "--ssl-ca="+o.TLSCA)
	}
	s.cmd = exec.Command(server, args...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	// The server dies with the test process, even when that is killed.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", server, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(60 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("%s ended at start:\n%s", server, lastLines(s.log.String(), 20))
		case <-time.After(100 * time.Millisecond):
		}
		if last = s.ping(); last == nil {
			return nil
		}
	}
	return fmt.Errorf("%s did not let root in on %s within 60s: %v\n%s", server, s.Addr, last, lastLines(s.log.String(), 20))
}

// ping logs in as root and reads the server's sql_mode.
func (s *Server) ping() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	db, err := sql.Open("mysql", s.DSN())
	if err != nil {
		return err
	}
	defer db.Close()
	return db.QueryRowContext(ctx, "SELECT @@GLOBAL.sql_mode").Scan(&s.Mode)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// DSN is root's DSN on the server, no database.
func (s *Server) DSN() string { return s.config().FormatDSN() }

func (s *Server) config() *mysql.Config {
	c := mysql.NewConfig()
	c.User, c.Net, c.Addr = "root", "tcp", s.Addr
	c.ParseTime, c.Loc, c.InterpolateParams = true, time.UTC, true
	return c
}

// Stop ends the server and removes its data directory.
func (s *Server) Stop() {
	s.end()
	os.RemoveAll(s.dir)
}

// end ends the server's process.
func (s *Server) end() {
	s.stop.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			_ = s.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-s.done:
			case <-time.After(20 * time.Second):
				_ = s.cmd.Process.Kill()
				<-s.done
			}
		}
	})
}

// NewDatabase creates an empty database on s, dropped in tb.Cleanup.
func (s *Server) NewDatabase(tb testing.TB) *Database {
	tb.Helper()
	return newDatabase(tb, s.config())
}

// NewSampleShop creates a database holding the sample shop on the server.
func (s *Server) NewSampleShop(tb testing.TB) *Database {
	tb.Helper()
	return withSampleShop(tb, s.NewDatabase(tb))
}

// SQL opens a pool as root on s (no database), closed in tb.Cleanup.
func (s *Server) SQL(tb testing.TB) *sqlx.DB {
	tb.Helper()
	db, err := sqlx.Open("mysql", s.DSN())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}
