package nsyssqlite

import (
	"database/sql"
	"fmt"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// Collected is nsys's own count of the CUDA events it collected
// (DIAGNOSTIC_EVENT: "Number of CUDA events collected: N.") beside the
// records the export holds of them. nsys writes each such event as an API
// call (the rows of call stacks aside), a kernel, a memory copy or a
// memset, so the two agree in an export as nsys wrote it.
type Collected struct {
	// Known is false where nsys gave no count, or more than one (one a
	// process is a count not seen in an export yet), or the export's
	// schema is not one whose count is known to be the records written
	// (countedSchema): nothing to hold the records to.
	Known bool
	// Nsys is nsys's count; Table the table that says it.
	Nsys  int64
	Table string
	// The records the export holds.
	Calls, Kernels, Copies, Memsets int64
}

// Held is the records the export holds of the events nsys counted.
func (c Collected) Held() int64 { return c.Calls + c.Kernels + c.Copies + c.Memsets }

// countedSchema is the export schema whose count of CUDA events is known
// to be the records written (3.20, nsys 2025.3: 32 real exports, call
// stacks among them). What another schema's count counts is not known,
// so it is not held to the records.
const countedSchema = "3.20."

// countCollected reads nsys's count of the CUDA events it collected and
// counts the records the export holds of them (Info.Collected), on the
// stream's connection once the records have streamed.
func (r *reader) countCollected() error {
	diag := r.tables[nsysdb.TableDiagnostic]
	if diag == "" || r.tables[nsysdb.TableRuntime] == "" || !strings.HasPrefix(r.schema, countedSchema) {
		return nil
	}
	pid := "NULL"
	if cols, err := r.columns(nsysdb.TableDiagnostic); err != nil {
		return err
	} else if cols[nsysdb.ColGlobalPid] {
		pid = q(nsysdb.ColGlobalPid)
	}
	rows, err := r.query(`SELECT rowid, ` + q(nsysdb.ColText) + `, ` + pid + ` FROM ` + q(diag) + ` WHERE ` + q(nsysdb.ColText) + ` LIKE 'Number of % events collected%'`)
	if err != nil {
		return r.tableError(diag, err)
	}
	c := Collected{Table: diag}
	counts := 0
	// byProcess is each process's count: nsys counts once a process, so
	// two counts of one process that differ were not both written by it.
	byProcess := map[int64]int64{}
	for rows.Next() {
		var (
			row  int64
			text sql.NullString
			gpid sql.NullInt64
		)
		if err := rows.Scan(&row, &text, &gpid); err != nil {
			rows.Close()
			return r.tableError(diag, err)
		}
		kind, family, n := nsysdb.DiagOf(text.String)
		if kind != nsysdb.DiagCollected || family != nsysdb.EventsCUDA {
			continue
		}
		if n < 0 {
			rows.Close()
			return &inputerr.Error{Path: r.path, Where: fmt.Sprintf("table %s, rowid %d", diag, row),
				Problem: "nsys's count of the CUDA events it collected is not a count (nsys writes \"Number of CUDA events collected: N.\", N a whole number that fits 64 bits): the message was edited, so what the trace lacks or adds is unknown",
				Hint:    "the export is damaged or was edited; " + nsysdb.ExportHint}
		}
		if prev, ok := byProcess[gpid.Int64]; ok && prev != n {
			rows.Close()
			return &inputerr.Error{Path: r.path, Where: fmt.Sprintf("table %s, rowid %d", diag, row),
				Problem: fmt.Sprintf("nsys counts the CUDA events it collected twice for one process, %d and %d, where it counts once: the messages were edited or two traces were joined, so what the trace lacks or adds is unknown", prev, n),
				Hint:    "the export is damaged or was edited; " + nsysdb.ExportHint}
		}
		byProcess[gpid.Int64] = n
		c.Nsys = n
		counts++
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return r.tableError(diag, err)
	}
	if err := rows.Close(); err != nil {
		return r.tableError(diag, err)
	}
	if counts != 1 {
		return nil
	}
	held := map[string]*int64{nsysdb.TableRuntime: &c.Calls, nsysdb.TableKernel: &c.Kernels, nsysdb.TableMemcpy: &c.Copies, nsysdb.TableMemset: &c.Memsets}
	for _, logical := range nsysdb.CUDAEventTables {
		var err error
		if *held[logical], err = r.rowCount(logical); err != nil {
			return err
		}
	}
	c.Known = true
	r.info.Collected = c
	return nil
}

// rowCount counts the rows of a logical table (0 where the export has
// none), the runtime table's without its rows of call stacks (callsOnly),
// each table once a read: the trace's counts and the count of what nsys
// collected ask for the same ones.
func (r *reader) rowCount(logical string) (int64, error) {
	if n, ok := r.rows[logical]; ok {
		return n, nil
	}
	if s := r.seen[logical]; s != nil {
		// The stream read them all (the runtime table's calls without the
		// rows of call stacks, as here), each step to its end.
		return s.rows, nil
	}
	table := r.tables[logical]
	if table == "" {
		return 0, nil
	}
	where := ""
	if cond := r.callsOnly(""); cond != "" && logical == nsysdb.TableRuntime {
		where = ` WHERE ` + cond
	}
	var n int64
	if err := r.queryRow(`SELECT count(*) FROM ` + q(table) + where).Scan(&n); err != nil {
		return 0, r.tableError(table, err)
	}
	if r.rows == nil {
		r.rows = map[string]int64{}
	}
	r.rows[logical] = n
	return n, nil
}
