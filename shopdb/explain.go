package shopdb

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/quotesync/quotesync/shopdb/internal/server"
)

// explainConnect adds to a failed connection what it means and what to do;
// it names the user, the address and where the password comes from, never
// the password. The settings are named as they were given: the keys of
// shop:, or --dsn (ConfigFromDSN).
func explainConnect(err error, c Config) error {
	user, addr, database, from := "shop.user ("+c.User+")", "shop.addr", "shop.database", c.PasswordFrom
	addrOnly, tlsPreferred := "shop.addr", "shop.tls: preferred"
	setTLS := "shop.tls: true, with shop.tls_ca_file for a certificate of the server's own"
	grant := "SELECT, INSERT, UPDATE, CREATE, ALTER, INDEX"
	if c.fromDSN {
		user, addr, database = "the user in --dsn ("+c.User+")", "the host and port in --dsn", "its name in --dsn"
		addrOnly, tlsPreferred = "the address in --dsn", "tls=preferred in --dsn"
		setTLS = "tls=true in --dsn, or tls=skip-verify for a certificate of the server's own"
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
		return fmt.Errorf("%w\nthe server at %s offers no TLS: turn it on there (ssl_cert and ssl_key), or set %s (TLS when offered) or false", err, addrOnly, tlsPreferred)
	case authPluginHint(err, "") != "":
		return fmt.Errorf("%w\n%s", err, authPluginHint(err, setTLS))
	case n == server.ErrAccessDenied:
		return fmt.Errorf("%w\nthe server refused the login: check %s and %s, and that the user may connect from this host", err, user, from)
	case n == server.ErrDBAccessDenied:
		return fmt.Errorf("%w\nuser %s has no rights on database %s: GRANT %s ON `%s`.* TO the quotesync user", err, c.User, c.Database, grant, c.Database)
	case n == server.ErrBadDB:
		return fmt.Errorf("%w\ndatabase %s does not exist on the server: check %s", err, c.Database, database)
	case errors.As(err, &ne) || errors.Is(err, mysql.ErrInvalidConn):
		return fmt.Errorf("%w\nnothing answers there: check %s, that the database server runs and listens on that address (bind-address), and that no firewall is in the way", err, addr)
	case c.LockWait > 0 && strings.Contains(err.Error(), "lock_wait_timeout"):
		return fmt.Errorf("%w\nthe server refuses quotesync's lock wait for its sessions (shop.lock_wait sets innodb_lock_wait_timeout and lock_wait_timeout on each connection): set shop.lock_wait: -1s to leave the server's own", err)
	}
	return err
}

// authPluginHint explains a login refused by MySQL 8's authentication
// plugins, "" for any other error. caching_sha2_password (MySQL 8's
// default) takes a password in full only over TLS, over the unix socket,
// or encrypted with the server's RSA key, which the driver asks for: a
// server that hands out no key refuses the login over plain TCP (and
// lets it in again once the password is cached, after one login over TLS
// or the socket, until it restarts). setTLS is how the reader turns TLS
// on ("shop.tls: true", "tls=true in --dsn").
func authPluginHint(err error, setTLS string) string {
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
	case mysqlErrno(err) == server.ErrPluginNotLoaded:
		return "the user logs in by a plugin this server no longer loads (MySQL 8.4 leaves mysql_native_password off): " +
			"on the server, ALTER USER the quotesync user IDENTIFIED WITH caching_sha2_password BY its password"
	}
	return ""
}

// explainPrivilege adds the GRANT a denied statement needs.
func explainPrivilege(err error, c Config) error {
	if mysqlErrno(err) != server.ErrTableAccessDenied {
		return err
	}
	return fmt.Errorf("%w\nuser %s lacks that privilege: GRANT it on the shop's tables, e.g. GRANT SELECT, INSERT, UPDATE ON `%s`.* TO the quotesync user", err, c.User, c.Database)
}
