package privacy

import (
	"database/sql"
	"fmt"
	"strconv"

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
// holds one is renamed [redacted]_N. A table whose own SQL holds a
// credential elsewhere (a comment, a default) cannot be rewritten here:
// the scan of the copy then finds it and Scrub writes nothing.
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
	return nil
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
