// Package recount sets nsys's count of the CUDA events it collected, in an
// SQLite export that was made or edited on purpose (the generated large
// captures, the test fixtures of a program that made other calls), to the
// records the export holds: nsyscheck refuses an export whose records are
// not the events nsys says it collected (capture.ReadInfo.Miscounted), as
// an export that lost or gained records after the capture.
package recount

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// message starts the diagnostic that gives the count (DIAGNOSTIC_EVENT).
const message = "Number of CUDA events collected: "

// CUDAEvents rewrites the count of CUDA events nsys collected in the
// export open as db to the API calls (the rows of call stacks aside),
// kernels, copies and memsets it holds, each table resolved as the reader
// resolves it (nsysdb.Resolve). An export without the message is left as
// it is.
func CUDAEvents(db *sql.DB) error {
	rows, err := db.Query(`SELECT name, type, ifnull(sql, '') FROM sqlite_master`)
	if err != nil {
		return err
	}
	var objs []nsysdb.SchemaObject
	for rows.Next() {
		var o nsysdb.SchemaObject
		if err := rows.Scan(&o.Name, &o.Type, &o.SQL); err != nil {
			rows.Close()
			return err
		}
		objs = append(objs, o)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	hasRows := func(t string) (bool, error) {
		var n int
		err := db.QueryRow(`SELECT EXISTS (SELECT 1 FROM "` + t + `")`).Scan(&n)
		return n > 0, err
	}
	tables, err := nsysdb.Resolve(objs, hasRows, append([]string{nsysdb.TableDiagnostic, nsysdb.TableEventClass, nsysdb.TableCallchains}, nsysdb.CUDAEventTables...)...)
	var bad *nsysdb.TableError
	if errors.As(err, &bad) {
		return nil // not tables as nsys writes them: the reader refuses the file first
	}
	if err != nil {
		return err
	}
	if tables[nsysdb.TableDiagnostic] == "" {
		return nil
	}
	var total int64
	for _, logical := range nsysdb.CUDAEventTables {
		t := tables[logical]
		if t == "" {
			continue
		}
		where := ""
		if logical == nsysdb.TableRuntime && tables[nsysdb.TableEventClass] != "" && tables[nsysdb.TableCallchains] != "" {
			// The rows of call stacks, as the reader leaves them out.
			where = ` WHERE ` + nsysdb.ColEventClass + ` IS NOT coalesce((SELECT id FROM "` + tables[nsysdb.TableEventClass] +
				`" WHERE name = '` + nsysdb.EventClassBacktrace + `'), -1)`
		}
		var n int64
		if err := db.QueryRow(`SELECT count(*) FROM "` + t + `"` + where).Scan(&n); err != nil {
			return fmt.Errorf("counting %s: %w", t, err)
		}
		total += n
	}
	_, err = db.Exec(`UPDATE "`+tables[nsysdb.TableDiagnostic]+`" SET text = ? WHERE text LIKE 'Number of CUDA events collected%'`, fmt.Sprintf("%s\t%d.", message, total))
	return err
}
