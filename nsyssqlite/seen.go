package nsyssqlite

import (
	"database/sql"
	"maps"
	"slices"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// seenTable is what the stream saw of a table whose every row it read (a
// query without a condition, no row left out before it was looked at): the
// row count, the latest end, the distinct devices, the distinct streams
// (each with its context, process and host) and the distinct contexts
// (device, context, process and host) of its
// rows that are no unified-memory migration, and the processes of the
// calls' threads. Once
// the stream has succeeded, the checks over whole tables answer from it
// instead of reading the table again: each such check holds that a set of
// values is listed (the streams, the contexts) or bounded (the trace's
// stop), and the values seen are those of every row the check's query
// reads, or more. Where one value fails, the check's own query runs and
// says where, so that its error is the one it gives alone.
type seenTable struct {
	// rows is how many rows were read; allRows says they are every row of
	// the table (false for the runtime table's calls where the rows of
	// call stacks were left out: its count is then the calls').
	rows    int64
	allRows bool
	maxEnd  int64
	// devices are the distinct devices of every row (the copies' and
	// kernels'), lastDevice the last one added.
	devices    map[int64]struct{}
	lastDevice int64
	// pids are the distinct pids (nsysdb.SplitGlobalID) of the calls'
	// threads, lastGtid the last thread's global id they were added for.
	pids     map[int64]struct{}
	lastGtid int64
	// streams and contexts are the distinct values; lastStream and
	// lastContext the last one added (rows come in runs of one).
	streams     map[streamKey]struct{}
	contexts    map[contextKey]struct{}
	lastStream  int64
	lastContext contextKey
	any         bool // a stream and a context were added
}

// contextKey is a record's device, context and pid (nsysdb.SplitGlobalID
// of its globalPid: the decoding of nsysdb.PIDExpr, which the context
// check's query uses), and its host's hardware and VM ids (the decoding
// of nsysdb.HostExprs).
type contextKey struct{ device, context, pid, hw, vm int64 }

// streamKey is a record's stream with the context and the process and
// host (decoded as in contextKey) it ran for: what TARGET_INFO_CUDA_STREAM
// lists of the stream.
type streamKey struct{ stream, context, pid, hw, vm int64 }

// listKey is one row of a list table's integer columns read as a key
// (listedInts): as many of its values as columns were read, the rest 0.
type listKey [5]int64

// seeTable starts what the stream sees of the logical table, when its
// query reads every row (whole), and returns it; nil where it does not,
// for the table's checks to run their queries.
func (r *reader) seeTable(logical string, whole bool) *seenTable {
	if !whole {
		return nil
	}
	s := &seenTable{allRows: true, streams: map[streamKey]struct{}{}, contexts: map[contextKey]struct{}{}, devices: map[int64]struct{}{}, lastDevice: -1,
		pids: map[int64]struct{}{}, lastGtid: -1}
	if r.seen == nil {
		r.seen = map[string]*seenTable{}
	}
	r.seen[logical] = s
	return s
}

// row notes a row and its end.
func (s *seenTable) row(end int64) {
	s.rows++
	if end > s.maxEnd {
		s.maxEnd = end
	}
}

// thread notes the process of a call's thread, by its global id.
func (s *seenTable) thread(gtid int64) {
	if gtid != s.lastGtid || len(s.pids) == 0 {
		s.lastGtid = gtid
		pid, _ := nsysdb.SplitGlobalID(gtid)
		s.pids[pid] = struct{}{}
	}
}

// callPIDs is Info.CallPIDs: the pids of every call's thread, where the
// stream read every row of the runtime table.
func (r *reader) callPIDs() []int64 {
	s := r.seen[nsysdb.TableRuntime]
	if s == nil || !s.allRows {
		return nil
	}
	return slices.Sorted(maps.Keys(s.pids))
}

// device notes a row's device.
func (s *seenTable) device(d int64) {
	if d != s.lastDevice || len(s.devices) == 0 {
		s.lastDevice = d
		s.devices[d] = struct{}{}
	}
}

// work notes the stream and the context of a row that is no
// unified-memory migration; gpid is its globalPid (0 for none).
func (s *seenTable) work(stream, device, context, gpid int64) {
	pid, _ := nsysdb.SplitGlobalID(gpid)
	hw, vm := nsysdb.HostIDs(gpid)
	k := contextKey{device, context, pid, hw, vm}
	if s.any && stream == s.lastStream && k == s.lastContext {
		return
	}
	s.any, s.lastStream, s.lastContext = true, stream, k
	s.streams[streamKey{stream, context, pid, hw, vm}] = struct{}{}
	s.contexts[k] = struct{}{}
}

// seenTables is what the stream saw of the tables it read whole, for
// checks that run after it succeeded; nil for checks that run beside it or
// after a stream that failed, which read every table themselves.
func (r *reader) seenTables(after bool) map[string]*seenTable {
	if !after || !r.streamed {
		return nil
	}
	return r.seen
}

// listedInts reads the distinct non-NULL integers of one or more columns
// of a list table (TARGET_INFO_CUDA_STREAM, TARGET_INFO_CUDA_CONTEXT_INFO)
// as keys; ok false where a value is no integer, for the check's own
// query to compare as SQLite does.
func listedInts(queryRows func(string, ...any) (*sql.Rows, error), table string, cols ...string) (keys map[listKey]struct{}, ok bool, err error) {
	sel, where := "", ""
	for i, c := range cols {
		if i > 0 {
			sel += ", "
			where += " AND "
		}
		sel += q(c)
		where += q(c) + " IS NOT NULL"
	}
	rows, err := queryRows(`SELECT DISTINCT ` + sel + ` FROM ` + q(table) + ` WHERE ` + where)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	keys = map[listKey]struct{}{}
	var k listKey
	dest := make([]any, len(cols))
	for i := range cols {
		dest[i] = &k[i]
	}
	for rows.Next() {
		if rows.Scan(dest...) != nil {
			return nil, false, nil
		}
		keys[k] = struct{}{}
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	return keys, true, nil
}

// listedOnce is a list table's keys (listedInts), read at the first
// table seen whole that is held to them.
type listedOnce struct {
	keys     map[listKey]struct{}
	read, ok bool
}

// get reads the list's keys of cols in table, the first time it is asked.
func (l *listedOnce) get(tc tableChecks, table string, cols ...string) (map[listKey]struct{}, bool, error) {
	if !l.read {
		var err error
		if l.keys, l.ok, err = listedInts(tc.queryRows, table, cols...); err != nil {
			return nil, false, err
		}
		l.read = true
	}
	return l.keys, l.ok, nil
}

// streamsIn says every stream seen but NoStream is in listed (keys of
// the stream id, then its context where byContext, its process where
// byProcess and its host where byHost, in that order: listedInts).
func (s *seenTable) streamsIn(listed map[listKey]struct{}, byContext, byProcess, byHost bool) bool {
	for k := range s.streams {
		if k.stream == nsysdb.NoStream {
			continue
		}
		key, n := listKey{k.stream}, 1
		for _, part := range []struct {
			on bool
			v  []int64
		}{{byContext, []int64{k.context}}, {byProcess, []int64{k.pid}}, {byHost, []int64{k.hw, k.vm}}} {
			if part.on {
				n += copy(key[n:], part.v)
			}
		}
		if _, ok := listed[key]; !ok {
			return false
		}
	}
	return true
}

// contextsIn says every (device, context) seen, with its process where
// byProcess and its host too where byHost, is in listed (keys of those
// columns, listedInts).
func (s *seenTable) contextsIn(listed map[listKey]struct{}, byProcess, byHost bool) bool {
	for k := range s.contexts {
		key := listKey{k.device, k.context}
		if byProcess {
			key[2] = k.pid
		}
		if byHost {
			key[3], key[4] = k.hw, k.vm
		}
		if _, ok := listed[key]; !ok {
			return false
		}
	}
	return true
}
