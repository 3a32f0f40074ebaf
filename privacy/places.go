package privacy

import (
	"database/sql"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// The places of a SQLite export that record the machine's environment and
// the profiled command, walked once by walkPlaces for Scan and for Scrub.
// A new kind of place is added here, and to the visitor, once.

// querier reads rows: the database (Scan) or the transaction (Scrub).
type querier interface {
	Query(q string, args ...any) (*sql.Rows, error)
}

// placeVisitor is told of every row of every place. Rows are read in full
// before they are handed on, so a visitor may change the table it visits.
type placeVisitor interface {
	// deviceEnv is TARGET_INFO_SYSTEM_ENV's DeviceEnvironment row: the
	// whole environment block of the machine, NAME=value per line.
	deviceEnv(table string, rowid int64, value string) error
	// metaCapture is one META_DATA_CAPTURE row: an environment variable
	// given to the profiled process, its working folder or its command.
	metaCapture(table string, rowid int64, name, value string) error
	// stringBlock is one string-table entry holding NUL-separated text,
	// such as an environment block.
	stringBlock(table string, id int64, block []byte) error
}

// placeError says which table a walk failed on.
type placeError struct {
	table string
	err   error
}

func (e *placeError) Error() string { return "table " + e.table + ": " + e.err.Error() }
func (e *placeError) Unwrap() error { return e.err }

// walkPlaces hands every row of every place the file holds to v; resolve
// maps a logical table name to the file's table ("" where it has none).
func walkPlaces(db querier, resolve func(logical string) string, v placeVisitor) error {
	q := nsysdb.QuoteIdent
	if t := resolve(nsysdb.TableSystemEnv); t != "" {
		type row struct {
			id    int64
			value string
		}
		rs, err := readRows(db, func(r *row) []any { return []any{&r.id, &r.value} },
			`SELECT rowid, `+q(nsysdb.ColValue)+` FROM `+q(t)+` WHERE `+q(nsysdb.ColName)+` = ?`, nsysdb.EnvDevice)
		if err != nil {
			return &placeError{t, err}
		}
		for _, r := range rs {
			if err := v.deviceEnv(t, r.id, r.value); err != nil {
				return err
			}
		}
	}
	if t := resolve(nsysdb.TableMetaCapture); t != "" {
		type row struct {
			id          int64
			name, value string
		}
		rs, err := readRows(db, func(r *row) []any { return []any{&r.id, &r.name, &r.value} },
			`SELECT rowid, `+nsysdb.Cols(nsysdb.ColName, nsysdb.ColValue)+` FROM `+q(t)+` WHERE `+q(nsysdb.ColValue)+` IS NOT NULL`)
		if err != nil {
			return &placeError{t, err}
		}
		for _, r := range rs {
			if err := v.metaCapture(t, r.id, r.name, r.value); err != nil {
				return err
			}
		}
	}
	if t := resolve(nsysdb.TableStrings); t != "" {
		type row struct {
			id int64
			b  []byte
		}
		rs, err := readRows(db, func(r *row) []any { return []any{&r.id, &r.b} },
			`SELECT `+q(nsysdb.ColID)+`, CAST(`+q(nsysdb.ColValue)+` AS BLOB) FROM `+q(t)+` WHERE instr(CAST(`+q(nsysdb.ColValue)+` AS BLOB), x'00') > 0`)
		if err != nil {
			return &placeError{t, err}
		}
		for _, r := range rs {
			if err := v.stringBlock(t, r.id, r.b); err != nil {
				return err
			}
		}
	}
	return nil
}

// readRows runs q and scans every row into a T through fields.
func readRows[T any](q querier, fields func(*T) []any, query string, args ...any) ([]T, error) {
	rows, err := q.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var r T
		if err := rows.Scan(fields(&r)...); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
