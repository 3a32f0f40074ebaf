package privacy

import (
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// schemaObject is one entry of the schema: a table, view, index or trigger,
// and the SQL that made it.
type schemaObject struct {
	typ, name string
	ddl       sql.NullString
}

// readSchema lists the schema's tables, views, indexes and triggers (not
// SQLite's own).
func readSchema(q querier) ([]schemaObject, error) {
	return readRows(q, func(o *schemaObject) []any { return []any{&o.typ, &o.name, &o.ddl} },
		`SELECT type, name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name`)
}

// schemaWhere names a place in the schema for a finding, the object's
// name masked: it may be what holds the secret.
func schemaWhere(o schemaObject, what string) string {
	return "the schema: " + o.typ + " " + strconv.Quote(MaskSecrets(o.name)) + " " + what
}

// schemaNames runs the secret detector over the names the schema gives
// (tables, views, indexes, triggers and the tables' columns) and the SQL
// that made them (its comments and defaults included): a credential in a
// table's name is an exposure like one in a row.
func (s *sqliteScan) schemaNames() error {
	objs, err := readSchema(s.db)
	if err != nil {
		return &inputerr.Error{Path: s.r.Path, Problem: "cannot read the database schema", Err: err, Hint: nsysdb.ExportHint}
	}
	found := func(text, where string) {
		for _, sec := range FindSecrets(text) {
			s.addSecret(KindSecret, sec, where)
		}
	}
	for _, o := range objs {
		found(o.name, schemaWhere(o, "(its name)"))
		if o.typ == "table" {
			cols, err := tableColumns(s.db, o.name)
			if err != nil {
				return s.fail("table "+MaskSecrets(o.name), err)
			}
			for _, c := range cols {
				found(c.name, schemaWhere(o, "(a column's name)"))
			}
		}
		found(o.ddl.String, schemaWhere(o, "(the SQL that made it)"))
	}
	return nil
}

// schemaNames makes the schema's names shareable: a table, view, index or
// trigger whose name holds a credential is dropped (nsys names its own
// tables with fixed words, so nothing nsyscheck reads is lost); a view,
// index or trigger whose SQL holds one is dropped too; a column whose name
// holds one is renamed [redacted]_N. A credential elsewhere in a table's
// own SQL (a comment, a default) is redacted in that SQL (tableSQL).
func (s *scrubber) schemaNames() error {
	objs, err := readSchema(s.tx)
	if err != nil {
		return err
	}
	renamed := 0
	for _, o := range objs {
		drop := len(FindSecrets(o.name)) > 0 || o.typ != "table" && len(FindSecrets(o.ddl.String)) > 0
		if drop {
			if _, err := s.tx.Exec(`DROP ` + dropWord(o.typ) + ` IF EXISTS ` + nsysdb.QuoteIdent(o.name)); err != nil {
				return fmt.Errorf("drop the %s named with a credential: %w", o.typ, err)
			}
			delete(s.tables, o.name)
			continue
		}
		if o.typ != "table" {
			continue
		}
		for i, c := range s.tables[o.name] {
			if len(FindSecrets(c.name)) == 0 {
				continue
			}
			renamed++
			to := Redacted + "_" + strconv.Itoa(renamed)
			if _, err := s.tx.Exec(`ALTER TABLE ` + nsysdb.QuoteIdent(o.name) + ` RENAME COLUMN ` + nsysdb.QuoteIdent(c.name) + ` TO ` + nsysdb.QuoteIdent(to)); err != nil {
				return fmt.Errorf("rename a column named with a credential in table %s: %w", MaskSecrets(o.name), err)
			}
			s.tables[o.name][i].name = to
		}
	}
	return s.tableSQL()
}

// tableSQL redacts the credentials a table's own SQL holds outside its
// name and its columns' names (a DEFAULT clause, a comment, a CHECK), in
// the SQL the schema keeps: ALTER TABLE cannot reach them, and the scan of
// the copy would find them. Each value becomes Redacted in place, so the
// table keeps its columns and rows; SQL that no longer parses after that
// is refused, naming the table and what to do.
func (s *scrubber) tableSQL() error {
	objs, err := readSchema(s.tx)
	if err != nil {
		return err
	}
	var version int64
	var edited []string // the tables whose SQL was redacted
	for _, o := range objs {
		if o.typ != "table" || !o.ddl.Valid {
			continue
		}
		secs := FindSecrets(o.ddl.String)
		if len(secs) == 0 {
			continue
		}
		ddl := o.ddl.String
		for _, v := range secretValues(secs) {
			ddl = strings.ReplaceAll(ddl, v, Redacted)
		}
		if len(edited) == 0 {
			if err := s.tx.QueryRow(`PRAGMA schema_version`).Scan(&version); err != nil {
				return err
			}
			if _, err := s.tx.Exec(`PRAGMA writable_schema = ON`); err != nil {
				return fmt.Errorf("redact a credential in the SQL of table %s: %w", MaskSecrets(o.name), err)
			}
		}
		if _, err := s.tx.Exec(`UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = ?`, ddl, o.name); err != nil {
			return fmt.Errorf("redact a credential in the SQL of table %s: %w", MaskSecrets(o.name), err)
		}
		edited = append(edited, o.name)
	}
	if len(edited) == 0 {
		return nil
	}
	// A new schema version makes SQLite read the edited SQL again.
	if _, err := s.tx.Exec(`PRAGMA schema_version = ` + strconv.FormatInt(version+1, 10)); err != nil {
		return err
	}
	if _, err := s.tx.Exec(`PRAGMA writable_schema = OFF`); err != nil {
		return err
	}
	for _, name := range edited {
		if _, err := s.tx.Exec(`SELECT * FROM ` + nsysdb.QuoteIdent(name) + ` LIMIT 0`); err != nil {
			return fmt.Errorf("table %s: its SQL holds a credential, and the SQL no longer parses once it is redacted: drop the table (sqlite3 FILE 'DROP TABLE %s'), which no Nsight Systems export has, and scrub again",
				MaskSecrets(name), nsysdb.QuoteIdent(MaskSecrets(name)))
		}
	}
	return nil
}

// secretValues are the values of secs, longest first, so that a value
// inside another is redacted with it.
func secretValues(secs []Secret) []string {
	var out []string
	for _, sec := range secs {
		// A value read up to the next space may take in the quote and
		// the parenthesis that close it in SQL: those stay.
		if v := strings.TrimRight(sec.Value, `'"),;`); len(v) >= 4 {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// dropWord is the DROP statement's word for a schema type.
func dropWord(typ string) string {
	switch typ {
	case "view":
		return "VIEW"
	case "index":
		return "INDEX"
	case "trigger":
		return "TRIGGER"
	}
	return "TABLE"
}
