// Command probe stands in for `quotesync run` in TestUnitUnderSystemd: under
// the unit's sandbox it tries what the daemon needs (and a few things it must
// not be able to do), prints one "probe.<what>: <result>" line each, and
// speaks sd_notify (READY=1, WATCHDOG=1) like the daemon. PROBE_EXIT=N exits
// with N after READY; PROBE_PANIC=1 panics after READY; SIGUSR1 stops the
// watchdog pings; SIGHUP prints probe.reload; SIGTERM exits 0. It answers
// "sync-now" on $RUNTIME_DIRECTORY/control.sock as the daemon does. As the
// unit's start condition (`configured`) it exits 1 while the config still
// has the example's remote.base_url. The config is --config's file
// (/etc/quotesync/config.yaml without it): a site's under quotesync@.service.
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func notify(msg string) error {
	addr := os.Getenv("NOTIFY_SOCKET")
	if addr == "" {
		return errors.New("no NOTIFY_SOCKET")
	}
	if addr[0] == '@' {
		addr = "\x00" + addr[1:]
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte(msg))
	return err
}

// greet reads the MySQL handshake packet: proof that the server was reached.
func greet(network, addr string) string {
	c, err := net.DialTimeout(network, addr, 3*time.Second)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
	b := make([]byte, 128)
	if n, err := c.Read(b); err != nil || n < 6 {
		return fmt.Sprintf("no handshake: %v", err)
	}
	return "ok"
}

func result(err error) string {
	var errno syscall.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &errno):
		return errno.Error()
	default:
		return err.Error()
	}
}

// serveControl answers the control socket's "sync-now" as the daemon does
// (started), from a socket made the daemon's way (0660 in
// RuntimeDirectory=), so that the real `quotesync sync-now` can reach it.
func serveControl(path string) error {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	if err := os.Chmod(path, 0o660); err != nil {
		return err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			if strings.TrimSpace(line) == "sync-now" {
				fmt.Fprintln(c, `{"outcome":"started"}`)
				fmt.Println("probe.sync-now: started")
			}
			c.Close()
		}
	}()
	return nil
}

func readable(path string) string {
	_, err := os.ReadFile(path)
	return result(err)
}

// digest is the start of a file's SHA-256: which file it is, not what.
func digest(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return result(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:4])
}

// configPath is the value of --config in the arguments, or the single
// unit's file.
func configPath() string {
	for i, a := range os.Args {
		if a == "--config" && i+1 < len(os.Args) {
			return os.Args[i+1]
		}
	}
	return "/etc/quotesync/config.yaml"
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "version" {
		fmt.Println("quotesync probe")
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "configured" {
		// The unit's start condition, as quotesync answers it: exit 1 with
		// a message while remote.base_url is still the example's.
		b, err := os.ReadFile(configPath())
		if err == nil && strings.Contains(string(b), "https://api.insurer.example") {
			fmt.Println("probe.configured: quotesync is installed but not configured yet")
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] != "run" {
		os.Exit(2) // what the probe does not stand in for (build-deb asks for the man page)
	}
	p := func(what, res string) { fmt.Printf("probe.%s: %s\n", what, res) }
	p("args", fmt.Sprint(os.Args[1:]))
	p("config", readable(configPath()))
	p("credential.token", readable(os.Getenv("CREDENTIALS_DIRECTORY")+"/token"))
	p("credential.token-digest", digest(os.Getenv("CREDENTIALS_DIRECTORY")+"/token"))
	p("credential.db-password", readable(os.Getenv("CREDENTIALS_DIRECTORY")+"/db-password"))
	p("credentials-dir", readable("/etc/quotesync/credentials/token"))
	p("db.unix", greet("unix", "/run/mysqld/mysqld.sock"))
	p("db.tcp", greet("tcp", "127.0.0.1:3306"))
	p("write.etc", result(os.WriteFile("/etc/quotesync/probe", nil, 0o600)))
	p("write.tmp", result(os.WriteFile("/tmp/probe", nil, 0o600)))
	l, err := net.Listen("tcp", "127.0.0.1:9464")
	p("listen.9464", result(err))
	if err == nil {
		defer l.Close()
	}
	_, err = net.Listen("tcp", "127.0.0.1:80")
	p("listen.80", result(err))
	p("setpriority", result(syscall.Setpriority(syscall.PRIO_PROCESS, 0, 5)))
	p("watchdog-usec", os.Getenv("WATCHDOG_USEC"))
	p("ready", result(notify("READY=1")))
	p("runtime-directory", os.Getenv("RUNTIME_DIRECTORY"))
	p("control", result(serveControl(os.Getenv("RUNTIME_DIRECTORY")+"/control.sock")))

	if code, err := strconv.Atoi(os.Getenv("PROBE_EXIT")); err == nil {
		time.Sleep(500 * time.Millisecond)
		os.Exit(code)
	}
	if os.Getenv("PROBE_PANIC") != "" {
		time.Sleep(500 * time.Millisecond)
		panic("probe panic")
	}
	usec, _ := strconv.Atoi(os.Getenv("WATCHDOG_USEC"))
	interval := time.Duration(usec) * time.Microsecond / 2
	if interval <= 0 {
		interval = time.Hour
	}
	tick := time.NewTicker(interval)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGUSR1)
	pinging := true
	for {
		select {
		case s := <-sig:
			switch s {
			case syscall.SIGHUP:
				p("reload", "ok")
			case syscall.SIGUSR1:
				pinging = false
			case syscall.SIGTERM:
				return
			}
		case <-tick.C:
			if pinging {
				_ = notify("WATCHDOG=1")
			}
		}
	}
}
