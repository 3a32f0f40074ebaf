package nsyssqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
)

// emitOps hands on the GPU operations wanted: copies (joined to their calls
// with records.Selection.JoinCalls), kernels, memsets.
func (r *reader) emitOps() error {
	if r.h.Op == nil {
		return nil
	}
	if r.opts.WantsOp(records.OpCopy) && r.mcols != nil {
		var err error
		if r.opts.JoinCalls {
			err = r.emitJoinedCopies()
		} else {
			err = r.emitCopies()
		}
		if err != nil {
			return err
		}
	}
	if r.opts.WantsOp(records.OpKernel) && r.kcols != nil {
		if err := r.emitKernels(); err != nil {
			return err
		}
	}
	if r.opts.WantsOp(records.OpMemset) && r.tables[nsysdb.TableMemset] != "" {
		if err := r.emitMemsets(); err != nil {
			return err
		}
	}
	return nil
}

// copyColumns are the copy table's columns every copy query selects, as
// expressions on the table named by alias ("" for none): start, end,
// bytes, copy kind, the two memory kinds, correlation id, stream, device,
// global process id, migration cause and graph node.
func (r *reader) copyColumns(alias string) string {
	c := func(name string) string { return alias + q(name) }
	opt := func(name string) string {
		if r.mcols[name] {
			return `ifnull(` + c(name) + `, 0)`
		}
		return "0"
	}
	src, dst := "-1", "-1"
	if r.memKinds != nil {
		src, dst = `ifnull(`+c(nsysdb.ColSrcKind)+`, -1)`, `ifnull(`+c(nsysdb.ColDstKind)+`, -1)`
	}
	migration := "-1"
	if r.mcols[nsysdb.ColMigration] {
		migration = `ifnull(` + c(nsysdb.ColMigration) + `, -1)`
	}
	return strings.Join([]string{c(nsysdb.ColStart), c(nsysdb.ColEnd), c(nsysdb.ColBytes), c(nsysdb.ColCopyKind), src, dst,
		opt(nsysdb.ColCorrelationID), opt(nsysdb.ColStreamID), opt(nsysdb.ColDeviceID), opt(nsysdb.ColGlobalPid),
		migration, opt(nsysdb.ColGraphNodeID)}, ", ")
}

// copyRow is one row of copyColumns.
type copyRow struct {
	op                            records.Op
	kind, src, dst, gpid, migrate int64
}

// dest lists where rows.Scan writes copyColumns.
func (c *copyRow) dest() []any {
	return []any{&c.op.Start, &c.op.End, &c.op.Bytes, &c.kind, &c.src, &c.dst, &c.op.Corr, &c.op.Stream, &c.op.Device, &c.gpid,
		&c.migrate, &c.op.GraphNode}
}

// decode names the row's enums and splits its process id.
func (r *reader) decode(c *copyRow) error {
	c.op.Kind = records.OpCopy
	var err error
	if c.op.Copy, c.op.Src, c.op.Dst, err = r.copyEnumsOf(c.kind, c.src, c.dst); err != nil {
		var ie *inputerr.Error
		if errors.As(err, &ie) {
			ie.Where += fmt.Sprintf(", the copy with correlation id %d", c.op.Corr)
		}
		return err
	}
	if c.gpid != 0 {
		c.op.PID, _ = nsysdb.SplitGlobalID(c.gpid)
	}
	if c.migrate >= 0 {
		c.op.Migration = r.migrations[c.migrate]
	}
	r.markMigration(c)
	return nil
}

// markMigration names a unified-memory migration whose cause the export
// leaves out as one of unknown cause, so that no migration passes for a
// copy the program asked for.
func (r *reader) markMigration(c *copyRow) {
	if c.op.Migration == "" && r.uvmKinds[c.kind] {
		c.op.Migration = nsysdb.MigrationOf("")
	}
}

// emitCopies hands on the copies, those of the calls read where
// ProgramThread kept one thread.
func (r *reader) emitCopies() error {
	table := r.tables[nsysdb.TableMemcpy]
	rows, err := r.query(`SELECT ` + r.copyColumns("") + ` FROM ` + q(table) + r.corrFilter(r.mcols))
	if err != nil {
		return r.tableError(table, err)
	}
	defer rows.Close()
	var c copyRow
	for rows.Next() {
		c = copyRow{}
		if err := rows.Scan(c.dest()...); err != nil {
			return r.tableError(table, err)
		}
		if !r.wantsCorr(r.mcols, c.op.Corr) {
			continue
		}
		if err := r.decode(&c); err != nil {
			return err
		}
		if err := r.h.Op(&c.op); err != nil {
			return r.handled(table, err)
		}
	}
	if err := rows.Err(); err != nil {
		return r.tableError(table, err)
	}
	return nil
}

// emitJoinedCopies hands on every copy joined to its runtime call by
// correlation id within the same process (Op.Call nil where the trace holds
// no such call): one query, no ORDER BY, so SQLite indexes the runtime
// table's copy calls on the fly and the rows come in the copy table's
// order.
func (r *reader) emitJoinedCopies() error {
	table := r.tables[nsysdb.TableMemcpy]
	rt := r.tables[nsysdb.TableRuntime]
	// A copy's call is a copy API's, or, for a graph's copy traced per
	// node, the graph's launch.
	copyAPIs, err := r.prefixNameIDs(append(append([]string(nil), nsysdb.CopyAPIPrefixes...), nsysdb.GraphLaunchPrefixes...),
		func(name string) bool { return nsysdb.IsCopyAPI(name) || nsysdb.IsGraphLaunch(name) })
	if err != nil {
		return err
	}
	rc := func(name string) string { return "r." + q(name) }
	m := func(name string) string { return "m." + q(name) }
	join := `0 = 1`
	if r.mcols[nsysdb.ColCorrelationID] && r.rcols[nsysdb.ColCorrelationID] && len(copyAPIs) > 0 {
		// Only the copy APIs' calls can have issued a copy: with that term
		// SQLite indexes just those calls (an automatic partial index)
		// rather than every call of the trace.
		join = rc(nsysdb.ColCorrelationID) + ` = ` + m(nsysdb.ColCorrelationID) + ` AND ` + rc(nsysdb.ColNameID) + ` IN (` + intList(copyAPIs) + `)`
		if r.mcols[nsysdb.ColGlobalPid] && r.rcols[nsysdb.ColGlobalTid] {
			join += ` AND ` + nsysdb.PIDExpr(rc(nsysdb.ColGlobalTid)) + ` = ` + nsysdb.PIDExpr(m(nsysdb.ColGlobalPid))
		}
		join += r.andCallsOnly("r.")
	}
	gtid := "0"
	if r.rcols[nsysdb.ColGlobalTid] {
		gtid = `ifnull(` + rc(nsysdb.ColGlobalTid) + `, 0)`
	}
	threads, err := r.threadNames()
	if err != nil {
		return err
	}
	result := "0"
	if r.rcols[nsysdb.ColReturnValue] {
		result = `ifnull(` + rc(nsysdb.ColReturnValue) + `, 0)`
	}
	rows, err := r.query(`SELECT ` + r.copyColumns("m.") + `, ` + strings.Join([]string{rc(nsysdb.ColStart), rc(nsysdb.ColEnd), rc(nsysdb.ColNameID), gtid, result}, ", ") +
		` FROM ` + q(table) + ` AS m LEFT JOIN ` + q(rt) + ` AS r ON ` + join)
	if err != nil {
		return r.tableError(table, err)
	}
	defer rows.Close()
	names := map[int64]string{}
	var (
		c              copyRow
		call           records.Call
		cs, ce, nameID sql.NullInt64
		gt, ret        int64
	)
	for rows.Next() {
		c = copyRow{}
		if err := rows.Scan(append(c.dest(), &cs, &ce, &nameID, &gt, &ret)...); err != nil {
			return r.tableError(table, err)
		}
		if err := r.decode(&c); err != nil {
			return err
		}
		if nameID.Valid {
			name, ok := names[nameID.Int64]
			if !ok {
				v, err := r.str(nameID.Int64, nsysdb.TableRuntime, nsysdb.ColNameID)
				if err != nil {
					return err
				}
				name = nsysdb.StripAPIVersion(v)
				names[nameID.Int64] = name
			}
			call = records.Call{Name: name, Start: cs.Int64, End: ce.Int64, Result: ret, Corr: c.op.Corr, PID: c.op.PID}
			if gt != 0 {
				call.PID, call.TID = nsysdb.SplitGlobalID(gt)
				call.Thread = threads[gt]
			}
			call.Stack = r.stackOf(call.PID, c.op.Corr)
			c.op.Call = &call
		}
		if err := r.h.Op(&c.op); err != nil {
			return r.handled(table+" joined to "+rt, err)
		}
	}
	if err := rows.Err(); err != nil {
		return r.tableError(table, err)
	}
	return nil
}

// emitKernels hands on the kernel launches. They belong to the calls read
// through cudaLaunchKernel's correlation ids; a program's thread that
// launched none through it keeps its process's kernels.
func (r *reader) emitKernels() error {
	table := r.tables[nsysdb.TableKernel]
	cols := r.kcols
	qs := `SELECT ` + nsysdb.Cols(nsysdb.ColStart, nsysdb.ColEnd, nsysdb.ColShortName) + `, ` + col(cols, nsysdb.ColCorrelationID) + `, ` + col(cols, nsysdb.ColStreamID) + `, ` +
		col(cols, nsysdb.ColGlobalPid) + `, ` + col(cols, nsysdb.ColDeviceID) + `, ` + col(cols, nsysdb.ColGraphNodeID) + ` FROM ` + q(table)
	byCorr := !r.threadOnly || r.launches
	if byCorr {
		qs += r.corrFilter(cols)
	}
	rows, err := r.query(qs)
	if err != nil {
		return r.tableError(table, err)
	}
	defer rows.Close()
	var (
		k            records.Op
		nameID, gpid int64
	)
	for rows.Next() {
		k = records.Op{Kind: records.OpKernel}
		if err := rows.Scan(&k.Start, &k.End, &nameID, &k.Corr, &k.Stream, &gpid, &k.Device, &k.GraphNode); err != nil {
			return r.tableError(table, err)
		}
		if gpid != 0 {
			k.PID, _ = nsysdb.SplitGlobalID(gpid)
		}
		if byCorr {
			if !r.wantsCorr(cols, k.Corr) {
				continue
			}
		} else if k.PID != r.pid && k.PID != 0 && r.pid != 0 {
			continue
		}
		if k.Name, err = r.str(nameID, nsysdb.TableKernel, nsysdb.ColShortName); err != nil {
			return err
		}
		if err := r.h.Op(&k); err != nil {
			return r.handled(table, err)
		}
	}
	if err := rows.Err(); err != nil {
		return r.tableError(table, err)
	}
	return nil
}

// emitMemsets hands on the memsets.
func (r *reader) emitMemsets() error {
	table := r.tables[nsysdb.TableMemset]
	cols, err := r.columns(nsysdb.TableMemset, nsysdb.ColStart, nsysdb.ColEnd)
	if err != nil {
		return err
	}
	rows, err := r.query(`SELECT ` + nsysdb.Cols(nsysdb.ColStart, nsysdb.ColEnd) + `, ` + col(cols, nsysdb.ColBytes) + `, ` + col(cols, nsysdb.ColCorrelationID) + `, ` +
		col(cols, nsysdb.ColStreamID) + `, ` + col(cols, nsysdb.ColDeviceID) + `, ` + col(cols, nsysdb.ColGlobalPid) + `, ` + col(cols, nsysdb.ColGraphNodeID) +
		` FROM ` + q(table) + r.corrFilter(cols))
	if err != nil {
		return r.tableError(table, err)
	}
	defer rows.Close()
	var (
		o    records.Op
		gpid int64
	)
	for rows.Next() {
		o = records.Op{Kind: records.OpMemset}
		if err := rows.Scan(&o.Start, &o.End, &o.Bytes, &o.Corr, &o.Stream, &o.Device, &gpid, &o.GraphNode); err != nil {
			return r.tableError(table, err)
		}
		if !r.wantsCorr(cols, o.Corr) {
			continue
		}
		if gpid != 0 {
			o.PID, _ = nsysdb.SplitGlobalID(gpid)
		}
		if err := r.h.Op(&o); err != nil {
			return r.handled(table, err)
		}
	}
	if err := rows.Err(); err != nil {
		return r.tableError(table, err)
	}
	return nil
}
