package discover

import (
	_ "embed" // reserved.txt
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

// plainIdent: lower-case ASCII letters, digits and "_", not led by a digit.
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
// samples): backquoted, colons kept (no named-parameter binder reads it).
func quoteIdent(name string) string {
	if plainIdent(name) && !reserved[strings.ToUpper(name)] {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// Literal writes a value seen in the shop's data as an SQL string literal:
// 'FINAL' for plain text, and for anything with a quote, a backslash, a
// colon, a "?" or a character that is not printable, a hexadecimal utf8mb4
// literal (_utf8mb4 X'…'), which reads the same whatever the server's
// sql_mode and passes the named-parameter binder untouched.
func Literal(v string) string {
	if !strings.ContainsFunc(v, func(r rune) bool {
		return r == '\'' || r == '\\' || r == ':' || r == '?' || r == '`' || !unicode.IsPrint(r) || r > unicode.MaxASCII
	}) {
		return "'" + v + "'"
	}
	if v == "" {
		return "''"
	}
	return "_utf8mb4 X'" + strings.ToUpper(hex.EncodeToString([]byte(v))) + "'"
}

// reservedWords are the reserved words of MySQL 8.4 and MariaDB 11 (the
// union): a column named like one must be quoted.
//
//go:embed reserved.txt
var reservedWords string

var reserved = func() map[string]bool {
	m := map[string]bool{}
	for w := range strings.FieldsSeq(reservedWords) {
		m[w] = true
	}
	return m
}()
