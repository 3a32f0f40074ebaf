package nsyssqlite

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// emitOps hands on the GPU operations wanted: copies (joined to their calls
// with records.Selection.JoinCalls), kernels, memsets.
func (r *reader) emitOps() error {
	if r.h.Op == nil {
		return nil
	}
	if r.opts.WantsOp(records.OpCopy) && r.mcols != nil {
		if err := r.emitCopies(); err != nil {
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
// global process id, migration cause, graph node and context.
func (r *reader) copyColumns(alias string) string {
	c := func(name string) string { return alias + q(name) }
	opt := func(name string) string {
		if r.mcols[name] {
			return `ifnull(` + c(name) + `, 0)`
		}
		return "0"
	}
	// The stream decides how a copy orders with the rest (stream 0 is the
	// legacy default stream, which waits for every other): a NULL one is
	// refused (tableError names it), not read as 0.
	required := func(name string) string {
		if r.mcols[name] {
			return c(name)
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
		opt(nsysdb.ColCorrelationID), required(nsysdb.ColStreamID), opt(nsysdb.ColDeviceID), opt(nsysdb.ColGlobalPid),
		migration, opt(nsysdb.ColGraphNodeID), opt(nsysdb.ColContextID)}, ", ")
}

// copyRow is one row of copyColumns.
type copyRow struct {
	op                                     records.Op
	kind, src, dst, gpid, migrate, context int64
}

// copyEnums is one (copy kind, source, destination) triple of enum ids
// and what they name, and whether the kind is a unified-memory
// migration's: copies come in runs of one triple, so the last one decoded
// is kept (reader.lastEnums) and its maps are not looked up again.
type copyEnums struct {
	kind, src, dst int64
	copy           vocab.CopyKind
	from, to       vocab.MemKind
	uvm, valid     bool
}

// decode names the row's enums and splits its process id.
func (r *reader) decode(c *copyRow) error {
	c.op.Kind = records.OpCopy
	e := &r.lastEnums
	if !e.valid || e.kind != c.kind || e.src != c.src || e.dst != c.dst {
		k, from, to, err := r.copyEnumsOf(c.kind, c.src, c.dst)
		if err != nil {
			var ie *inputerr.Error
			if errors.As(err, &ie) {
				ie.Where += fmt.Sprintf(", the copy with correlation id %d", c.op.Corr)
			}
			return err
		}
		*e = copyEnums{kind: c.kind, src: c.src, dst: c.dst, copy: k, from: from, to: to, uvm: r.uvmKinds[c.kind], valid: true}
	}
	c.op.Copy, c.op.Src, c.op.Dst = e.copy, e.from, e.to
	if c.gpid != 0 {
		c.op.PID, _ = r.split(c.gpid)
	}
	if c.migrate >= 0 && r.migrations != nil {
		m, ok := r.migrations[c.migrate]
		if !ok {
			err := r.unknownEnum(nsysdb.ColMigration, c.migrate, nsysdb.TableMigration)
			err.Where += fmt.Sprintf(", the unified-memory migration at %d ns", c.op.Start)
			return err
		}
		c.op.Migration = m
	}
	// A unified-memory migration whose cause the export leaves out is one
	// of unknown cause, so that no migration passes for a copy the program
	// asked for.
	if c.op.Migration == "" && e.uvm {
		c.op.Migration = nsysdb.MigrationOf("")
	}
	return nil
}

// emitCopies hands on the copies, those of the calls read where
// ProgramThread kept one thread; with records.Selection.JoinCalls each with
// the copy call that issued it (joinCall), in the copy table's order.
func (r *reader) emitCopies() error {
	table := r.tables[nsysdb.TableMemcpy]
	var c copyRow
	from := table
	if r.joining {
		from = table + " joined to " + r.tables[nsysdb.TableRuntime]
	}
	// A copy joins its call within its process where the runtime table
	// names processes (else every call is of process 0).
	byPID, anyPID := r.rcols[nsysdb.ColGlobalTid], r.anyPID()
	filter := r.corrFilter(r.mcols)
	seen := r.seeTable(nsysdb.TableMemcpy, filter == "" && !r.threadOnly)
	err := r.ints(`SELECT `+r.copyColumns("")+` FROM `+q(table)+filter, 13, func(v []int64) error {
		c = copyRow{}
		c.op.Start, c.op.End, c.op.Bytes, c.kind, c.src, c.dst = v[0], v[1], v[2], v[3], v[4], v[5]
		c.op.Corr, c.op.Stream, c.op.Device, c.gpid, c.migrate, c.op.GraphNode, c.context = v[6], v[7], v[8], v[9], v[10], v[11], v[12]
		if seen != nil {
			seen.row(c.op.End)
			seen.device(c.op.Device)
			if c.migrate == -1 { // a migration's cause NULL, or no such column
				seen.work(c.op.Stream, c.op.Device, c.context, c.gpid)
			}
		}
		if !r.wantsCorr(r.mcols, c.op.Corr) {
			return nil
		}
		if err := r.decode(&c); err != nil {
			return err
		}
		if !r.joining {
			return r.handled(from, r.h.Op(&c.op))
		}
		// As a join in SQL would, a copy comes once with each call it
		// joins: a call the trace holds twice gives its copy twice.
		pid := c.op.PID
		if !byPID {
			pid = 0
		}
		n, err := r.index.Each(pid, c.op.Corr, anyPID, func(call *records.Call) error {
			call.Stack = r.stackOf(call.PID, c.op.Corr)
			c.op.Call = call
			return r.handled(from, r.h.Op(&c.op))
		})
		if err != nil || n > 0 {
			return err
		}
		c.op.Call = nil
		return r.handled(from, r.h.Op(&c.op))
	})
	if err = r.drained(from, err); err != nil {
		return r.tableError(table, err)
	}
	return nil
}

// planJoin sets up the join of copies to their calls
// (records.Selection.JoinCalls): the name ids of the calls that issue
// copies, the copy APIs' and, for a graph's copies traced per node, the
// graph's launch.
func (r *reader) planJoin() error {
	r.joining = r.opts.JoinCalls && r.h.Op != nil && r.opts.WantsOp(records.OpCopy) && r.mcols != nil &&
		r.mcols[nsysdb.ColCorrelationID] && r.rcols[nsysdb.ColCorrelationID]
	if !r.joining {
		return nil
	}
	ids, err := r.prefixNameIDs(append(append([]string(nil), nsysdb.CopyAPIPrefixes...), nsysdb.GraphLaunchPrefixes...),
		func(name string) bool { return nsysdb.IsCopyAPI(name) || nsysdb.IsGraphLaunch(name) })
	if err != nil {
		return err
	}
	r.copyAPI = map[int64]bool{}
	for _, id := range ids {
		r.copyAPI[id] = true
	}
	return nil
}

// anyPID reports whether copies join calls by correlation id alone: the
// copy table or the runtime table has no process ids. Without the runtime
// table's, the calls are kept as of process 0.
func (r *reader) anyPID() bool {
	return r.rcols[nsysdb.ColGlobalTid] && !r.mcols[nsysdb.ColGlobalPid]
}

// emitKernels hands on the kernel launches. They belong to the calls read
// through cudaLaunchKernel's correlation ids; a program's thread that
// launched none through it keeps its process's kernels. A NULL globalPid,
// which would leave a kernel of no process, is refused (must).
func (r *reader) emitKernels() error {
	table := r.tables[nsysdb.TableKernel]
	cols := r.kcols
	qs := `SELECT ` + nsysdb.Cols(nsysdb.ColStart, nsysdb.ColEnd, nsysdb.ColShortName) + `, ` + col(cols, nsysdb.ColCorrelationID) + `, ` + must(cols, nsysdb.ColStreamID) + `, ` +
		must(cols, nsysdb.ColGlobalPid) + `, ` + col(cols, nsysdb.ColDeviceID) + `, ` + col(cols, nsysdb.ColGraphNodeID) + `, ` +
		col(cols, nsysdb.ColContextID) + ` FROM ` + q(table)
	byCorr := !r.threadOnly || r.launches
	filter := ""
	if byCorr {
		filter = r.corrFilter(cols)
	}
	qs += filter
	seen := r.seeTable(nsysdb.TableKernel, filter == "" && !r.threadOnly)
	var k records.Op
	err := r.ints(qs, 9, func(v []int64) error {
		k = records.Op{Kind: records.OpKernel, Start: v[0], End: v[1], Corr: v[3], Stream: v[4], Device: v[6], GraphNode: v[7]}
		nameID, gpid := v[2], v[5]
		if seen != nil {
			seen.row(k.End)
			seen.device(k.Device)
			seen.work(k.Stream, k.Device, v[8], gpid)
		}
		if gpid != 0 {
			k.PID, _ = r.split(gpid)
		}
		if byCorr {
			if !r.wantsCorr(cols, k.Corr) {
				return nil
			}
		} else if k.PID != r.pid && k.PID != 0 && r.pid != 0 {
			return nil
		}
		var err error
		if k.Name, err = r.str(nameID, nsysdb.TableKernel, nsysdb.ColShortName); err != nil {
			return err
		}
		return r.handled(table, r.h.Op(&k))
	})
	if err = r.drained(table, err); err != nil {
		return r.tableError(table, err)
	}
	return nil
}

// emitMemsets hands on the memsets: all of them, even where only the
// program thread's calls are read (records.Selection.ProgramThread). No
// consumer keeps a memset by its thread; they are read for the checks
// across records, which a damaged memset of any thread fails, so that
// verify refuses the memset the audit refuses.
func (r *reader) emitMemsets() error {
	table := r.tables[nsysdb.TableMemset]
	cols, err := r.columns(nsysdb.TableMemset, nsysdb.ColStart, nsysdb.ColEnd)
	if err != nil {
		return err
	}
	var o records.Op
	seen := r.seeTable(nsysdb.TableMemset, true)
	err = r.ints(`SELECT `+nsysdb.Cols(nsysdb.ColStart, nsysdb.ColEnd)+`, `+col(cols, nsysdb.ColBytes)+`, `+col(cols, nsysdb.ColCorrelationID)+`, `+
		must(cols, nsysdb.ColStreamID)+`, `+col(cols, nsysdb.ColDeviceID)+`, `+must(cols, nsysdb.ColGlobalPid)+`, `+col(cols, nsysdb.ColGraphNodeID)+`, `+
		col(cols, nsysdb.ColContextID)+` FROM `+q(table), 9, func(v []int64) error {
		o = records.Op{Kind: records.OpMemset, Start: v[0], End: v[1], Bytes: v[2], Corr: v[3], Stream: v[4], Device: v[5], GraphNode: v[7]}
		seen.row(o.End)
		seen.work(o.Stream, o.Device, v[8], v[6])
		if gpid := v[6]; gpid != 0 {
			o.PID, _ = r.split(gpid)
		}
		return r.handled(table, r.h.Op(&o))
	})
	if err = r.drained(table, err); err != nil {
		return r.tableError(table, err)
	}
	return nil
}
