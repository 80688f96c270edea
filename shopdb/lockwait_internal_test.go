package shopdb

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestLockWaitParams: shop.lock_wait reaches the driver as both of the
// server's lock waits, in whole seconds, on every new connection; a
// negative one leaves the server's own; a server that refuses them per
// session is told apart, with the setting that helps.
func TestLockWaitParams(t *testing.T) {
	c := Config{User: "u", Database: "shop", LockWait: 3 * time.Second}
	m := c.withDefaults().mysqlConfig()
	if got := m.Params; got["innodb_lock_wait_timeout"] != "3" || got["lock_wait_timeout"] != "3" || len(got) != 2 {
		t.Errorf("driver params %v, want both lock waits 3", got)
	}
	if got := (Config{User: "u", Database: "shop"}).withDefaults().mysqlConfig().Params["innodb_lock_wait_timeout"]; got != "5" {
		t.Errorf("default innodb_lock_wait_timeout %q, want 5 (DefaultLockWait)", got)
	}
	c.LockWait = -time.Second
	if got := c.withDefaults().mysqlConfig().Params; len(got) != 0 {
		t.Errorf("driver params %v with a negative shop.lock_wait, want none", got)
	}
	c.LockWait = 1500 * time.Millisecond
	if err := c.validateConnection(); err == nil || !strings.Contains(err.Error(), "shop.lock_wait: 1.5s must be whole seconds") {
		t.Errorf("Validate with a lock wait of 1.5s: %v", err)
	}
	refused := errors.New("Error 1105 (HY000): Variable 'innodb_lock_wait_timeout' is a GLOBAL variable and should be set with SET GLOBAL")
	if got := explainConnect(refused, Config{LockWait: 5 * time.Second}).Error(); !strings.Contains(got, "set shop.lock_wait: -1s") {
		t.Errorf("a server refusing the session lock wait: %q lacks the setting that helps", got)
	}
}
