package bigcapture

import (
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// Shape is what an export holds, in number: every table's columns and
// rows, and the program's records by kind — calls by API name, copies by
// direction, memory kinds and size, NVTX ranges by name, synchronisations
// by type. Two captures of one program at one size have one shape.
type Shape struct {
	Tables map[string]TableShape `json:"tables"`
	Calls  map[string]int64      `json:"calls"`
	Copies map[string]int64      `json:"copies"`
	Ranges map[string]int64      `json:"ranges"`
	Syncs  map[string]int64      `json:"syncs"`
}

// TableShape is one table's columns (name and declared type, in order)
// and its row count.
type TableShape struct {
	Columns []string `json:"columns"`
	Rows    int64    `json:"rows"`
}

// ShapeOf reads the shape of the export at path; the file is only read.
func ShapeOf(path string) (*Shape, error) {
	db, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: filepath.ToSlash(path)}).EscapedPath()+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	s := &Shape{Tables: map[string]TableShape{}}
	names, err := strs(db, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, n := range names {
		cols, err := strs(db, `SELECT name || ' ' || type FROM pragma_table_info(?)`, n)
		if err != nil {
			return nil, err
		}
		var rows int64
		if err := db.QueryRow(`SELECT count(*) FROM ` + nsysdb.QuoteIdent(n)).Scan(&rows); err != nil {
			return nil, err
		}
		s.Tables[n] = TableShape{Columns: cols, Rows: rows}
	}
	for _, c := range []struct {
		dst   *map[string]int64
		table string
		query string
	}{
		{&s.Calls, tabRuntime, `SELECT s.value, count(*) FROM ` + tabRuntime + ` r JOIN ` + tabStrings + ` s ON s.id = r.nameId GROUP BY 1`},
		{&s.Copies, tabMemcpy, `SELECT ifnull(k.name, m.copyKind) || ' ' || ifnull(sk.name, '-') || ' ' || ifnull(dk.name, '-') || ' ' || m.bytes, count(*) FROM ` + tabMemcpy + ` m
			LEFT JOIN ` + nsysdb.TableCopyOper + ` k ON k.id = m.copyKind LEFT JOIN ` + nsysdb.TableMemKind + ` sk ON sk.id = m.srcKind
			LEFT JOIN ` + nsysdb.TableMemKind + ` dk ON dk.id = m.dstKind GROUP BY 1`},
		{&s.Ranges, tabNVTX, `SELECT ifnull(n.text, ifnull(t.value, '')), count(*) FROM ` + tabNVTX + ` n LEFT JOIN ` + tabStrings + ` t ON t.id = n.textId
			JOIN ` + nsysdb.TableEventType + ` e ON e.id = n.eventType WHERE e.name = '` + nsysdb.EventPushPopRange + `' GROUP BY 1`},
		{&s.Syncs, nsysdb.TableSync, `SELECT ifnull(t.name, s.syncType), count(*) FROM ` + nsysdb.TableSync + ` s LEFT JOIN ` + nsysdb.TableSyncType + ` t ON t.id = s.syncType GROUP BY 1`},
	} {
		*c.dst = map[string]int64{}
		if _, ok := s.Tables[c.table]; !ok {
			continue
		}
		rows, err := db.Query(c.query)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, c.table, err)
		}
		for rows.Next() {
			var k string
			var n int64
			if err := rows.Scan(&k, &n); err != nil {
				rows.Close()
				return nil, err
			}
			(*c.dst)[k] = n
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func strs(db *sql.DB, q string, args ...any) ([]string, error) {
	rows, err := db.Query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Differences lists how s differs from want, one line each, in order; the
// row counts of the tables named in anyRows are not compared.
func (s *Shape) Differences(want *Shape, anyRows ...string) []string {
	var out []string
	for _, n := range keys(want.Tables, s.Tables) {
		w, wok := want.Tables[n]
		g, gok := s.Tables[n]
		switch {
		case !gok:
			out = append(out, "table "+n+" is missing")
		case !wok:
			out = append(out, "table "+n+" is extra")
		case !slices.Equal(g.Columns, w.Columns):
			out = append(out, fmt.Sprintf("table %s has columns %s, want %s", n, strings.Join(g.Columns, ", "), strings.Join(w.Columns, ", ")))
		case g.Rows != w.Rows && !slices.Contains(anyRows, n):
			out = append(out, fmt.Sprintf("table %s has %d rows, want %d", n, g.Rows, w.Rows))
		}
	}
	for _, c := range []struct {
		what      string
		got, want map[string]int64
	}{{"calls", s.Calls, want.Calls}, {"copies", s.Copies, want.Copies}, {"ranges", s.Ranges, want.Ranges}, {"syncs", s.Syncs, want.Syncs}} {
		for _, k := range keys(c.want, c.got) {
			if c.got[k] != c.want[k] {
				out = append(out, fmt.Sprintf("%s %q: %d, want %d", c.what, k, c.got[k], c.want[k]))
			}
		}
	}
	return out
}

// keys is the union of two maps' keys, sorted.
func keys[V any](a, b map[string]V) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
