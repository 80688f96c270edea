package shopdb

import (
	"errors"
	"fmt"
	"net"

	"github.com/go-sql-driver/mysql"
	"github.com/quotesync/quotesync/shopdb/internal/server"
)

// explainConnect adds to a failed connection what it means and what to do;
// it names the user, the address and where the password comes from, never
// the password. The settings are named as they were given: the keys of
// shop:, or --dsn (ConfigFromDSN).
func explainConnect(err error, c Config) error {
	user, addr, database, from := "shop.user ("+c.User+")", "shop.addr", "shop.database", c.PasswordFrom
	grant := "SELECT, INSERT, UPDATE, CREATE, ALTER, INDEX"
	if c.fromDSN {
		user, addr, database = "the user in --dsn ("+c.User+")", "the host and port in --dsn", "its name in --dsn"
		grant = "SELECT" // init reads the schema and a few rows
	}
	switch {
	case from != "":
		from = "the password from " + from
	case c.fromDSN:
		from = "no password given (--password-file, or the variable QUOTESYNC_DB_PASSWORD)"
	default:
		from = "no password configured (shop.password_file or shop.password_env)"
	}
	var ne net.Error
	switch n := mysqlErrno(err); {
	case n == server.ErrAccessDenied:
		return fmt.Errorf("%w\nthe server refused the login: check %s and %s, and that the user may connect from this host", err, user, from)
	case n == server.ErrDBAccessDenied:
		return fmt.Errorf("%w\nuser %s has no rights on database %s: GRANT %s ON `%s`.* TO the quotesync user", err, c.User, c.Database, grant, c.Database)
	case n == server.ErrBadDB:
		return fmt.Errorf("%w\ndatabase %s does not exist on the server: check %s", err, c.Database, database)
	case errors.As(err, &ne) || errors.Is(err, mysql.ErrInvalidConn):
		return fmt.Errorf("%w\nnothing answers there: check %s, that the database server runs and listens on that address (bind-address), and that no firewall is in the way", err, addr)
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
