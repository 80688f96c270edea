// Package discover reads a shop-management schema it has never seen from
// MySQL's information_schema (and, read-only, a few of its rows), ranks
// the tables and columns that could play each part of quotesync's
// mapping (the job table and its number, the claim and registration, the
// line table and its path to the job, the amounts, the status, how new
// job numbers are made) and writes the mapping's queries from the
// winners, each choice with its runner-up and the evidence.
//
// It knows SQL, MySQL's catalogue and the names shop systems use; it
// knows nothing of the insurer's service. It never writes: the catalogue
// is read with plain SELECTs, sample rows inside a READ ONLY transaction
// with a statement time limit.
package discover

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// Schema is what the database user can see of one database.
type Schema struct {
	Database string
	Server   string // VERSION(), e.g. "10.11.6-MariaDB-0+deb12u1"
	Tables   []*Table
	byName   map[string]*Table
}

// Table is one table (or view) and what the catalogue says of it.
type Table struct {
	Name string
	View bool
	// Rows is information_schema.TABLES.TABLE_ROWS: an estimate for InnoDB.
	Rows int64
	// Engine is the table's storage engine, "" for a view;
	// NonTransactional says that it ignores transactions (MyISAM, Aria,
	// MEMORY): what a statement wrote stays when the transaction rolls back.
	Engine           string
	NonTransactional bool
	Columns          []*Column
	// PrimaryKey lists the primary key's columns in order; nil when none.
	PrimaryKey []string
	// Unique lists the unique indexes (the primary key included), each
	// as its columns in order.
	Unique [][]string
	// Indexed holds the columns that lead an index.
	Indexed map[string]bool
	// ForeignKeys are the declared single-column foreign keys.
	ForeignKeys []ForeignKey
	byName      map[string]*Column
	ws          []string // tokens(Name), once asked for
	// The ranked quantity and price columns, which do not depend on the
	// job table, once asked for.
	qty, price []candidate
	numericSet bool
}

func (t *Table) words() []string {
	if t.ws == nil {
		t.ws = tokens(t.Name)
	}
	return t.ws
}

// Column is one column of a table.
type Column struct {
	Table    string
	Name     string
	DataType string // information_schema DATA_TYPE, lower case: varchar, decimal, int …
	// ColumnType is the full type: "decimal(12,4)", "enum('Y','N')".
	ColumnType string
	Nullable   bool
	HasDefault bool
	// AutoIncrement and OnUpdate ("on update current_timestamp": the
	// server keeps it current) come from EXTRA.
	AutoIncrement bool
	OnUpdate      bool
	Generated     bool
	Scale         int64 // NUMERIC_SCALE; 0 when none
	MaxLen        int64 // CHARACTER_MAXIMUM_LENGTH; 0 when none
	Position      int
	ws            []string // tokens(Name), once asked for
}

func (c *Column) words() []string {
	if c.ws == nil {
		c.ws = tokens(c.Name)
	}
	return c.ws
}

// ForeignKey is a declared foreign key of one column.
type ForeignKey struct {
	Column, RefTable, RefColumn string
}

// Table returns the table named name (exactly, else ignoring case), or nil.
func (s *Schema) Table(name string) *Table {
	if t, ok := s.byName[name]; ok {
		return t
	}
	for _, t := range s.Tables {
		if strings.EqualFold(t.Name, name) {
			return t
		}
	}
	return nil
}

// Column returns the column named name (exactly, else ignoring case, as
// MySQL compares column names), or nil.
func (t *Table) Column(name string) *Column {
	if c, ok := t.byName[name]; ok {
		return c
	}
	for _, c := range t.Columns {
		if strings.EqualFold(c.Name, name) {
			return c
		}
	}
	return nil
}

// IsUnique reports whether the column alone is unique in its table.
func (t *Table) IsUnique(col string) bool {
	return slices.ContainsFunc(t.Unique, func(u []string) bool { return len(u) == 1 && strings.EqualFold(u[0], col) })
}

// SinglePK returns the primary key's column when it has exactly one.
func (t *Table) SinglePK() *Column {
	if len(t.PrimaryKey) != 1 {
		return nil
	}
	return t.Column(t.PrimaryKey[0])
}

// Catalogue queries: one per view, never one per table (a shop schema can
// have hundreds), always of the current database.
const (
	qTables = `SELECT t.TABLE_NAME, t.TABLE_TYPE, COALESCE(t.TABLE_ROWS, 0), COALESCE(t.ENGINE, ''), COALESCE(e.TRANSACTIONS, '')
FROM information_schema.TABLES t LEFT JOIN information_schema.ENGINES e ON e.ENGINE = t.ENGINE
WHERE t.TABLE_SCHEMA = DATABASE()`
	qColumns = `SELECT TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, LOWER(DATA_TYPE), COLUMN_TYPE, IS_NULLABLE,
       COLUMN_DEFAULT IS NOT NULL, EXTRA, COALESCE(NUMERIC_SCALE, 0), COALESCE(CHARACTER_MAXIMUM_LENGTH, 0)
FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()
ORDER BY TABLE_NAME, ORDINAL_POSITION`
	qIndexes = `SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE, COLUMN_NAME
FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE()
ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`
	qForeignKeys = `SELECT k.TABLE_NAME, k.CONSTRAINT_NAME, k.COLUMN_NAME, k.REFERENCED_TABLE_NAME, k.REFERENCED_COLUMN_NAME
FROM information_schema.KEY_COLUMN_USAGE k
WHERE k.TABLE_SCHEMA = DATABASE() AND k.REFERENCED_TABLE_NAME IS NOT NULL
  AND (k.REFERENCED_TABLE_SCHEMA IS NULL OR k.REFERENCED_TABLE_SCHEMA = DATABASE())
ORDER BY k.TABLE_NAME, k.CONSTRAINT_NAME, k.ORDINAL_POSITION`
)

// Options tune Read.
type Options struct {
	// SkipPrefix leaves out tables whose name starts with it: quotesync's
	// own tables ("quotesync_"). Default none.
	SkipPrefix string
}

// Read reads the catalogue of the connection's current database: tables,
// columns, indexes and foreign keys, in four statements. A user sees only
// what it has privileges on; what it cannot see is simply absent.
func Read(ctx context.Context, db *sql.DB, o Options) (*Schema, error) {
	s := &Schema{byName: map[string]*Table{}}
	var dbName sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT DATABASE(), VERSION()").Scan(&dbName, &s.Server); err != nil {
		return nil, fmt.Errorf("read the current database: %w", err)
	}
	if !dbName.Valid || dbName.String == "" {
		return nil, fmt.Errorf("read the schema: no database selected; name it in the DSN, e.g. user@tcp(host:3306)/shopdb")
	}
	s.Database = dbName.String
	if err := each(ctx, db, qTables, func(scan func(...any) error) error {
		t := &Table{Indexed: map[string]bool{}, byName: map[string]*Column{}}
		var typ, transactions string
		if err := scan(&t.Name, &typ, &t.Rows, &t.Engine, &transactions); err != nil {
			return err
		}
		t.NonTransactional = t.Engine != "" && !strings.EqualFold(transactions, "YES")
		if o.SkipPrefix != "" && strings.HasPrefix(strings.ToLower(t.Name), strings.ToLower(o.SkipPrefix)) {
			return nil
		}
		t.View = strings.Contains(strings.ToUpper(typ), "VIEW")
		s.Tables = append(s.Tables, t)
		s.byName[t.Name] = t
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read information_schema.TABLES: %w", err)
	}
	if err := each(ctx, db, qColumns, func(scan func(...any) error) error {
		c := &Column{}
		var nullable, extra string
		if err := scan(&c.Table, &c.Name, &c.Position, &c.DataType, &c.ColumnType, &nullable, &c.HasDefault, &extra, &c.Scale, &c.MaxLen); err != nil {
			return err
		}
		t := s.byName[c.Table]
		if t == nil {
			return nil
		}
		c.Nullable = strings.EqualFold(nullable, "YES")
		extra = strings.ToLower(extra)
		c.AutoIncrement = strings.Contains(extra, "auto_increment")
		c.OnUpdate = strings.Contains(extra, "on update")
		c.Generated = strings.Contains(extra, "generated") || strings.Contains(extra, "virtual") || strings.Contains(extra, "stored")
		t.Columns = append(t.Columns, c)
		t.byName[c.Name] = c
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read information_schema.COLUMNS: %w", err)
	}
	if err := readIndexes(ctx, db, s); err != nil {
		return nil, err
	}
	if err := each(ctx, db, qForeignKeys, func(scan func(...any) error) error {
		var table, constraint, col, refTable, refCol string
		if err := scan(&table, &constraint, &col, &refTable, &refCol); err != nil {
			return err
		}
		if t := s.byName[table]; t != nil && s.byName[refTable] != nil {
			t.ForeignKeys = append(t.ForeignKeys, ForeignKey{Column: col, RefTable: refTable, RefColumn: refCol})
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read information_schema.KEY_COLUMN_USAGE: %w", err)
	}
	// Tables without a visible column (a privilege on the table but none
	// of its columns) are of no use to a mapping.
	s.Tables = slices.DeleteFunc(s.Tables, func(t *Table) bool {
		if len(t.Columns) == 0 {
			delete(s.byName, t.Name)
		}
		return len(t.Columns) == 0
	})
	slices.SortFunc(s.Tables, func(a, b *Table) int { return strings.Compare(a.Name, b.Name) })
	return s, nil
}

func readIndexes(ctx context.Context, db *sql.DB, s *Schema) error {
	type key struct{ table, index string }
	cols := map[key][]string{}
	unique := map[key]bool{}
	var order []key
	err := each(ctx, db, qIndexes, func(scan func(...any) error) error {
		var k key
		var nonUnique int
		var col sql.NullString // NULL for an index on an expression
		if err := scan(&k.table, &k.index, &nonUnique, &col); err != nil {
			return err
		}
		if _, seen := cols[k]; !seen {
			order = append(order, k)
		}
		cols[k] = append(cols[k], col.String)
		unique[k] = nonUnique == 0
		return nil
	})
	if err != nil {
		return fmt.Errorf("read information_schema.STATISTICS: %w", err)
	}
	for _, k := range order {
		t := s.byName[k.table]
		if t == nil || len(cols[k]) == 0 || cols[k][0] == "" {
			continue
		}
		t.Indexed[strings.ToLower(cols[k][0])] = true
		if strings.EqualFold(k.index, "PRIMARY") {
			t.PrimaryKey = cols[k]
		}
		if unique[k] && !slices.Contains(cols[k], "") {
			t.Unique = append(t.Unique, cols[k])
		}
	}
	return nil
}

func each(ctx context.Context, db *sql.DB, query string, row func(scan func(...any) error) error) error {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}
