package shopdb

import (
	"errors"
	"fmt"
	"net"

	"github.com/quotesync/quotesync/shopdb/internal/server"
)

// explainConnect adds to a failed connection what it means and what to do;
// it names the user, the address and where the password comes from, never
// the password.
func explainConnect(err error, c Config) error {
	from := "no password configured (shop.password_file or shop.password_env)"
	if c.PasswordFrom != "" {
		from = "the password from " + c.PasswordFrom
	}
	var ne *net.OpError
	switch n := mysqlErrno(err); {
	case n == server.ErrAccessDenied:
		return fmt.Errorf("%w\nthe server refused the login: check shop.user (%s) and %s, and that the user may connect from this host", err, c.User, from)
	case n == server.ErrDBAccessDenied:
		return fmt.Errorf("%w\nuser %s has no rights on database %s: GRANT SELECT, INSERT, UPDATE, CREATE, ALTER, INDEX ON `%s`.* TO the quotesync user", err, c.User, c.Database, c.Database)
	case n == server.ErrBadDB:
		return fmt.Errorf("%w\ndatabase %s does not exist on the server: check shop.database", err, c.Database)
	case errors.As(err, &ne):
		return fmt.Errorf("%w\nnothing answers there: check shop.addr and that the database server runs", err)
	}
	return err
}

// explainPrivilege adds the GRANT a denied statement needs.
func explainPrivilege(err error, c Config) error {
	if mysqlErrno(err) != server.ErrTableAccessDenied {
		return err
	}
	return fmt.Errorf("%w\nuser %s lacks that privilege: GRANT it on the shop's tables, e.g. GRANT SELECT, INSERT, UPDATE ON `%s`.* TO the quotesync user", err, c.User, c.Database)
}
