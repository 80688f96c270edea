package shopdb

import (
	"errors"
	"fmt"
	"net"
)

// MySQL error numbers whose errors quotesync explains.
const (
	errAccessDenied   = 1045 // ER_ACCESS_DENIED_ERROR: user or password
	errDBAccessDenied = 1044 // ER_DBACCESS_DENIED_ERROR: no rights on the database
	errBadDB          = 1049 // ER_BAD_DB_ERROR: unknown database
	// errTableAccessDenied: ER_TABLEACCESS_DENIED_ERROR, a command denied
	// on a table.
	errTableAccessDenied = 1142
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
	case n == errAccessDenied:
		return fmt.Errorf("%w\nthe server refused the login: check shop.user (%s) and %s, and that the user may connect from this host", err, c.User, from)
	case n == errDBAccessDenied:
		return fmt.Errorf("%w\nuser %s has no rights on database %s: GRANT SELECT, INSERT, UPDATE, CREATE, ALTER, INDEX ON `%s`.* TO the quotesync user", err, c.User, c.Database, c.Database)
	case n == errBadDB:
		return fmt.Errorf("%w\ndatabase %s does not exist on the server: check shop.database", err, c.Database)
	case errors.As(err, &ne):
		return fmt.Errorf("%w\nnothing answers there: check shop.addr and that the database server runs", err)
	}
	return err
}

// explainPrivilege adds the GRANT a denied statement needs.
func explainPrivilege(err error, c Config) error {
	if mysqlErrno(err) != errTableAccessDenied {
		return err
	}
	return fmt.Errorf("%w\nuser %s lacks that privilege: GRANT it on the shop's tables, e.g. GRANT SELECT, INSERT, UPDATE ON `%s`.* TO the quotesync user", err, c.User, c.Database)
}

// explainMigrate adds what a failed migration needs.
func explainMigrate(err error, c Config) error {
	switch {
	case errors.Is(err, ErrSchemaTooNew):
		return fmt.Errorf("%w; a newer quotesync migrated this database: upgrade quotesync on this machine to that version (or newer) before running it again", err)
	case mysqlErrno(err) == errTableAccessDenied:
		return fmt.Errorf("%w; the database user needs CREATE, ALTER and INDEX on %s for its own tables (%s*): GRANT CREATE, ALTER, INDEX, SELECT, INSERT, UPDATE ON `%s`.* TO '%s'@…", err, c.Database, c.TablePrefix, c.Database, c.User)
	}
	return err
}
