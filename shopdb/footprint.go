package shopdb

import (
	"net"
	"strings"
)

// Footprint is what a Config takes on its database server, its defaults
// applied: the schema and prefix of quotesync's tables, and the name of
// the single-instance lock. Table names are per schema; GET_LOCK names
// are server-wide, so the default name carries the schema and the
// prefix: two sites in two schemas of one server meet nowhere.
type Footprint struct {
	// Addr is the server's address, as configured (shop.addr).
	Addr        string
	Database    string
	TablePrefix string
	LockName    string
}

// Footprint returns c's footprint.
func (c Config) Footprint() Footprint {
	d := c.withDefaults()
	return Footprint{Addr: d.Addr, Database: d.Database, TablePrefix: d.TablePrefix, LockName: d.LockName}
}

// Shares says whether f and g would use the same state tables (one server,
// one schema, one prefix) and the same lock (one server, one name). It errs
// on the side of meeting: names are compared regardless of case (MySQL's
// GET_LOCK names and, with lower_case_table_names, its schema names are),
// and every address of this host (a unix socket, a loopback address,
// whatever the port) counts as one server. Addresses that name one remote
// server differently (a host name and its IP) are not recognised as one.
func (f Footprint) Shares(g Footprint) (tables, lock bool) {
	if serverKey(f.Addr) != serverKey(g.Addr) {
		return false, false
	}
	tables = strings.EqualFold(f.Database, g.Database) && strings.EqualFold(f.TablePrefix, g.TablePrefix)
	lock = strings.EqualFold(f.LockName, g.LockName)
	return tables, lock
}

// serverKey names the server at addr: "local" for this host's, else the
// host (lower case) and port (3306 when none is given).
func serverKey(addr string) string {
	if strings.HasPrefix(addr, "/") {
		return "local"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = addr, "3306"
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return "local"
	}
	return host + ":" + port
}
