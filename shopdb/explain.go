package shopdb

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// MySQL error numbers whose errors quotesync explains.
const (
	errAccessDenied   = 1045 // ER_ACCESS_DENIED_ERROR: user or password
	errDBAccessDenied = 1044 // ER_DBACCESS_DENIED_ERROR: no rights on the database
	errBadDB          = 1049 // ER_BAD_DB_ERROR: unknown database
	// errTableAccessDenied: ER_TABLEACCESS_DENIED_ERROR, a command denied
	// on a table.
	errTableAccessDenied = 1142
	// errPluginNotLoaded: ER_PLUGIN_IS_NOT_LOADED, e.g. a user of
	// mysql_native_password on MySQL 8.4.
	errPluginNotLoaded = 1524
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
	var te *TLSError
	var unknownCA x509.UnknownAuthorityError
	var badName x509.HostnameError
	switch n := mysqlErrno(err); {
	case errors.As(err, &te):
		return err // it names its key and the fix
	case errors.As(err, &unknownCA):
		return fmt.Errorf("%w\nshop.tls: true trusts the system's CAs only, and none of them signed the server's certificate: "+
			"set shop.tls_ca_file to the CA that did (for MySQL 8's own certificate, ca.pem of its data directory)", err)
	case errors.As(err, &badName):
		return fmt.Errorf("%w\nset shop.tls_server_name to a name the certificate carries", err)
	case errors.Is(err, mysql.ErrNoTLS):
		return fmt.Errorf("%w\nthe server at shop.addr offers no TLS: turn it on there (ssl_cert and ssl_key), or set shop.tls: preferred (TLS when offered) or false", err)
	case AuthPluginHint(err, "") != "":
		return fmt.Errorf("%w\n%s", err, AuthPluginHint(err, "shop.tls: true, with shop.tls_ca_file for a certificate of the server's own"))
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

// AuthPluginHint explains a login refused by MySQL 8's authentication
// plugins, "" for any other error. caching_sha2_password (MySQL 8's
// default) takes a password in full only over TLS, over the unix socket,
// or encrypted with the server's RSA key, which the driver asks for: a
// server that hands out no key refuses the login over plain TCP (and
// lets it in again once the password is cached, after one login over TLS
// or the socket, until it restarts). setTLS is how the reader turns TLS
// on ("shop.tls: true", "tls=true in --dsn").
func AuthPluginHint(err error, setTLS string) string {
	if err == nil {
		return ""
	}
	text := err.Error()
	switch {
	case strings.Contains(text, "caching_sha2_password") || strings.Contains(text, "sha256_password") ||
		errors.Is(err, mysql.ErrUnknownPlugin):
		return fmt.Sprintf("the user logs in by MySQL 8's caching_sha2_password, which over plain TCP needs the server's RSA key, and the server gave none: "+
			"connect over TLS (%s), or over the unix socket (shop.addr: its path), or let the server hand out its key "+
			"(caching_sha2_password_auto_generate_rsa_keys=ON, or caching_sha2_password_private_key_path and public_key_path)", setTLS)
	case mysqlErrno(err) == errPluginNotLoaded:
		return "the user logs in by a plugin this server no longer loads (MySQL 8.4 leaves mysql_native_password off): " +
			"on the server, ALTER USER the quotesync user IDENTIFIED WITH caching_sha2_password BY its password"
	}
	return ""
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
