package records

import (
	"cmp"
	"slices"
	"sort"

	"github.com/nsyscheck/nsyscheck/internal/chunked"
)

// CallIndex keeps the copy calls a reader has read, compactly, so that the
// copies it reads after them come with their calls (Selection.JoinCalls),
// found by process and correlation id: each call in 48 bytes, its API and
// thread interned. A reader adds the calls in its input's order and looks
// each copy up once they are all in; copies that come in their calls'
// order are found by a cursor, any other order by binary search.
type CallIndex struct {
	calls []indexedCall
	// added holds the calls added since calls was last ordered, in chunks,
	// so that the hundreds of thousands of a large capture are moved once,
	// into calls, and not at each growth of a slice. Calls that came in
	// (pid, corr) order are not moved at all: they stay in their chunks, as
	// kept (inChunks), where they are found in place.
	added   chunked.List[indexedCall]
	kept    chunked.List[indexedCall]
	sorted  bool // calls are in (pid, corr) order
	checked bool // sorted is known
	names   []string
	nameAt  map[string]int32
	threads []indexedThread
	// last is the index of the last name and thread added; cursor the
	// call found last; call is the Call handed out, reused.
	lastName, lastThread int32
	cursor               int
	call                 Call
	// pidList is the processes of the calls, in order, once sorted.
	pidList []int64
}

type indexedCall struct {
	corr, start, end, result int64
	thread, name             int32
	seq                      int32 // the order it was added in
}

type indexedThread struct {
	pid, tid int64
	name     string
}

// Len is the number of calls added.
func (x *CallIndex) Len() int { return x.ordered() + x.added.Len() }

// ordered is the number of calls ordered: in calls, or in kept's chunks.
func (x *CallIndex) ordered() int { return len(x.calls) + x.kept.Len() }

// inChunks reports whether the ordered calls stayed in kept's chunks.
func (x *CallIndex) inChunks() bool { return x.kept.Len() > 0 }

// get is ordered call i, in place.
func (x *CallIndex) get(i int) *indexedCall {
	if x.inChunks() {
		return x.kept.Ptr(i)
	}
	return &x.calls[i]
}

// Add keeps call c.
func (x *CallIndex) Add(c *Call) {
	if x.nameAt == nil {
		x.nameAt = map[string]int32{}
		x.lastName, x.lastThread = -1, -1
	}
	name := x.lastName
	if name < 0 || x.names[name] != c.Name {
		var ok bool
		if name, ok = x.nameAt[c.Name]; !ok {
			name = int32(len(x.names))
			x.names = append(x.names, c.Name)
			x.nameAt[c.Name] = name
		}
		x.lastName = name
	}
	th := x.lastThread
	if t := (indexedThread{c.PID, c.TID, c.Thread}); th < 0 || x.threads[th] != t {
		th = -1
		for i := len(x.threads) - 1; i >= 0; i-- {
			if x.threads[i] == t {
				th = int32(i)
				break
			}
		}
		if th < 0 {
			th = int32(len(x.threads))
			x.threads = append(x.threads, t)
		}
		x.lastThread = th
	}
	x.added.Add(indexedCall{corr: c.Corr, start: c.Start, end: c.End, result: c.Result, thread: th, name: name,
		seq: int32(x.Len())})
	x.checked = false
}

func (x *CallIndex) pid(i int) int64 { return x.threads[x.get(i).thread].pid }

// before reports whether call a goes before call b: by process, then
// correlation id.
func (x *CallIndex) before(a, b *indexedCall) bool {
	p, q := x.threads[a.thread].pid, x.threads[b.thread].pid
	return p < q || p == q && a.corr < b.corr
}

// inOrder reports whether the calls of l are in (pid, corr) order.
func (x *CallIndex) inOrder(l *chunked.List[indexedCall]) bool {
	var last *indexedCall
	for _, chunk := range l.Chunks() {
		for i := range chunk {
			if last != nil && x.before(&chunk[i], last) {
				return false
			}
			last = &chunk[i]
		}
	}
	return true
}

// order sorts the calls by process and correlation id, stably, unless they
// came so: then the first calls ordered stay in their chunks.
func (x *CallIndex) order() {
	if x.checked {
		return
	}
	x.checked, x.sorted = true, true
	if x.ordered() == 0 && x.inOrder(&x.added) {
		x.kept, x.added = x.added, chunked.List[indexedCall]{}
	} else {
		x.calls = x.kept.AppendTo(x.calls) // empties kept
		x.calls = x.added.AppendTo(x.calls)
		for i := 1; i < len(x.calls); i++ {
			if x.before(&x.calls[i], &x.calls[i-1]) {
				x.sorted = false
				break
			}
		}
	}
	if !x.sorted {
		slices.SortStableFunc(x.calls, func(a, b indexedCall) int {
			return cmp.Or(cmp.Compare(x.threads[a.thread].pid, x.threads[b.thread].pid), cmp.Compare(a.corr, b.corr))
		})
		x.sorted = true
	}
	x.cursor = 0
	x.pidList = x.pidList[:0]
	for _, t := range x.threads {
		x.pidList = append(x.pidList, t.pid)
	}
	sort.Slice(x.pidList, func(i, j int) bool { return x.pidList[i] < x.pidList[j] })
	x.pidList = slices.Compact(x.pidList)
}

// Lookup returns the call of process pid with correlation id corr (the
// first added of two such), nil when none was added. The Call is the
// index's to reuse: it holds until the next Lookup or Each.
func (x *CallIndex) Lookup(pid, corr int64) *Call {
	if i, n := x.find(pid, corr); n > 0 {
		return x.at(i)
	}
	return nil
}

// Each hands f every call with correlation id corr, in the order they were
// added, of process pid, or of every process when anyPID (for copies whose
// process the input does not tell), and returns how many it handed; an
// error of f stops it. The Call is the index's to reuse.
func (x *CallIndex) Each(pid, corr int64, anyPID bool, f func(*Call) error) (int, error) {
	pids := []int64{pid}
	if anyPID {
		pids = x.pids()
	}
	n := 0
	for _, p := range pids {
		i, k := x.find(p, corr)
		for ; k > 0; i, k = i+1, k-1 {
			n++
			if err := f(x.at(i)); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// First returns the call with correlation id corr of any process that was
// added first, nil when none was: for a report whose copies tell no
// process, the first call of the trace they can belong to.
func (x *CallIndex) First(corr int64) *Call {
	best := -1
	for _, p := range x.pids() {
		if i, n := x.find(p, corr); n > 0 && (best < 0 || x.get(i).seq < x.get(best).seq) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	return x.at(best)
}

// pids lists the processes of the calls added, in order.
func (x *CallIndex) pids() []int64 {
	x.order()
	return x.pidList
}

// find returns the first of the calls of process pid with correlation id
// corr, and how many there are.
func (x *CallIndex) find(pid, corr int64) (first, n int) {
	if x.Len() == 0 {
		return 0, 0
	}
	x.order()
	all := x.ordered()
	match := func(i int) bool { return i < all && x.pid(i) == pid && x.get(i).corr == corr }
	i := -1
	for _, k := range [...]int{x.cursor, x.cursor + 1} {
		if match(k) && (k == 0 || !match(k-1)) {
			i = k
			break
		}
	}
	if i < 0 {
		k := sort.Search(all, func(k int) bool {
			p := x.pid(k)
			return p > pid || p == pid && x.get(k).corr >= corr
		})
		if !match(k) {
			return 0, 0
		}
		i = k
	}
	x.cursor = i
	for n = 1; match(i + n); n++ {
	}
	return i, n
}

// at is call i as a Call, reused.
func (x *CallIndex) at(i int) *Call {
	c := x.get(i)
	t := &x.threads[c.thread]
	x.call = Call{Name: x.names[c.name], Start: c.start, End: c.end, Result: c.result, Corr: c.corr, PID: t.pid, TID: t.tid, Thread: t.name}
	return &x.call
}
