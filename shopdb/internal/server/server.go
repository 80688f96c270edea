// Package server is what the shop's mapping (package shopdb) and
// quotesync's store (package shopdb/store) both need to know of the MySQL
// or MariaDB server they share: the numbers of the errors they branch on,
// how a DATETIME(6) column keeps a time, and how long a lock name may be.
package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Error numbers quotesync branches on.
const (
	ErrDupEntry          = 1062 // ER_DUP_ENTRY
	ErrNoSuchTable       = 1146 // ER_NO_SUCH_TABLE
	ErrUnknownTable      = 1109 // ER_UNKNOWN_TABLE: e.g. information_schema.INNODB_LOCK_WAITS on MySQL 8
	ErrTableExists       = 1050 // ER_TABLE_EXISTS_ERROR
	ErrDupFieldName      = 1060 // ER_DUP_FIELDNAME
	ErrDupKeyName        = 1061 // ER_DUP_KEYNAME
	ErrCantDropKey       = 1091 // ER_CANT_DROP_FIELD_OR_KEY
	ErrReadOnlyTx        = 1792 // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
	ErrTableAccessDenied = 1142 // ER_TABLEACCESS_DENIED_ERROR: a command denied on a table
	ErrLockWaitTimeout   = 1205 // ER_LOCK_WAIT_TIMEOUT: innodb_lock_wait_timeout ran out
	ErrDataTooLong       = 1406 // ER_DATA_TOO_LONG: a value longer than its column, in strict mode
	ErrParse             = 1064 // ER_PARSE_ERROR: MariaDB, MySQL
	ErrSyntax            = 1149 // ER_SYNTAX_ERROR
	ErrUnknown           = 1105 // ER_UNKNOWN_ERROR: go-mysql-server's "syntax error at position …"
	ErrAccessDenied      = 1045 // ER_ACCESS_DENIED_ERROR: user or password
	ErrDBAccessDenied    = 1044 // ER_DBACCESS_DENIED_ERROR: no rights on the database
	ErrBadDB             = 1049 // ER_BAD_DB_ERROR: unknown database
	ErrPluginNotLoaded   = 1524 // ER_PLUGIN_IS_NOT_LOADED: e.g. mysql_native_password on MySQL 8.4
)

// MaxLockNameLen is the longest GET_LOCK name MySQL 8 takes.
const MaxLockNameLen = 64

// Errno is the server's error number in err, 0 when none.
func Errno(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// Time is t as it reads back from a DATETIME(6) column: UTC,
// microseconds; the zero time stays zero.
func Time(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

// Now is the current time as a DATETIME(6) column keeps it.
func Now() time.Time { return Time(time.Now()) }

// LockName keeps a GET_LOCK name within MySQL's 64 characters by
// replacing a long one with a hash of it.
func LockName(name string) string {
	if len(name) <= MaxLockNameLen {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return "quotesync." + hex.EncodeToString(sum[:16])
}
