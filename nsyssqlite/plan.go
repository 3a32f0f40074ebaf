package nsyssqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// plan reads the schema of every table the wanted records come from: the
// columns each query can use, the enums that name copy and memory kinds
// and NVTX event types, and what the export cannot give (emitGaps hands it
// on before any record). A table an export leaves out because it would be
// empty is a gap; a table that is there but lacks a column every reading
// needs is an error.
func (r *reader) plan() error {
	var err error
	if r.rcols, err = r.columns(nsysdb.TableRuntime, nsysdb.ColStart, nsysdb.ColEnd, nsysdb.ColNameID); err != nil {
		return err
	}
	if err := r.planBacktraces(); err != nil {
		return err
	}
	table := r.tables[nsysdb.TableRuntime]
	if r.h.Call != nil || r.opts.JoinCalls {
		if !r.rcols[nsysdb.ColCorrelationID] {
			r.lack(records.FactCorrelation, fmt.Sprintf("table %s has no %s column", table, nsysdb.ColCorrelationID))
		}
		if !r.rcols[nsysdb.ColGlobalTid] {
			r.lack(records.FactProcessScope, fmt.Sprintf("table %s has no %s column", table, nsysdb.ColGlobalTid))
		}
	}
	if r.h.Op != nil && r.opts.WantsOp(records.OpCopy) {
		if err := r.planCopies(); err != nil {
			return err
		}
	}
	if r.h.Op != nil && r.opts.WantsOp(records.OpKernel) {
		if t := r.tables[nsysdb.TableKernel]; t == "" {
			r.lack(records.FactKernels, r.absentReason(nsysdb.TableKernel, "kernel launch", "CUDA", "cuda", func(t records.Tracing) bool { return t.CUDA }))
		} else if r.kcols, err = r.columns(nsysdb.TableKernel, nsysdb.ColStart, nsysdb.ColEnd, nsysdb.ColShortName); err != nil {
			return err
		}
	}
	if r.h.Range != nil {
		if r.nvtx, err = r.planNVTX(); err != nil {
			return err
		}
	}
	if r.h.Sync != nil && r.tables[nsysdb.TableSync] == "" {
		r.lack(records.FactSync, fmt.Sprintf("the export has no %s table: nsys recorded no synchronisations (traced without CUDA, or an nsys before 2021)", nsysdb.TableSync))
	}
	if r.h.Event != nil && r.tables[nsysdb.TableCUDAEvent] == "" {
		r.lack(records.FactEvents, fmt.Sprintf("the export has no %s table: nsys recorded no CUDA event records", nsysdb.TableCUDAEvent))
	}
	return r.readStacks()
}

// checkTables checks every row of the tables read, whether or not the
// selection reads it (checkReferences, checkStop), on conn, a connection
// of the reader's database other than its own, so that it may run beside
// the stream.
//
// after says they run after the stream: where it succeeded, a table it
// read whole is checked from what it saw (seenTable), and its rows are not
// read again.
func (r *reader) checkTables(ctx context.Context, conn *sql.Conn, after bool) error {
	tc := tableChecks{
		queryRow:  func(q string, args ...any) *sql.Row { return conn.QueryRowContext(ctx, q, args...) },
		queryRows: func(q string, args ...any) (*sql.Rows, error) { return conn.QueryContext(ctx, q, args...) },
		seen:      r.seenTables(after),
	}
	if err := r.checkReferences(tc); err != nil {
		return err
	}
	owners, err := r.checkStreams(tc)
	if err != nil {
		return err
	}
	if err := r.checkContexts(tc); err != nil {
		return err
	}
	if owners != nil {
		return owners
	}
	if err := r.checkStop(tc); err != nil {
		return err
	}
	// Last, as where readGPU holds the devices to the list itself: first
	// of the stream's errors, after the checks'.
	return r.checkDevices(tc)
}

// tableChecks is what the checks over whole tables query through, and what
// the stream saw of the tables it read whole (nil where they read every
// table themselves).
type tableChecks struct {
	queryRow  func(string, ...any) *sql.Row
	queryRows func(string, ...any) (*sql.Rows, error)
	seen      map[string]*seenTable
}

// checkStreams checks that every stream a copy, kernel, memset, event
// record or synchronisation names is one the program made
// (TARGET_INFO_CUDA_STREAM), where the export lists them, and made in the
// record's context, process and host, as far as the record and the list
// name them: a record on a stream that never existed, or on one of
// another context or process, was moved or comes from another trace, and
// the order of the work on its stream, which the audit's replay rests on,
// is unknown. Unified-memory migrations, which nsys puts on no stream of
// the program's, and records of no stream (NoStream) are left out. One
// pass over each table's distinct streams.
//
// A record on a stream the list holds for another context or process
// (owners) is returned apart, for checkTables to give once checkContexts
// has held the record's context to its list: a context the program never
// made is said as such first.
func (r *reader) checkStreams(tc tableChecks) (owners, err error) {
	queryRow := tc.queryRow
	streams := r.tables[nsysdb.TableCUDAStream]
	if streams == "" {
		return nil, nil
	}
	var listed int64
	if err := queryRow(`SELECT count(*) FROM ` + q(streams) + ` WHERE ` + q(nsysdb.ColStreamID) + ` IS NOT NULL`).Scan(&listed); err != nil || listed == 0 {
		return nil, nil // no list to hold the records to
	}
	listCols, err := tableColumns(queryRow, streams, nsysdb.ColContextID, nsysdb.ColProcessID, nsysdb.ColHwID, nsysdb.ColVMID, nsysdb.ColStreamFlag)
	if err != nil {
		return nil, r.tableErrorOn(queryRow, streams, err)
	}
	if err := r.streamsOnce(queryRow, streams, listCols); err != nil {
		return nil, err
	}
	lists := map[string]*listedOnce{} // the streams listed, by the columns read, once a table was seen whole
	for _, logical := range []string{nsysdb.TableMemcpy, nsysdb.TableKernel, nsysdb.TableMemset, nsysdb.TableCUDAEvent, nsysdb.TableSync, nsysdb.TableGraphTrace} {
		table := r.tables[logical]
		if table == "" {
			continue
		}
		cols, err := tableColumns(queryRow, table, nsysdb.ColStreamID, nsysdb.ColMigration, nsysdb.ColContextID, nsysdb.ColGlobalPid)
		if err != nil {
			return nil, r.tableErrorOn(queryRow, table, err)
		}
		if !cols[nsysdb.ColStreamID] {
			continue
		}
		s := q(nsysdb.ColStreamID)
		refs := []listRef{{expr: s, col: nsysdb.ColStreamID}}
		byContext := cols[nsysdb.ColContextID] && listCols[nsysdb.ColContextID]
		if byContext {
			refs = append(refs, listRef{expr: q(nsysdb.ColContextID), col: nsysdb.ColContextID, nullable: true})
		}
		byProcess := cols[nsysdb.ColGlobalPid] && listCols[nsysdb.ColProcessID]
		if byProcess {
			refs = append(refs, listRef{expr: nsysdb.PIDExpr(q(nsysdb.ColGlobalPid)), col: nsysdb.ColProcessID, nullable: true})
		}
		byHost := byProcess && listCols[nsysdb.ColHwID] && listCols[nsysdb.ColVMID]
		if byHost {
			hw, vm := nsysdb.HostExprs(q(nsysdb.ColGlobalPid))
			refs = append(refs, listRef{expr: hw, col: nsysdb.ColHwID, nullable: true}, listRef{expr: vm, col: nsysdb.ColVMID, nullable: true})
		}
		if seen := tc.seen[logical]; seen != nil {
			listed := make([]string, len(refs))
			for i, ref := range refs {
				listed[i] = ref.col
			}
			key := strings.Join(listed, ",")
			if lists[key] == nil {
				lists[key] = &listedOnce{}
			}
			keys, ok, err := lists[key].get(tc, streams, listed...)
			if err != nil {
				return nil, r.tableErrorOn(queryRow, streams, err)
			}
			if ok && seen.streamsIn(keys, byContext, byProcess, byHost) {
				continue
			}
		}
		where := s + ` IS NOT NULL AND ` + s + ` != ` + strconv.FormatInt(nsysdb.NoStream, 10)
		if cols[nsysdb.ColMigration] {
			where += ` AND ` + q(nsysdb.ColMigration) + ` IS NULL`
		}
		r.passes = append(r.passes, table)
		ids, n, first, err := unlisted(queryRow, table, streams, where, refs...)
		switch {
		case err != nil:
			return nil, r.tableErrorOn(queryRow, table, err)
		case ids == nil:
			continue
		}
		stream := ids[0]
		at, of, err := r.streamListed(queryRow, streams, stream, refs)
		if err != nil {
			return nil, r.tableErrorOn(queryRow, streams, err)
		}
		if at == 0 {
			return nil, &inputerr.Error{Path: r.path, Where: "table " + table,
				Problem: fmt.Sprintf("%s name stream %d (the first: rowid %d), which %s does not list among the program's streams: a reference that does not resolve, so the order of that work is unknown",
					rowCount(n), stream, first, streams),
				Hint: "the export is damaged or was edited; " + nsysdb.ExportHint}
		}
		if owners == nil {
			owners = &inputerr.Error{Path: r.path, Where: "table " + table,
				Problem: fmt.Sprintf("%s put work on stream %d%s (the first: rowid %d), where %s lists stream %d%s (rowid %d): the records and the list disagree on whose stream it is, so the order of that work is unknown",
					rowCount(n), stream, streamOwner(refs, ids), first, streams, stream, streamOwner(refs, of), at),
				Hint: "the export is damaged or was edited; " + nsysdb.ExportHint}
		}
	}
	return owners, nil
}

// streamsOnce refuses a stream list (TARGET_INFO_CUDA_STREAM) that lists
// one stream of a process twice, naming both rows: nsys lists each stream
// once, with its context and how it was made, so two rows of one (alike
// or not) leave whose stream it is and how it orders its work unclear.
// One GROUP BY over the list, a row a stream.
func (r *reader) streamsOnce(queryRow func(string, ...any) *sql.Row, table string, listCols map[string]bool) error {
	stream, first, second, found, err := listedTwice(queryRow, table, nsysdb.ColStreamID, listCols)
	switch {
	case err != nil:
		return r.tableErrorOn(queryRow, table, err)
	case !found:
		return nil
	}
	describe := func(rowid int64) string {
		sel := []string{`ifnull(` + q(nsysdb.ColProcessID) + `, -1)`, `-1`, `-1`}
		if !listCols[nsysdb.ColProcessID] {
			sel[0] = `-1`
		}
		if listCols[nsysdb.ColContextID] {
			sel[1] = `ifnull(` + q(nsysdb.ColContextID) + `, -1)`
		}
		if listCols[nsysdb.ColStreamFlag] {
			sel[2] = `ifnull(` + q(nsysdb.ColStreamFlag) + `, -1)`
		}
		var pid, ctx, flag int64
		if queryRow(`SELECT `+strings.Join(sel, `, `)+` FROM `+q(table)+` WHERE rowid = ?`, rowid).Scan(&pid, &ctx, &flag) != nil {
			return fmt.Sprintf("rowid %d", rowid)
		}
		out := fmt.Sprintf("rowid %d", rowid)
		if ctx >= 0 {
			out += fmt.Sprintf(": context %d", ctx)
		}
		if k, ok := streamKinds[flag]; ok {
			kind := k.String()
			if k == records.StreamNull {
				kind = "the NULL stream"
			}
			out += ", " + kind
		} else if flag >= 0 {
			out += fmt.Sprintf(", flag %d", flag)
		}
		return out
	}
	of := processOfRow(queryRow, table, listCols, first)
	return &inputerr.Error{Path: r.path, Where: fmt.Sprintf("table %s, rowids %d and %d", table, first, second),
		Problem: fmt.Sprintf("stream %d%s is listed twice (%s; %s), where nsys lists each stream once: whose stream it is and how it orders its work are unclear",
			stream, of, describe(first), describe(second)),
		Hint: "the export is damaged or was edited; " + nsysdb.ExportHint}
}

// listedTwice finds the first id (of column idCol) that a list of nsys's
// (TARGET_INFO_CUDA_STREAM, TARGET_INFO_CUDA_CONTEXT_INFO) holds on two
// rows for one process and host, as far as the list has those columns
// (listCols): the id and the first and last of its rows, and found; not
// found where none is. One GROUP BY over the list.
func listedTwice(queryRow func(string, ...any) *sql.Row, table, idCol string, listCols map[string]bool) (id, first, second int64, found bool, err error) {
	key := []string{q(idCol)}
	for _, c := range []string{nsysdb.ColProcessID, nsysdb.ColHwID, nsysdb.ColVMID} {
		if listCols[c] {
			key = append(key, q(c))
		}
	}
	err = queryRow(`SELECT `+q(idCol)+`, min(rowid), max(rowid) FROM `+q(table)+` WHERE `+q(idCol)+
		` IS NOT NULL GROUP BY `+strings.Join(key, `, `)+` HAVING count(*) > 1 ORDER BY min(rowid) LIMIT 1`).Scan(&id, &first, &second)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, 0, false, nil
	}
	return id, first, second, err == nil, err
}

// processOfRow says whose a list's row is, " of process 22", where the
// list names processes; "" otherwise.
func processOfRow(queryRow func(string, ...any) *sql.Row, table string, listCols map[string]bool, rowid int64) string {
	var pid int64
	if listCols[nsysdb.ColProcessID] && queryRow(`SELECT `+q(nsysdb.ColProcessID)+` FROM `+q(table)+` WHERE rowid = ?`, rowid).Scan(&pid) == nil {
		return fmt.Sprintf(" of process %d", pid)
	}
	return ""
}

// streamListed finds the first row of the stream list (table) that lists
// stream: its rowid (0 for none) and its values of refs' columns.
func (r *reader) streamListed(queryRow func(string, ...any) *sql.Row, table string, stream int64, refs []listRef) (rowid int64, vals []int64, err error) {
	sel := []string{"rowid"}
	for _, ref := range refs {
		sel = append(sel, `ifnull(`+q(ref.col)+`, -1)`)
	}
	vals = make([]int64, len(refs))
	dest := []any{&rowid}
	for i := range vals {
		dest = append(dest, &vals[i])
	}
	err = queryRow(`SELECT `+strings.Join(sel, `, `)+` FROM `+q(table)+` WHERE `+q(nsysdb.ColStreamID)+` = ? ORDER BY rowid LIMIT 1`, stream).Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil, nil
	}
	return rowid, vals, err
}

// streamOwner says whose a stream is, from the values of refs (the
// stream id first): " of context 1 of process 22 on host hwId 0, vmId
// 1"; a value read as NULL (-1) is left out.
func streamOwner(refs []listRef, vals []int64) string {
	out := ""
	for i := 1; i < len(refs) && i < len(vals); i++ {
		v := vals[i]
		if v < 0 {
			continue
		}
		switch refs[i].col {
		case nsysdb.ColContextID:
			out += fmt.Sprintf(" of context %d", v)
		case nsysdb.ColProcessID:
			out += fmt.Sprintf(" of process %d", v)
		case nsysdb.ColHwID:
			out += fmt.Sprintf(" on host %s %d", nsysdb.ColHwID, v)
		case nsysdb.ColVMID:
			out += fmt.Sprintf(", %s %d", nsysdb.ColVMID, v)
		}
	}
	return out
}

// checkContexts checks that every copy, kernel, memset, synchronisation,
// event recording and graph launch names a context the program made, on its device and
// in its process (TARGET_INFO_CUDA_CONTEXT_INFO lists each context with
// its device and the pid of its process; a record carries the pid in its
// globalPid), where the export lists them: the stream a record names is a
// stream of its context, and work on a context the list does not hold
// comes from another trace or was moved, so the order of the work, the
// GPU it ran on and the waits the replay rests on would change without a
// word. Unified-memory migrations, which nsys puts on no context of the
// program's, are left out. One pass over each table's distinct triples.
func (r *reader) checkContexts(tc tableChecks) error {
	queryRow := tc.queryRow
	contexts := r.tables[nsysdb.TableCUDAContext]
	if contexts == "" {
		return nil
	}
	listCols, err := tableColumns(queryRow, contexts, nsysdb.ColDeviceID, nsysdb.ColContextID, nsysdb.ColProcessID, nsysdb.ColHwID, nsysdb.ColVMID)
	if err != nil {
		return r.tableErrorOn(queryRow, contexts, err)
	}
	if !listCols[nsysdb.ColDeviceID] || !listCols[nsysdb.ColContextID] {
		return nil
	}
	var listed int64
	if err := queryRow(`SELECT count(*) FROM ` + q(contexts)).Scan(&listed); err != nil || listed == 0 {
		return nil // no list to hold the records to
	}
	if err := r.contextsOnce(queryRow, contexts, listCols); err != nil {
		return err
	}
	dev, ctx := q(nsysdb.ColDeviceID), q(nsysdb.ColContextID)
	// The contexts listed, by how many of the list's columns a record is
	// matched on (device and context; its process; its host), read once a
	// table was seen whole.
	var lists [len(listKey{}) + 1]listedOnce
	for _, logical := range []string{nsysdb.TableMemcpy, nsysdb.TableKernel, nsysdb.TableMemset, nsysdb.TableSync, nsysdb.TableCUDAEvent, nsysdb.TableGraphTrace} {
		table := r.tables[logical]
		if table == "" {
			continue
		}
		cols, err := tableColumns(queryRow, table, nsysdb.ColDeviceID, nsysdb.ColContextID, nsysdb.ColGlobalPid, nsysdb.ColMigration)
		if err != nil {
			return r.tableErrorOn(queryRow, table, err)
		}
		if !cols[nsysdb.ColDeviceID] || !cols[nsysdb.ColContextID] {
			continue
		}
		refs := []listRef{{expr: dev, col: nsysdb.ColDeviceID}, {expr: ctx, col: nsysdb.ColContextID}}
		where := dev + ` IS NOT NULL AND ` + ctx + ` IS NOT NULL`
		byProcess := cols[nsysdb.ColGlobalPid] && listCols[nsysdb.ColProcessID]
		if byProcess {
			pid := nsysdb.PIDExpr(q(nsysdb.ColGlobalPid))
			refs = append(refs, listRef{expr: pid, col: nsysdb.ColProcessID})
			where += ` AND ` + q(nsysdb.ColGlobalPid) + ` IS NOT NULL`
		}
		// The host too, where the list names it: a process of one pid on
		// two hosts is two processes, each with its own contexts.
		byHost := byProcess && listCols[nsysdb.ColHwID] && listCols[nsysdb.ColVMID]
		if byHost {
			hw, vm := nsysdb.HostExprs(q(nsysdb.ColGlobalPid))
			refs = append(refs, listRef{expr: hw, col: nsysdb.ColHwID}, listRef{expr: vm, col: nsysdb.ColVMID})
		}
		if cols[nsysdb.ColMigration] {
			where += ` AND ` + q(nsysdb.ColMigration) + ` IS NULL`
		}
		if seen := tc.seen[logical]; seen != nil {
			listed := make([]string, len(refs))
			for i, ref := range refs {
				listed[i] = ref.col
			}
			keys, ok, err := lists[len(refs)].get(tc, contexts, listed...)
			if err != nil {
				return r.tableErrorOn(queryRow, contexts, err)
			}
			if ok && seen.contextsIn(keys, byProcess, byHost) {
				continue
			}
		}
		r.passes = append(r.passes, table)
		ids, n, first, err := unlisted(queryRow, table, contexts, where, refs...)
		switch {
		case err != nil:
			return r.tableErrorOn(queryRow, table, err)
		case ids == nil:
			continue
		}
		named := fmt.Sprintf("context %d on device %d", ids[1], ids[0])
		if byProcess {
			named += fmt.Sprintf(" of process %d (the pid in %s)", ids[2], nsysdb.ColGlobalPid)
		}
		if byHost {
			named += fmt.Sprintf(" on host %s %d, %s %d (in %s)", nsysdb.ColHwID, ids[3], nsysdb.ColVMID, ids[4], nsysdb.ColGlobalPid)
		}
		return &inputerr.Error{Path: r.path, Where: "table " + table,
			Problem: fmt.Sprintf("%s name %s (the first: rowid %d), which %s does not list among the program's contexts: a reference that does not resolve, so the device, the streams and the order of that work are unknown",
				rowCount(n), named, first, contexts),
			Hint: "the export is damaged or was edited; " + nsysdb.ExportHint}
	}
	return nil
}

// contextsOnce refuses a context list (TARGET_INFO_CUDA_CONTEXT_INFO) that
// lists one context of a process twice, naming both rows: nsys lists each
// context once, on its device, so two rows of one leave the device of its
// work and its NULL stream unclear. One GROUP BY over the list.
func (r *reader) contextsOnce(queryRow func(string, ...any) *sql.Row, table string, listCols map[string]bool) error {
	context, first, second, found, err := listedTwice(queryRow, table, nsysdb.ColContextID, listCols)
	switch {
	case err != nil:
		return r.tableErrorOn(queryRow, table, err)
	case !found:
		return nil
	}
	var dev1, dev2 int64
	on := ""
	dq := `SELECT ifnull(` + q(nsysdb.ColDeviceID) + `, -1) FROM ` + q(table) + ` WHERE rowid = ?`
	if queryRow(dq, first).Scan(&dev1) == nil && queryRow(dq, second).Scan(&dev2) == nil {
		on = fmt.Sprintf(" (on device %d, and on device %d)", dev1, dev2)
	}
	of := processOfRow(queryRow, table, listCols, first)
	return &inputerr.Error{Path: r.path, Where: fmt.Sprintf("table %s, rowids %d and %d", table, first, second),
		Problem: fmt.Sprintf("context %d%s is listed twice%s, where nsys lists each context once: the device of its work and its NULL stream are unclear", context, of, on),
		Hint:    "the export is damaged or was edited; " + nsysdb.ExportHint}
}

// tableColumns says which of names are columns of table.
func tableColumns(queryRow func(string, ...any) *sql.Row, table string, names ...string) (map[string]bool, error) {
	has := make(map[string]bool, len(names))
	for _, name := range names {
		var n int64
		if err := queryRow(`SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, table, name).Scan(&n); err != nil {
			return nil, err
		}
		has[name] = n > 0
	}
	return has, nil
}

// listRef is one part of a reference from a record to a list: the SQL
// expression over the record's table and the list's column it must equal;
// nullable says a NULL value matches any (the reference is held on its
// other parts) and is read as -1.
type listRef struct {
	expr, col string
	nullable  bool
}

// unlisted finds the first distinct values of refs among the rows of
// table where holds that no row of list has (a reference that does not
// resolve), with how many rows of table hold them and the first's rowid;
// nil values where every one is listed.
func unlisted(queryRow func(string, ...any) *sql.Row, table, list, where string, refs ...listRef) (vals []int64, n, first int64, err error) {
	var sel, out, match, same []string
	for i, ref := range refs {
		alias := fmt.Sprintf("v%d", i)
		sel = append(sel, ref.expr+` AS `+alias)
		if ref.nullable {
			out = append(out, `ifnull(d.`+alias+`, -1)`)
			match = append(match, `(d.`+alias+` IS NULL OR l.`+q(ref.col)+` = d.`+alias+`)`)
			same = append(same, `ifnull(`+ref.expr+`, -1) = ?`)
			continue
		}
		out = append(out, `d.`+alias)
		match = append(match, `l.`+q(ref.col)+` = d.`+alias)
		same = append(same, ref.expr+` = ?`)
	}
	vals = make([]int64, len(refs))
	ptrs := make([]any, len(refs))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	err = queryRow(`SELECT ` + strings.Join(out, `, `) + ` FROM (SELECT DISTINCT ` + strings.Join(sel, `, `) + ` FROM ` + q(table) + ` WHERE ` + where +
		`) AS d WHERE NOT EXISTS (SELECT 1 FROM ` + q(list) + ` AS l WHERE ` + strings.Join(match, ` AND `) + `) LIMIT 1`).Scan(ptrs...)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, 0, 0, nil
	case err != nil:
		return nil, 0, 0, err
	}
	args := make([]any, len(vals))
	for i, v := range vals {
		args[i] = v
	}
	if err := queryRow(`SELECT count(*), min(rowid) FROM `+q(table)+` WHERE `+where+` AND `+strings.Join(same, ` AND `), args...).Scan(&n, &first); err != nil {
		return nil, 0, 0, err
	}
	return vals, n, first, nil
}

// checkStop checks that no record of the tables read ends after the trace
// stopped (ANALYSIS_DETAILS.stopTime), whether or not the selection reads
// its row: nsys stops a trace after its last record, so a later one was
// shifted or comes from another trace. One pass over each table.
func (r *reader) checkStop(tc tableChecks) error {
	queryRow := tc.queryRow
	if r.stop == 0 {
		return nil
	}
	for _, t := range []struct {
		logical string
		cols    map[string]bool
	}{{nsysdb.TableRuntime, r.rcols}, {nsysdb.TableMemcpy, r.mcols}, {nsysdb.TableKernel, r.kcols}} {
		table := r.tables[t.logical]
		if table == "" || t.cols == nil {
			continue
		}
		if seen := tc.seen[t.logical]; seen != nil && seen.allRows && seen.maxEnd <= r.stop+stopSlackNs {
			continue
		}
		corrCol := "NULL"
		if t.cols[nsysdb.ColCorrelationID] {
			corrCol = q(nsysdb.ColCorrelationID)
		}
		var rowid, end int64
		var corr sql.NullInt64
		r.passes = append(r.passes, table)
		err := queryRow(`SELECT rowid, `+corrCol+`, `+q(nsysdb.ColEnd)+` FROM `+q(table)+` WHERE `+q(nsysdb.ColEnd)+` > ? LIMIT 1`,
			r.stop+stopSlackNs).Scan(&rowid, &corr, &end)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return r.tableErrorOn(queryRow, table, err)
		default:
			where := fmt.Sprintf("table %s, correlation id %d", table, corr.Int64)
			if !corr.Valid {
				// No id to name it by: a NULL (or no) correlationId is not id 0.
				where = fmt.Sprintf("table %s, rowid %d (%s NULL)", table, rowid, nsysdb.ColCorrelationID)
				if !t.cols[nsysdb.ColCorrelationID] {
					where = fmt.Sprintf("table %s, rowid %d", table, rowid)
				}
			}
			return &inputerr.Error{Path: r.path, Where: where,
				Problem: fmt.Sprintf("a record ends at %d ns, %d ns after the trace stopped (%d ns, %s): no record outlasts its trace", end, end-r.stop, r.stop, r.tables[nsysdb.TableAnalysis]),
				Hint:    "the export is damaged or was edited; " + nsysdb.ExportHint}
		}
	}
	return nil
}

// stopSlackNs is how far past the trace's stop a record may end: 1 µs of
// clock conversion. Real exports stop half a second or more after their
// last record.
const stopSlackNs = 1000

// checkReferences checks that every string id the tables read refer to is
// in the string table, whether or not the selection reads its row: a call
// whose name id resolves to nothing is damage, not a call of another name.
// One pass over each table's distinct ids.
func (r *reader) checkReferences(tc tableChecks) error {
	queryRow := tc.queryRow
	refs := []struct {
		logical, col string
		wanted       bool
	}{
		{nsysdb.TableRuntime, nsysdb.ColNameID, true},
		{nsysdb.TableKernel, nsysdb.ColShortName, r.kcols != nil},
		{nsysdb.TableNVTX, nsysdb.ColTextID, r.nvtx != nil && r.nvtx.cols[nsysdb.ColTextID]},
	}
	strs := q(r.tables[nsysdb.TableStrings])
	for _, ref := range refs {
		table := r.tables[ref.logical]
		if !ref.wanted || table == "" {
			continue
		}
		if seen := tc.seen[ref.logical]; ref.logical != nsysdb.TableNVTX && seen != nil && seen.allRows {
			// The stream read every row and named each: a NULL id would
			// have failed it (no integer), an id the string table lacks
			// too (reader.str).
			continue
		}
		c := q(ref.col)
		r.passes = append(r.passes, table)
		if ref.logical == nsysdb.TableRuntime {
			// A call without a name is damage too, not a call to leave out.
			var n, first sql.NullInt64
			if err := queryRow(`SELECT count(*), min(rowid) FROM `+q(table)+` WHERE `+c+` IS NULL`).Scan(&n, &first); err != nil {
				return r.tableErrorOn(queryRow, table, err)
			}
			if n.Int64 > 0 {
				return &inputerr.Error{Path: r.path, Where: "table " + table,
					Problem: fmt.Sprintf("column %s is NULL in %s (the first: rowid %d): API calls without a name, which nsys always writes", ref.col, rowCount(n.Int64), first.Int64),
					Hint:    "the export is damaged or was edited; " + nsysdb.ExportHint}
			}
		}
		var id int64
		err := queryRow(`SELECT ` + c + ` FROM (SELECT DISTINCT ` + c + ` FROM ` + q(table) + ` WHERE ` + c + ` IS NOT NULL) AS d WHERE NOT EXISTS (SELECT 1 FROM ` +
			strs + ` AS s WHERE s.` + q(nsysdb.ColID) + ` = d.` + c + `) LIMIT 1`).Scan(&id)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return r.tableErrorOn(queryRow, table, err)
		default:
			return r.unresolved(id, ref.logical, ref.col)
		}
	}
	return nil
}

// emitGaps hands on what the export cannot give.
func (r *reader) emitGaps() error {
	if r.h.Gap == nil {
		return nil
	}
	for _, g := range r.gaps {
		if err := r.h.Gap(g); err != nil {
			return r.handled("", err)
		}
	}
	return nil
}

// planCopies reads the copy table's columns and the enums that name its
// copy and memory kinds.
func (r *reader) planCopies() error {
	table := r.tables[nsysdb.TableMemcpy]
	if table == "" {
		reason := r.absentReason(nsysdb.TableMemcpy, "memory copy", "CUDA", "cuda", func(t records.Tracing) bool { return t.CUDA })
		r.lack(records.FactMemcpy, reason)
		r.lack(records.FactMemcpyBytes, reason)
		r.lack(records.FactMemoryKinds, reason)
		return nil
	}
	var err error
	if r.mcols, err = r.columns(nsysdb.TableMemcpy, nsysdb.ColStart, nsysdb.ColEnd, nsysdb.ColBytes, nsysdb.ColCopyKind); err != nil {
		return err
	}
	if r.tables[nsysdb.TableCopyOper] == "" {
		return &inputerr.Error{Path: r.path, Where: "table " + nsysdb.TableCopyOper,
			Problem: "the export has memory copies but no " + nsysdb.TableCopyOper + " table to tell their directions",
			Hint:    nsysdb.ExportHint}
	}
	opers, err := r.readEnum(nsysdb.TableCopyOper)
	if err != nil {
		return err
	}
	r.copyKinds = map[int64]vocab.CopyKind{}
	r.uvmKinds = map[int64]bool{}
	for id, n := range opers {
		r.copyKinds[id] = nsysdb.CopyKindOf(n)
		r.uvmKinds[id] = nsysdb.IsMigrationKind(n)
	}
	switch {
	case !r.mcols[nsysdb.ColSrcKind] || !r.mcols[nsysdb.ColDstKind]:
		r.lack(records.FactMemoryKinds, fmt.Sprintf("table %s has no %s/%s columns; export with Nsight Systems 2025.3 or newer", table, nsysdb.ColSrcKind, nsysdb.ColDstKind))
	case r.tables[nsysdb.TableMemKind] == "":
		r.lack(records.FactMemoryKinds, fmt.Sprintf("the export has no %s table to name the memory kinds of copies", nsysdb.TableMemKind))
	default:
		mk, err := r.readEnum(nsysdb.TableMemKind)
		if err != nil {
			return err
		}
		r.memKinds = map[int64]vocab.MemKind{}
		for id, n := range mk {
			r.memKinds[id] = nsysdb.MemKindOf(n)
		}
	}
	if !r.mcols[nsysdb.ColCorrelationID] {
		r.lack(records.FactCorrelation, fmt.Sprintf("table %s has no %s column", table, nsysdb.ColCorrelationID))
	}
	if r.mcols[nsysdb.ColMigration] {
		causes, err := r.optionalEnum(nsysdb.TableMigration)
		if err != nil {
			return err
		}
		for id, n := range causes {
			if r.migrations == nil {
				r.migrations = map[int64]string{}
			}
			r.migrations[id] = nsysdb.MigrationOf(n)
		}
	}
	return nil
}

// copyEnumsOf names a copy row's direction and the memory kinds of its two
// sides from their enum ids: unknown for a side the export leaves NULL (-1)
// and for both sides where it has no memory kinds. An id the export's enum
// table does not hold is an enum nsys never wrote: the error names it.
func (r *reader) copyEnumsOf(kind, src, dst int64) (vocab.CopyKind, vocab.MemKind, vocab.MemKind, error) {
	k, ok := r.copyKinds[kind]
	if !ok {
		return "", "", "", r.unknownEnum(nsysdb.ColCopyKind, kind, nsysdb.TableCopyOper)
	}
	side := func(col string, id int64) (vocab.MemKind, error) {
		if r.memKinds == nil || id < 0 {
			return vocab.MemUnknown, nil
		}
		m, ok := r.memKinds[id]
		if !ok {
			return "", r.unknownEnum(col, id, nsysdb.TableMemKind)
		}
		return m, nil
	}
	sk, err := side(nsysdb.ColSrcKind, src)
	if err != nil {
		return "", "", "", err
	}
	dk, err := side(nsysdb.ColDstKind, dst)
	return k, sk, dk, err
}

// unknownEnum says that a copy's column holds an id its enum table lacks.
func (r *reader) unknownEnum(col string, id int64, enum string) *inputerr.Error {
	return r.unknownEnumIn(nsysdb.TableMemcpy, col, id, enum)
}

// unknownEnumIn says that a column of the logical table holds an id its
// enum table lacks.
func (r *reader) unknownEnumIn(table, col string, id int64, enum string) *inputerr.Error {
	return &inputerr.Error{Path: r.path, Where: "table " + r.tables[table],
		Problem: fmt.Sprintf("%s %d is not one of the ids %s defines: an unknown enum value", col, id, r.tables[enum]),
		Hint:    "the export is damaged or was edited; " + nsysdb.ExportHint}
}

// knownNVTXTypes refuses an NVTX table that holds an event type the
// export's ENUM_NSYS_EVENT_TYPE does not define as an NVTX one (its name
// Nvtx...): what such a row is (a push/pop range, a mark, a domain's
// creation) is unknown, and reading past it would leave ranges out unsaid.
// It names the rows, the first of them and its value.
func (r *reader) knownNVTXTypes(types map[int64]string) error {
	ids := make([]string, 0, len(types))
	for id, name := range types {
		if strings.HasPrefix(name, "Nvtx") {
			ids = append(ids, strconv.FormatInt(id, 10))
		}
	}
	slices.Sort(ids)
	table, col := r.tables[nsysdb.TableNVTX], q(nsysdb.ColEventType)
	var (
		n     int64
		first sql.NullInt64
		value sql.NullString
	)
	query := `SELECT count(*), min(rowid) FROM ` + q(table) + ` WHERE ` + col + ` IS NULL OR ` + col + ` NOT IN (` + strings.Join(ids, ", ") + `)`
	if len(ids) == 0 {
		query = `SELECT count(*), min(rowid) FROM ` + q(table)
	}
	if err := r.queryRow(query).Scan(&n, &first); err != nil {
		return r.tableError(table, err)
	}
	if n == 0 {
		return nil
	}
	if err := r.queryRow(`SELECT ifnull(CAST(`+col+` AS TEXT), 'NULL') FROM `+q(table)+` WHERE rowid = ?`, first.Int64).Scan(&value); err != nil {
		return r.tableError(table, err)
	}
	verb := "hold"
	if n == 1 {
		verb = "holds"
	}
	return &inputerr.Error{Path: r.path, Where: "table " + table,
		Problem: fmt.Sprintf("%s %s an eventType that %s defines as no NVTX event, or does not define (the first: rowid %d, eventType %s): what those NVTX events are is unknown",
			rowCount(n), verb, r.tables[nsysdb.TableEventType], first.Int64, value.String),
		Hint: "the export is damaged or was edited; " + nsysdb.ExportHint}
}

// nvtxPlan is how the NVTX table is read: its columns, the text columns'
// expressions and the event types of push/pop ranges and domain creation.
type nvtxPlan struct {
	cols                  map[string]bool
	text, textID          string
	pushPop, domainCreate int64
}

// planNVTX reads the NVTX table's columns and event types; nil (with the
// gaps recorded) where the export cannot give push/pop ranges.
func (r *reader) planNVTX() (*nvtxPlan, error) {
	lack := func(reason string) {
		r.lack(records.FactNVTX, reason)
		r.lack(records.FactNVTXSummary, reason)
	}
	if r.tables[nsysdb.TableNVTX] == "" {
		lack(r.absentReason(nsysdb.TableNVTX, "NVTX range", "NVTX", "nvtx", func(t records.Tracing) bool { return t.NVTX }))
		return nil, nil
	}
	cols, err := r.columns(nsysdb.TableNVTX, nsysdb.ColStart, nsysdb.ColEnd, nsysdb.ColEventType)
	if err != nil {
		return nil, err
	}
	if !cols[nsysdb.ColText] && !cols[nsysdb.ColTextID] {
		if _, err := r.columns(nsysdb.TableNVTX, nsysdb.ColText); err != nil {
			return nil, err
		}
	}
	if r.tables[nsysdb.TableEventType] == "" {
		lack(fmt.Sprintf("the export has no %s table, so push/pop ranges cannot be told from other NVTX events", nsysdb.TableEventType))
		return nil, nil
	}
	types, err := r.readEnum(nsysdb.TableEventType)
	if err != nil {
		return nil, err
	}
	if err := r.knownNVTXTypes(types); err != nil {
		return nil, err
	}
	p := &nvtxPlan{cols: cols, text: "NULL", textID: "NULL", pushPop: -1, domainCreate: -1}
	for id, n := range types {
		switch n {
		case nsysdb.EventPushPopRange:
			p.pushPop = id
		case nsysdb.EventDomainCreate:
			p.domainCreate = id
		}
	}
	if p.pushPop < 0 {
		lack(fmt.Sprintf("%s has no %s event type", r.tables[nsysdb.TableEventType], nsysdb.EventPushPopRange))
		return nil, nil
	}
	if cols[nsysdb.ColText] {
		p.text = q(nsysdb.ColText)
	}
	if cols[nsysdb.ColTextID] {
		p.textID = q(nsysdb.ColTextID)
	}
	return p, nil
}
