package nsyssqlite

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// planBacktraces finds the event class of the runtime table's backtrace
// rows (r.btClass; -1 where the export has none), which are no calls: nsys
// writes one beside each call whose stack it took, with the call's
// correlation id and thread and a span around the call's.
func (r *reader) planBacktraces() error {
	r.btClass = -1
	// Every export's enum names the class; its rows come with the stacks'
	// table, which an export without stacks leaves out.
	if !r.rcols[nsysdb.ColEventClass] || r.tables[nsysdb.TableEventClass] == "" || r.tables[nsysdb.TableCallchains] == "" {
		return nil
	}
	classes, err := r.readEnum(nsysdb.TableEventClass)
	if err != nil {
		return err
	}
	for id, n := range classes {
		if n == nsysdb.EventClassBacktrace {
			r.btClass = id
		}
	}
	return nil
}

// callsOnly is the SQL condition that leaves the backtrace rows out of the
// runtime table named by alias ("" for none, "r." for r), "" where the
// export has none.
func (r *reader) callsOnly(alias string) string {
	if r.btClass < 0 {
		return ""
	}
	return alias + q(nsysdb.ColEventClass) + ` IS NOT ` + strconv.FormatInt(r.btClass, 10)
}

// withCallsOnly is conds with callsOnly's condition, where there is one.
func (r *reader) withCallsOnly(conds []string) []string {
	if c := r.callsOnly(""); c != "" {
		return append(conds[:len(conds):len(conds)], c)
	}
	return conds
}

// andCallsOnly is callsOnly as a further term of a condition.
func (r *reader) andCallsOnly(alias string) string {
	if c := r.callsOnly(alias); c != "" {
		return ` AND ` + c
	}
	return ""
}

// stackKey is a call by its process and correlation id.
type stackKey struct{ pid, corr int64 }

// readStacks reads, with records.Selection.Stacks, the call stacks of the
// copy calls from or to pageable host memory: which stack each such call's
// backtrace row names, then each of those stacks once. Where the export
// holds no stacks at all it records why (a FactStacks gap) and reads none.
func (r *reader) readStacks() error {
	if !r.opts.Stacks || !r.opts.JoinCalls || r.h.Op == nil || r.mcols == nil {
		return nil
	}
	if r.btClass < 0 || r.tables[nsysdb.TableCallchains] == "" || !r.rcols[nsysdb.ColCallchainID] {
		reason := fmt.Sprintf("the export holds no call stacks of CUDA calls (no %s table): nsys took none", nsysdb.TableCallchains)
		if r.tracing().Backtraces {
			reason = fmt.Sprintf("nsys was asked for call stacks of CUDA calls but the export holds none (no %s table): nsys takes them only with CPU sampling on", nsysdb.TableCallchains)
		}
		r.lack(records.FactStacks, reason)
		return nil
	}
	pageable := r.pageableKinds()
	if len(pageable) == 0 || !r.mcols[nsysdb.ColCorrelationID] {
		return nil
	}
	rt, mt := q(r.tables[nsysdb.TableRuntime]), q(r.tables[nsysdb.TableMemcpy])
	b := func(name string) string { return "b." + q(name) }
	m := func(name string) string { return "m." + q(name) }
	kinds := intList(pageable)
	join := b(nsysdb.ColCorrelationID) + ` = ` + m(nsysdb.ColCorrelationID)
	if r.mcols[nsysdb.ColGlobalPid] && r.rcols[nsysdb.ColGlobalTid] {
		join += ` AND ` + r.processExpr(b(nsysdb.ColGlobalTid)) + ` = ` + r.processExpr(m(nsysdb.ColGlobalPid))
	}
	pid := "0"
	if r.rcols[nsysdb.ColGlobalTid] {
		pid = r.processExpr(`ifnull(` + b(nsysdb.ColGlobalTid) + `, 0)`)
	}
	rows, err := r.query(`SELECT DISTINCT ` + pid + `, ` + b(nsysdb.ColCorrelationID) + `, ` + b(nsysdb.ColCallchainID) +
		` FROM ` + rt + ` AS b JOIN ` + mt + ` AS m ON ` + join +
		` WHERE ` + b(nsysdb.ColEventClass) + ` = ` + strconv.FormatInt(r.btClass, 10) + ` AND ` + b(nsysdb.ColCallchainID) + ` IS NOT NULL` +
		` AND (` + m(nsysdb.ColSrcKind) + ` IN (` + kinds + `) OR ` + m(nsysdb.ColDstKind) + ` IN (` + kinds + `))`)
	if err != nil {
		return r.tableError(r.tables[nsysdb.TableRuntime], err)
	}
	chainOf := map[stackKey]int64{}
	ids := map[int64]bool{}
	for rows.Next() {
		var k stackKey
		var id int64
		if err := rows.Scan(&k.pid, &k.corr, &id); err != nil {
			rows.Close()
			return r.tableError(r.tables[nsysdb.TableRuntime], err)
		}
		chainOf[k] = id
		ids[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return r.tableError(r.tables[nsysdb.TableRuntime], err)
	}
	stacks, err := r.readChains(ids)
	if err != nil {
		return err
	}
	r.stacks = make(map[stackKey]*records.Stack, len(chainOf))
	for k, id := range chainOf {
		s := stacks[id]
		if s == nil {
			return &inputerr.Error{Path: r.path, Where: fmt.Sprintf("table %s, correlation id %d", r.tables[nsysdb.TableRuntime], k.corr),
				Problem: fmt.Sprintf("the call's backtrace row names stack %d, which %s does not hold: a reference that does not resolve", id, r.tables[nsysdb.TableCallchains]),
				Hint:    "the export is damaged or was edited; " + nsysdb.ExportHint}
		}
		r.stacks[k] = s
	}
	return nil
}

// pageableKinds lists the memory kind ids that name pageable memory.
func (r *reader) pageableKinds() []int64 {
	var ids []int64
	for id, k := range r.memKinds {
		if k == vocab.MemPageable {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// readChains reads the stacks of the given ids from CUDA_CALLCHAINS, their
// frames innermost first.
func (r *reader) readChains(ids map[int64]bool) (map[int64]*records.Stack, error) {
	out := make(map[int64]*records.Stack, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	cols, err := r.columns(nsysdb.TableCallchains, nsysdb.ColID, nsysdb.ColSymbol, nsysdb.ColModule, nsysdb.ColStackDepth)
	if err != nil {
		return nil, err
	}
	table := r.tables[nsysdb.TableCallchains]
	list := make([]int64, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	sort.Slice(list, func(i, j int) bool { return list[i] < list[j] })
	rows, err := r.query(`SELECT ` + nsysdb.Cols(nsysdb.ColID, nsysdb.ColStackDepth, nsysdb.ColSymbol, nsysdb.ColModule) + `, ` +
		col(cols, nsysdb.ColUnresolved) + `, ` + col(cols, nsysdb.ColOriginalIP) + ` FROM ` + q(table) +
		` WHERE ` + q(nsysdb.ColID) + ` IN (` + intList(list) + `) ORDER BY ` + q(nsysdb.ColID) + `, ` + q(nsysdb.ColStackDepth))
	if err != nil {
		return nil, r.tableError(table, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id, depth, sym, mod, unresolved, ip int64
		)
		if err := rows.Scan(&id, &depth, &sym, &mod, &unresolved, &ip); err != nil {
			return nil, r.tableError(table, err)
		}
		s := out[id]
		if s == nil {
			s = &records.Stack{ID: id}
			out[id] = s
		}
		if depth != int64(len(s.Frames)) {
			return nil, &inputerr.Error{Path: r.path, Where: fmt.Sprintf("table %s, stack %d", table, id),
				Problem: fmt.Sprintf("frame at depth %d follows %d frames: a stack's depths run 0, 1, 2, ... without a gap", depth, len(s.Frames)),
				Hint:    "the export is damaged or was edited; " + nsysdb.ExportHint}
		}
		f := records.Frame{Unresolved: unresolved != 0, IP: uint64(ip)}
		if f.Symbol, err = r.str(sym, nsysdb.TableCallchains, nsysdb.ColSymbol); err != nil {
			return nil, err
		}
		if f.Module, err = r.str(mod, nsysdb.TableCallchains, nsysdb.ColModule); err != nil {
			return nil, err
		}
		s.Frames = append(s.Frames, f)
	}
	if err := rows.Err(); err != nil {
		return nil, r.tableError(table, err)
	}
	return out, nil
}

// stackOf is the stack read for the call of process pid with correlation
// id corr, nil for none.
func (r *reader) stackOf(pid, corr int64) *records.Stack {
	if r.stacks == nil {
		return nil
	}
	return r.stacks[stackKey{pid, corr}]
}
