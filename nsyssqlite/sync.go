package nsyssqlite

import (
	"database/sql"
	"fmt"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
)

// invalidID is how CUPTI writes an absent stream or event id (0xFFFFFFFF).
const invalidID = 1<<32 - 1

// id turns an id column into a record's id, records.NoID for none.
func id(v sql.NullInt64) int64 {
	if !v.Valid || v.Int64 == invalidID || v.Int64 < 0 {
		return records.NoID
	}
	return v.Int64
}

// emitSyncs hands on the synchronisation records, each tied to the call
// that made it by correlation id within its process, its kind told by that
// call (nsysdb.SyncKindOfCall), else by deprecatedSyncType through
// ENUM_CUPTI_SYNC_TYPE, else by the syncType column as nsys writes it.
func (r *reader) emitSyncs() error {
	table := r.tables[nsysdb.TableSync]
	if r.h.Sync == nil || table == "" {
		return nil
	}
	cols, err := r.columns(nsysdb.TableSync, nsysdb.ColStart, nsysdb.ColEnd)
	if err != nil {
		return err
	}
	enum, err := r.optionalEnum(nsysdb.TableSyncType)
	if err != nil {
		return err
	}
	ids, err := r.apiNameIDs(nsysdb.SyncAPIs())
	if err != nil {
		return err
	}
	s := func(name string) string { return "s." + q(name) }
	opt := func(name, none string) string {
		if cols[name] {
			return `ifnull(` + s(name) + `, ` + none + `)`
		}
		return none
	}
	join, nameID := `0 = 1`, "NULL"
	// With every call read, their synchronising calls are at hand
	// (syncCalls): the records are tied to them below, not in SQL.
	byIndex := r.syncsRead && cols[nsysdb.ColCorrelationID] && r.rcols[nsysdb.ColCorrelationID]
	if !byIndex && cols[nsysdb.ColCorrelationID] && r.rcols[nsysdb.ColCorrelationID] && len(ids) > 0 {
		join = `r.` + q(nsysdb.ColCorrelationID) + ` = ` + s(nsysdb.ColCorrelationID) + ` AND r.` + q(nsysdb.ColNameID) + ` IN (` + intList(ids) + `)`
		if cols[nsysdb.ColGlobalPid] && r.rcols[nsysdb.ColGlobalTid] {
			join += ` AND ` + r.processExpr(`r.`+q(nsysdb.ColGlobalTid)) + ` = ` + r.processExpr(s(nsysdb.ColGlobalPid))
		}
		join += r.andCallsOnly("r.")
		nameID = `r.` + q(nsysdb.ColNameID)
	}
	// The process a record is of ties it to its call and to the streams
	// it waited on: a NULL globalPid is refused (tableError names it), not
	// read as no process.
	pid := "0"
	if cols[nsysdb.ColGlobalPid] {
		pid = s(nsysdb.ColGlobalPid)
	}
	qs := `SELECT ` + s(nsysdb.ColStart) + `, ` + s(nsysdb.ColEnd) + `, ` + opt(nsysdb.ColCorrelationID, "0") + `, ` + pid + `, ` +
		opt(nsysdb.ColDeviceID, "0") + `, ` + opt(nsysdb.ColStreamID, "NULL") + `, ` + opt(nsysdb.ColEventID, "NULL") + `, ` +
		opt(nsysdb.ColSyncType, "0") + `, ` + opt(nsysdb.ColOldSyncType, "-1") + `, ` + nameID + `, ` + opt(nsysdb.ColEventSyncID, "0") +
		` FROM ` + q(table) + ` AS s`
	if !byIndex {
		qs += ` LEFT JOIN ` + q(r.tables[nsysdb.TableRuntime]) + ` AS r ON ` + join
	}
	rows, err := r.query(qs)
	if err != nil {
		return r.tableError(table, err)
	}
	defer rows.Close()
	var (
		sy                records.Sync
		gpid, typ, oldTyp int64
		stream, event, nm sql.NullInt64
	)
	for rows.Next() {
		sy = records.Sync{}
		if err := rows.Scan(&sy.Start, &sy.End, &sy.Corr, &gpid, &sy.Device, &stream, &event, &typ, &oldTyp, &nm, &sy.Seq); err != nil {
			return r.tableError(table, err)
		}
		if gpid != 0 {
			sy.PID, _ = r.split(gpid)
		}
		// The stream and event a record names tie it to the work it
		// waited for: nsys always writes them, and a NULL is refused, not
		// read as none.
		for _, c := range []struct {
			name string
			v    sql.NullInt64
		}{{nsysdb.ColStreamID, stream}, {nsysdb.ColEventID, event}} {
			if cols[c.name] && !c.v.Valid {
				return r.nullColumn(r.queryRow, table, c.name)
			}
		}
		sy.Stream, sy.Event = id(stream), id(event)
		if sy.Seq == invalidID || sy.Seq < 0 || sy.Event == records.NoID {
			sy.Seq = 0
		}
		// The kind of synchronisation, where the export names its ids, is
		// one of them: an id it does not define was never written by nsys.
		for _, c := range []struct {
			name string
			v    int64
		}{{nsysdb.ColSyncType, typ}, {nsysdb.ColOldSyncType, oldTyp}} {
			if _, ok := enum[c.v]; len(enum) > 0 && cols[c.name] && c.v >= 0 && !ok {
				err := r.unknownEnumIn(nsysdb.TableSync, c.name, c.v, nsysdb.TableSyncType)
				err.Where += fmt.Sprintf(", the synchronisation of correlation id %d", sy.Corr)
				return err
			}
		}
		known := false
		switch {
		case byIndex:
			if name := r.syncCall(&sy, cols); name != "" {
				sy.Kind, known = nsysdb.SyncKindOfCall(name)
			}
		case nm.Valid:
			name, err := r.str(nm.Int64, nsysdb.TableRuntime, nsysdb.ColNameID)
			if err != nil {
				return err
			}
			sy.Kind, known = nsysdb.SyncKindOfCall(nsysdb.StripAPIVersion(name))
		}
		switch {
		case known:
		case oldTyp >= 0 && enum[oldTyp] != "":
			sy.Kind = nsysdb.SyncKindOfEnum(enum[oldTyp])
		default:
			sy.Kind = nsysdb.SyncKindOfColumn(typ)
		}
		if err := r.h.Sync(&sy); err != nil {
			return r.handled(table, err)
		}
	}
	if err := rows.Err(); err != nil {
		return r.tableError(table, err)
	}
	return nil
}

// syncCall is the name of the synchronising call a synchronisation record
// was made by, "" for none, as the join in SQL finds it: by correlation id
// within the process where both tables tell processes, else by
// correlation id alone (cols are the synchronisation table's).
func (r *reader) syncCall(sy *records.Sync, cols map[string]bool) string {
	pid, anyPID := sy.PID, false
	switch {
	case !r.rcols[nsysdb.ColGlobalTid]:
		pid = 0
	case !cols[nsysdb.ColGlobalPid]:
		anyPID = true
	}
	name := ""
	r.syncCalls.Each(pid, sy.Corr, anyPID, func(c *records.Call) error {
		if name == "" {
			name = c.Name
		}
		return nil
	})
	return name
}

// emitEvents hands on the CUDA event records: which stream recorded each
// event, and which recording it was.
func (r *reader) emitEvents() error {
	table := r.tables[nsysdb.TableCUDAEvent]
	if r.h.Event == nil || table == "" {
		return nil
	}
	cols, err := r.columns(nsysdb.TableCUDAEvent)
	if err != nil {
		return err
	}
	opt := func(name, none string) string {
		if cols[name] {
			return `ifnull(` + q(name) + `, ` + none + `)`
		}
		return none
	}
	// A NULL globalPid is refused, as of a synchronisation (must).
	rows, err := r.query(`SELECT ` + opt(nsysdb.ColCorrelationID, "0") + `, ` + must(cols, nsysdb.ColGlobalPid) + `, ` + opt(nsysdb.ColDeviceID, "0") + `, ` +
		opt(nsysdb.ColStreamID, "NULL") + `, ` + opt(nsysdb.ColEventID, "NULL") + `, ` + opt(nsysdb.ColEventSyncID, "0") + ` FROM ` + q(table))
	if err != nil {
		return r.tableError(table, err)
	}
	defer rows.Close()
	var (
		e             records.EventRecord
		gpid          int64
		stream, event sql.NullInt64
	)
	for rows.Next() {
		e = records.EventRecord{}
		if err := rows.Scan(&e.Corr, &gpid, &e.Device, &stream, &event, &e.Seq); err != nil {
			return r.tableError(table, err)
		}
		if gpid != 0 {
			e.PID, _ = r.split(gpid)
		}
		e.Stream, e.Event = id(stream), id(event)
		if e.Seq == invalidID {
			e.Seq = 0
		}
		if err := r.h.Event(&e); err != nil {
			return r.handled(table, err)
		}
	}
	if err := rows.Err(); err != nil {
		return r.tableError(table, err)
	}
	return nil
}

// emitGraphs hands on the CUDA graph launches traced whole, where the
// export has them (nsys --cuda-graph-trace=graph).
func (r *reader) emitGraphs() error {
	table := r.tables[nsysdb.TableGraphTrace]
	if r.h.Graph == nil || table == "" {
		return nil
	}
	cols, err := r.columns(nsysdb.TableGraphTrace, nsysdb.ColStart, nsysdb.ColEnd)
	if err != nil {
		return err
	}
	rows, err := r.query(`SELECT ` + nsysdb.Cols(nsysdb.ColStart, nsysdb.ColEnd) + `, ` + col(cols, nsysdb.ColCorrelationID) + `, ` + must(cols, nsysdb.ColGlobalPid) + `, ` +
		col(cols, nsysdb.ColDeviceID) + `, ` + col(cols, nsysdb.ColStreamID) + `, ` + col(cols, nsysdb.ColGraphID) + ` FROM ` + q(table))
	if err != nil {
		return r.tableError(table, err)
	}
	defer rows.Close()
	var (
		g    records.GraphLaunch
		gpid int64
	)
	for rows.Next() {
		g = records.GraphLaunch{}
		if err := rows.Scan(&g.Start, &g.End, &g.Corr, &gpid, &g.Device, &g.Stream, &g.Graph); err != nil {
			return r.tableError(table, err)
		}
		if gpid != 0 {
			g.PID, _ = r.split(gpid)
		}
		if err := r.h.Graph(&g); err != nil {
			return r.handled(table, err)
		}
	}
	if err := rows.Err(); err != nil {
		return r.tableError(table, err)
	}
	return nil
}

// emitCounts hands on the trace's counts: every runtime call (a count
// SQLite makes without decoding rows), the first start and last end where
// the export does not record the trace's duration (one more pass), and the
// memsets.
func (r *reader) emitCounts() error {
	if r.h.Counts == nil {
		return nil
	}
	var c records.Counts
	t := r.tables[nsysdb.TableRuntime]
	calls := ""
	if c := r.callsOnly(""); c != "" {
		calls = ` WHERE ` + c
	}
	var err error
	if c.Calls, err = r.rowCount(nsysdb.TableRuntime); err != nil {
		return err
	}
	if r.meta.DurationNs == 0 {
		var first, last sql.NullInt64
		if err := r.queryRow(`SELECT min(`+q(nsysdb.ColStart)+`), max(`+q(nsysdb.ColEnd)+`) FROM `+q(t)+calls).Scan(&first, &last); err != nil {
			return r.tableError(t, err)
		}
		c.FirstCall, c.LastCall = first.Int64, last.Int64
	}
	if c.Memsets, err = r.rowCount(nsysdb.TableMemset); err != nil {
		return err
	}
	return r.handled(t, r.h.Counts(&c))
}
