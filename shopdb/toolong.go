package shopdb

import "github.com/quotesync/quotesync/shopdb/internal/server"

// IsTooLong reports whether err is the shop's database refusing a value
// longer than its column (ER_DATA_TOO_LONG, in strict mode: the default of
// MariaDB and MySQL), as find_job or create_job may for a claim number
// or another value of a request: a fault of that request's data for that
// shop, which trying again cannot fix.
func IsTooLong(err error) bool { return mysqlErrno(err) == server.ErrDataTooLong }

// IsLockWait reports whether err is the server giving up a wait for a
// lock another session holds (innodb_lock_wait_timeout, which
// shop.lock_wait sets): the statement and its transaction's work are
// gone, and the same statement would wait again while the lock is held.
func IsLockWait(err error) bool { return mysqlErrno(err) == server.ErrLockWaitTimeout }
