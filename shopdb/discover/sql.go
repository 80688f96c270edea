package discover

import (
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ident writes a table or column name for the mapping's SQL: as it is
// when it is a plain lower-case word that is not reserved, else in
// backquotes (reserved words such as order or desc, mixed case, spaces,
// non-ASCII letters). A colon is doubled: the mapping's named-parameter
// syntax reads ":name" anywhere in the text, and "::" is a literal colon.
func Ident(name string) string { return strings.ReplaceAll(quoteIdent(name), ":", "::") }

// plainIdent: lower-case ASCII letters, digits and "_", not starting with a
// digit.
func plainIdent(name string) bool {
	if name == "" || (name[0] >= '0' && name[0] <= '9') {
		return false
	}
	for i := 0; i < len(name); i++ {
		b := name[i]
		if !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_') {
			return false
		}
	}
	return true
}

// usableIdent reports whether a name can be written into the mapping at
// all: not with a "?" (the mapping's binder takes any for a parameter),
// a control character, a line or paragraph separator (YAML readers take
// them for line breaks) or a character that is not printable.
func usableIdent(name string) bool {
	for _, r := range name {
		if r == '?' || r == utf8.RuneError || unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || !unicode.IsPrint(r) && r != ' ' {
			return false
		}
	}
	return name != ""
}

// quoteIdent writes a name for a statement discover runs itself (the
// samples): backquoted, colons as they are, since no named-parameter
// binder reads it.
func quoteIdent(name string) string {
	if plainIdent(name) && !reserved[strings.ToUpper(name)] {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// Literal writes a value seen in the shop's data as an SQL string
// literal: 'FINAL' for plain text, and for anything with a quote, a
// backslash, a colon, a "?" or a character that is not printable, a
// hexadecimal utf8mb4 literal (_utf8mb4 X'…'), which reads the same
// whatever the server's sql_mode and passes the named-parameter binder
// untouched.
func Literal(v string) string {
	plain := true
	for _, r := range v {
		if r == '\'' || r == '\\' || r == ':' || r == '?' || r == '`' || !unicode.IsPrint(r) || r > unicode.MaxASCII {
			plain = false
			break
		}
	}
	if plain {
		return "'" + v + "'"
	}
	if v == "" {
		return "''"
	}
	return "_utf8mb4 X'" + strings.ToUpper(hex.EncodeToString([]byte(v))) + "'"
}

// reserved are the reserved words of MySQL 8.4 and MariaDB 11 (the union):
// a column named like one must be quoted.
var reserved = func() map[string]bool {
	m := map[string]bool{}
	for w := range strings.FieldsSeq(reservedWords) {
		m[w] = true
	}
	return m
}()

const reservedWords = `ACCESSIBLE ADD ALL ALTER ANALYZE AND AS ASC ASENSITIVE BEFORE BETWEEN BIGINT BINARY BLOB BOTH BY
CALL CASCADE CASE CHANGE CHAR CHARACTER CHECK COLLATE COLUMN CONDITION CONSTRAINT CONTINUE CONVERT CREATE
CROSS CUBE CUME_DIST CURRENT_DATE CURRENT_ROLE CURRENT_TIME CURRENT_TIMESTAMP CURRENT_USER CURSOR DATABASE
DATABASES DAY_HOUR DAY_MICROSECOND DAY_MINUTE DAY_SECOND DEC DECIMAL DECLARE DEFAULT DELAYED DELETE
DELETE_DOMAIN_ID DENSE_RANK DESC DESCRIBE DETERMINISTIC DISTINCT DISTINCTROW DIV DO_DOMAIN_IDS DOUBLE DROP
DUAL EACH ELSE ELSEIF EMPTY ENCLOSED ESCAPED EXCEPT EXISTS EXIT EXPLAIN FALSE FETCH FIRST_VALUE FLOAT FLOAT4
FLOAT8 FOR FORCE FOREIGN FROM FULLTEXT FUNCTION GENERAL GENERATED GET GRANT GROUP GROUPING GROUPS HAVING
HIGH_PRIORITY HOUR_MICROSECOND HOUR_MINUTE HOUR_SECOND IF IGNORE IGNORE_DOMAIN_IDS IGNORE_SERVER_IDS IN INDEX
INFILE INNER INOUT INSENSITIVE INSERT INT INT1 INT2 INT3 INT4 INT8 INTEGER INTERSECT INTERVAL INTO
IO_AFTER_GTIDS IO_BEFORE_GTIDS IS ITERATE JOIN JSON_TABLE KEY KEYS KILL LAG LAST_VALUE LATERAL LEAD LEADING
LEAVE LEFT LIKE LIMIT LINEAR LINES LOAD LOCALTIME LOCALTIMESTAMP LOCK LONG LONGBLOB LONGTEXT LOOP
LOW_PRIORITY MASTER_BIND MASTER_HEARTBEAT_PERIOD MASTER_SSL_VERIFY_SERVER_CERT MATCH MAXVALUE MEDIUMBLOB
MEDIUMINT MEDIUMTEXT MIDDLEINT MINUTE_MICROSECOND MINUTE_SECOND MOD MODIFIES NATURAL NOT NO_WRITE_TO_BINLOG
NTH_VALUE NTILE NULL NUMERIC OF OFFSET ON OPTIMIZE OPTIMIZER_COSTS OPTION OPTIONALLY OR ORDER OUT OUTER
OUTFILE OVER PAGE_CHECKSUM PARSE_VCOL_EXPR PARTITION PERCENT_RANK POSITION PRECISION PRIMARY PROCEDURE PURGE
RANGE RANK READ READS READ_WRITE REAL RECURSIVE REF_SYSTEM_ID REFERENCES REGEXP RELEASE RENAME REPEAT REPLACE
REQUIRE RESIGNAL RESTRICT RETURN RETURNING REVOKE RIGHT RLIKE ROW ROWS ROW_NUMBER SCHEMA SCHEMAS
SECOND_MICROSECOND SELECT SENSITIVE SEPARATOR SET SHOW SIGNAL SLOW SMALLINT SPATIAL SPECIFIC SQL SQLEXCEPTION
SQLSTATE SQLWARNING SQL_BIG_RESULT SQL_CALC_FOUND_ROWS SQL_SMALL_RESULT SSL STARTING STATS_AUTO_RECALC
STATS_PERSISTENT STATS_SAMPLE_PAGES STORED STRAIGHT_JOIN SYSTEM TABLE TERMINATED THEN TINYBLOB TINYINT
TINYTEXT TO TRAILING TRIGGER TRUE UNDO UNION UNIQUE UNLOCK UNSIGNED UPDATE USAGE USE USING UTC_DATE UTC_TIME
UTC_TIMESTAMP VALUES VARBINARY VARCHAR VARCHARACTER VARYING VIRTUAL WHEN WHERE WHILE WINDOW WITH WRITE XOR
YEAR_MONTH ZEROFILL`
