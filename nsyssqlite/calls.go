package nsyssqlite

import (
	"database/sql"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
)

// emitRanges hands on the NVTX push/pop ranges in start order, a range
// without an end being still open. The rows are read before names are
// looked up, so that the lookups never wait on the range query.
func (r *reader) emitRanges() error {
	p := r.nvtx
	if r.h.Range == nil || p == nil {
		return nil
	}
	table := r.tables[nsysdb.TableNVTX]
	domains := map[int64]string{}
	if p.domainCreate >= 0 && p.cols[nsysdb.ColDomainID] {
		var err error
		if domains, err = r.readNVTXDomains(table, p); err != nil {
			return err
		}
	}
	shared := map[string]bool{}
	if p.cols[nsysdb.ColDomainID] {
		var err error
		if shared, err = r.sharedRangeNames(table, p); err != nil {
			return err
		}
	}
	rows, err := r.query(`SELECT `+nsysdb.Cols(nsysdb.ColStart, nsysdb.ColEnd)+`, `+p.text+`, `+p.textID+`, `+col(p.cols, nsysdb.ColGlobalTid)+`, `+col(p.cols, nsysdb.ColDomainID)+
		` FROM `+q(table)+` WHERE `+q(nsysdb.ColEventType)+` = ? ORDER BY `+q(nsysdb.ColStart), p.pushPop)
	if err != nil {
		return r.tableError(table, err)
	}
	// Each range is handed on as its row is read, its name looked up on
	// the same connection where it is an id: the rows are not held.
	defer rows.Close()
	for rows.Next() {
		var rg records.Range
		var t nvtxText
		var end sql.NullInt64
		var gtid, dom int64
		if err := rows.Scan(&rg.Start, &end, &t.text, &t.id, &gtid, &dom); err != nil {
			return r.tableError(table, err)
		}
		if end.Valid {
			rg.End = end.Int64
		} else {
			rg.Open = true
		}
		if gtid != 0 {
			rg.PID, rg.TID = r.split(gtid)
		}
		if rg.Name, err = r.name(t); err != nil {
			return err
		}
		rg.Domain = domains[dom]
		if dom != 0 && shared[rg.Name] {
			// Another domain's range of the name (a library's "step"
			// beside the program's) is another region, not more
			// instances of it: it is named with its domain.
			rg.Name = domainRangeName(rg.Name, rg.Domain, dom)
		}
		if err := r.h.Range(&rg); err != nil {
			return r.handled(table, err)
		}
	}
	if err := rows.Err(); err != nil {
		return r.tableError(table, err)
	}
	return nil
}

// nvtxText is an NVTX event's text as the export stores it: inline, or an
// id into the string table.
type nvtxText struct {
	text sql.NullString
	id   sql.NullInt64
}

// name is the text, looked up in the string table where it is an id.
func (r *reader) name(t nvtxText) (string, error) {
	if !t.text.Valid && t.id.Valid {
		return r.str(t.id.Int64, nsysdb.TableNVTX, nsysdb.ColTextID)
	}
	return t.text.String, nil
}

// sharedRangeNames are the names of push/pop ranges that more than one
// NVTX domain holds: a pass over the distinct names and domains alone.
func (r *reader) sharedRangeNames(table string, p *nvtxPlan) (map[string]bool, error) {
	rows, err := r.query(`SELECT DISTINCT `+col(p.cols, nsysdb.ColDomainID)+`, `+p.text+`, `+p.textID+` FROM `+q(table)+` WHERE `+q(nsysdb.ColEventType)+` = ?`, p.pushPop)
	if err != nil {
		return nil, r.tableError(table, err)
	}
	type named struct {
		dom int64
		t   nvtxText
	}
	var ns []named
	for rows.Next() {
		var n named
		if err := rows.Scan(&n.dom, &n.t.text, &n.t.id); err != nil {
			rows.Close()
			return nil, r.tableError(table, err)
		}
		ns = append(ns, n)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, r.tableError(table, err)
	}
	first := map[string]int64{}
	shared := map[string]bool{}
	for _, n := range ns {
		name, err := r.name(n.t)
		if err != nil {
			return nil, err
		}
		if d, ok := first[name]; !ok {
			first[name] = n.dom
		} else if d != n.dom {
			shared[name] = true
		}
	}
	return shared, nil
}

// domainRangeName names a range of a domain other than the default one
// whose name another domain's ranges hold too: "step (NVTX domain lib)",
// by the domain's id where its creation is not in the export.
func domainRangeName(name, domain string, id int64) string {
	if domain == "" {
		domain = strconv.FormatInt(id, 10)
	}
	return name + " (NVTX domain " + domain + ")"
}

// readNVTXDomains names the NVTX domains by id, from their creation events.
func (r *reader) readNVTXDomains(table string, p *nvtxPlan) (map[int64]string, error) {
	rows, err := r.query(`SELECT `+q(nsysdb.ColDomainID)+`, `+p.text+`, `+p.textID+` FROM `+q(table)+` WHERE `+q(nsysdb.ColEventType)+` = ?`, p.domainCreate)
	if err != nil {
		return nil, r.tableError(table, err)
	}
	type dom struct {
		id sql.NullInt64
		t  nvtxText
	}
	var ds []dom
	for rows.Next() {
		var d dom
		if err := rows.Scan(&d.id, &d.t.text, &d.t.id); err != nil {
			rows.Close()
			return nil, r.tableError(table, err)
		}
		ds = append(ds, d)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, r.tableError(table, err)
	}
	domains := map[int64]string{}
	for _, d := range ds {
		if !d.id.Valid {
			continue
		}
		if domains[d.id.Int64], err = r.name(d.t); err != nil {
			return nil, err
		}
	}
	return domains, nil
}

// threadNames maps global thread ids to names, where the export has them;
// read once.
func (r *reader) threadNames() (map[int64]string, error) {
	if r.threads != nil {
		return r.threads, nil
	}
	out := map[int64]string{}
	table := r.tables[nsysdb.TableThreadNames]
	if table == "" {
		r.threads = out
		return out, nil
	}
	cols, err := r.columns(nsysdb.TableThreadNames)
	if err != nil {
		return nil, err
	}
	if !cols[nsysdb.ColNameID] || !cols[nsysdb.ColGlobalTid] {
		r.threads = out
		return out, nil
	}
	rows, err := r.query(`SELECT ` + nsysdb.Cols(nsysdb.ColGlobalTid, nsysdb.ColNameID) + ` FROM ` + q(table) + ` WHERE ` + q(nsysdb.ColGlobalTid) + ` IS NOT NULL AND ` + q(nsysdb.ColNameID) + ` IS NOT NULL`)
	if err != nil {
		return nil, r.tableError(table, err)
	}
	var pairs [][2]int64
	for rows.Next() {
		var p [2]int64
		if err := rows.Scan(&p[0], &p[1]); err != nil {
			rows.Close()
			return nil, r.tableError(table, err)
		}
		pairs = append(pairs, p)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, r.tableError(table, err)
	}
	for _, p := range pairs {
		s, err := r.str(p[1], nsysdb.TableThreadNames, nsysdb.ColNameID)
		if err != nil {
			return nil, err
		}
		out[p[0]] = s
	}
	r.threads = out
	return out, nil
}

// runtimeFilter builds the WHERE conditions of the API-call query: the
// wanted API names and, with records.Selection.ProgramThread, the program's thread.
// none is true when no call can match.
func (r *reader) runtimeFilter(table, gtidCol string) (conds []string, none bool, err error) {
	if len(r.opts.APINames) > 0 {
		ids, err := r.apiNameIDs(r.opts.APINames)
		if err != nil {
			return nil, false, err
		}
		if len(ids) == 0 {
			return nil, true, nil // none of the wanted APIs was ever called
		}
		conds = append(conds, q(nsysdb.ColNameID)+` IN (`+intList(ids)+`)`)
	}
	if r.opts.ProgramThread && r.rcols[nsysdb.ColGlobalTid] {
		gtids, err := r.programThread(table, gtidCol, r.withCallsOnly(conds))
		if err != nil {
			return nil, false, err
		}
		if len(gtids) == 0 {
			return nil, true, nil // no calls at all
		}
		conds = append(conds, gtidCol+` IN (`+intList(gtids)+`)`)
		r.threadOnly = true
		// The thread's correlation ids, one a call: room for the calls
		// counted, made once.
		r.wantCorr.ids = make([]int64, 0, r.callsAhead)
	}
	return conds, false, nil
}

// emitCalls hands on the CUDA API calls, only those named in
// records.Selection.APINames when that is set, and only the program's
// thread's when records.Selection.ProgramThread is set. With
// records.Selection.JoinCalls it keeps the copy calls among them (every
// copy call when the handler wants no calls) for the copies to be joined
// to (joinCopies).
func (r *reader) emitCalls() error {
	if err := r.planJoin(); err != nil {
		return err
	}
	if r.h.Call == nil && !r.joining {
		return nil
	}
	table := r.tables[nsysdb.TableRuntime]
	threads, err := r.threadNames()
	if err != nil {
		return err
	}
	gtidCol := must(r.rcols, nsysdb.ColGlobalTid) // a call without its thread is refused, not put in process 0
	conds, none, err := r.runtimeFilter(table, gtidCol)
	if err != nil || none {
		return err
	}
	if r.h.Sync != nil && r.h.Call != nil && len(conds) == 0 && r.tables[nsysdb.TableSync] != "" {
		// Every call is read: the synchronising ones are kept for the
		// synchronisation records.
		ids, err := r.apiNameIDs(nsysdb.SyncAPIs())
		if err != nil {
			return err
		}
		r.syncAPI, r.syncsRead = map[int64]bool{}, true
		for _, id := range ids {
			r.syncAPI[id] = true
		}
	}
	// Every call row is read where nothing but the rows of call stacks is
	// left out, and every row of the table where it holds none.
	seen := r.seeTable(nsysdb.TableRuntime, len(conds) == 0 && r.h.Call != nil && !r.threadOnly)
	if seen != nil {
		seen.allRows = r.btClass < 0
	}
	conds = r.withCallsOnly(conds)
	if r.h.Call == nil {
		// Only the copy calls, to join the copies to.
		if len(r.copyAPI) == 0 {
			return nil
		}
		conds = append(conds, q(nsysdb.ColNameID)+` IN (`+intList(sortedIDs(r.copyAPI))+`)`)
	}
	if r.h.Call != nil && r.h.CallsAhead != nil && r.threadOnly && r.callsAhead > 0 {
		if err := r.handled(table, r.h.CallsAhead(r.callsAhead)); err != nil {
			return err
		}
	}
	// No ORDER BY: a consumer that needs time order sorts what it keeps,
	// and sorting here would make SQLite sort every matching row first.
	qs := `SELECT ` + nsysdb.Cols(nsysdb.ColStart, nsysdb.ColEnd, nsysdb.ColNameID) + `, ` + col(r.rcols, nsysdb.ColReturnValue) + `, ` +
		col(r.rcols, nsysdb.ColCorrelationID) + `, ` + gtidCol + ` FROM ` + q(table)
	if len(conds) > 0 {
		qs += ` WHERE ` + strings.Join(conds, ` AND `)
	}
	// Calls come in runs of one name and one thread, so the last name and
	// thread are kept beside the maps that cache them.
	names := map[int64]string{} // name id -> name without version
	var (
		a             records.Call
		lastID        = int64(-1)
		lastName      string
		lastCopy      bool
		lastSync      bool
		lastGtid      = int64(-1)
		lastPID, lTID int64
		lastThread    string
	)
	err = r.ints(qs, 6, func(v []int64) error {
		a = records.Call{Start: v[0], End: v[1], Result: v[3], Corr: v[4]}
		nameID, gtid := v[2], v[5]
		if seen != nil {
			seen.row(a.End)
			seen.thread(gtid)
		}
		if nameID != lastID {
			name, ok := names[nameID]
			if !ok {
				s, err := r.str(nameID, nsysdb.TableRuntime, nsysdb.ColNameID)
				if err != nil {
					return err
				}
				name = nsysdb.StripAPIVersion(s)
				names[nameID] = name
			}
			lastID, lastName, lastCopy, lastSync = nameID, name, r.copyAPI[nameID], r.syncAPI[nameID]
		}
		a.Name = lastName
		if gtid != 0 {
			if gtid != lastGtid {
				lastGtid = gtid
				lastPID, lTID = r.split(gtid)
				lastThread = threads[gtid]
			}
			a.PID, a.TID, a.Thread = lastPID, lTID, lastThread
		}
		if r.threadOnly {
			r.wantCorr.add(a.Corr)
			if a.Name == "cudaLaunchKernel" {
				r.launches = true
			}
			r.pid = a.PID
		}
		if lastCopy && r.joining {
			r.index.Add(&a)
		}
		if lastSync {
			r.syncCalls.Add(&a)
		}
		if r.h.Call == nil {
			return nil
		}
		return r.handled(table, r.h.Call(&a))
	})
	if err = r.drained(table, err); err != nil {
		return r.tableError(table, err)
	}
	return nil
}

// programThread picks the program's thread (see records.Selection.ProgramThread) from
// the calls that conds select, counted per thread in one pass, and
// returns its global thread ids (one, unless ids differ only in the bits
// above the process id). The other threads' counts go to Info.OtherThreads.
func (r *reader) programThread(table, gtidCol string, conds []string) ([]int64, error) {
	// The rows' two ids are stepped in batches and counted here: SQLite's
	// GROUP BY sorts every row first, ten times the scan's own cost.
	qs := `SELECT ` + gtidCol + `, ` + q(nsysdb.ColNameID) + ` FROM ` + q(table)
	if len(conds) > 0 {
		qs += ` WHERE ` + strings.Join(conds, ` AND `)
	}
	type group struct{ gtid, nameID int64 }
	n := map[group]int64{}
	last, lastN := group{}, int64(0) // consecutive calls mostly share both
	err := r.ints(qs, 2, func(v []int64) error {
		g := group{v[0], v[1]}
		if g != last {
			if lastN > 0 {
				n[last] += lastN
			}
			last, lastN = g, 0
		}
		lastN++
		return nil
	})
	if err != nil {
		return nil, r.tableError(table, err)
	}
	if lastN > 0 {
		n[last] += lastN
	}
	groups := make([]group, 0, len(n))
	for g := range n {
		groups = append(groups, g)
	}
	// In GROUP BY's order: by thread id, then name id.
	sort.Slice(groups, func(i, j int) bool {
		if groups[i].gtid != groups[j].gtid {
			return groups[i].gtid < groups[j].gtid
		}
		return groups[i].nameID < groups[j].nameID
	})
	at := map[[2]int64]int{}
	var counts []records.ThreadCount
	gtids := map[[2]int64][]int64{}
	for _, g := range groups {
		var pid, tid int64
		if g.gtid != 0 {
			pid, tid = r.split(g.gtid)
		}
		k := [2]int64{pid, tid}
		i, ok := at[k]
		if !ok {
			i = len(counts)
			at[k] = i
			counts = append(counts, records.ThreadCount{PID: pid, TID: tid})
		}
		s, err := r.str(g.nameID, nsysdb.TableRuntime, nsysdb.ColNameID)
		if err != nil {
			return nil, err
		}
		counts[i].Add(nsysdb.StripAPIVersion(s), int(n[g]))
		if ids := gtids[k]; len(ids) == 0 || ids[len(ids)-1] != g.gtid {
			gtids[k] = append(ids, g.gtid)
		}
	}
	if len(counts) == 0 {
		return nil, nil
	}
	records.SortThreads(counts)
	me := counts[0]
	r.callsAhead = me.Calls
	if len(counts) > 1 {
		r.info.OtherThreads = counts[1:]
	}
	return gtids[[2]int64{me.PID, me.TID}], nil
}

// corrFilter returns the SQL condition that keeps the GPU records of a table
// whose correlation ids belong to the calls read, or "" when everything is
// to be read (every thread read, or no correlation ids to go by). Short
// lists go into the SQL; wantsCorr filters longer ones while reading.
func (r *reader) corrFilter(cols map[string]bool) string {
	if !r.threadOnly || !cols[nsysdb.ColCorrelationID] || r.wantCorr.len() > maxSQLList {
		return ""
	}
	if r.wantCorr.len() == 0 {
		return ` WHERE 0`
	}
	return ` WHERE ` + q(nsysdb.ColCorrelationID) + ` IN (` + intList(r.wantCorr.sorted()) + `)`
}

// maxSQLList bounds the ids written into one SQL statement.
const maxSQLList = 100000

// wantsCorr reports whether a GPU record with this correlation id is to be
// kept (see corrFilter).
func (r *reader) wantsCorr(cols map[string]bool, corr int64) bool {
	return !r.threadOnly || !cols[nsysdb.ColCorrelationID] || r.wantCorr.has(corr)
}

// corrList is the correlation ids of the calls read, to keep the GPU
// records of: 8 bytes an id, sorted once asked.
type corrList struct {
	ids     []int64
	inOrder bool
}

func (l *corrList) add(corr int64) {
	if n := len(l.ids); n > 0 && l.ids[n-1] > corr {
		l.inOrder = false
	} else if n == 0 {
		l.inOrder = true
	}
	l.ids = append(l.ids, corr)
}

func (l *corrList) len() int { return len(l.ids) }

// sorted returns the ids in order.
func (l *corrList) sorted() []int64 {
	if !l.inOrder {
		slices.Sort(l.ids)
		l.inOrder = true
	}
	return l.ids
}

func (l *corrList) has(corr int64) bool {
	_, ok := slices.BinarySearch(l.sorted(), corr)
	return ok
}
