package timeline

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/nsyscheck/nsyscheck/internal/chunked"
	"github.com/nsyscheck/nsyscheck/internal/strcache"
	"github.com/nsyscheck/nsyscheck/records"
)

// CheckEvery is how many records the builder, and the replay's simulation,
// take between two looks at their context.
const CheckEvery = 1 << 12

// Options tune what the builder infers.
type Options struct {
	// NoHandoffs turns off the inference of CPU hand-offs between the
	// threads of a process (Handoff): each thread then keeps its own
	// measured time between calls whatever other threads do.
	NoHandoffs bool
}

// callColumns are the calls as they come, a chunked list per column of
// Calls (a large capture's are not moved as they grow), put in order into
// the Timeline's by Finish.
type callColumns struct {
	Start, End, Corr     chunked.List[int64]
	Name, Thread, Result chunked.List[int32]
}

// opColumns are the ops as they come, as callColumns are the calls.
type opColumns struct {
	Kind                    chunked.List[OpKind]
	Start, End, Bytes, Corr chunked.List[int64]
	Stream, Name            chunked.List[int32]
	Dir                     chunked.List[Dir]
	Src, Dst                chunked.List[Mem]
}

// Builder keeps the records a reader hands it and builds the Timeline.
// Use Handler to get its records.Handler, then Finish.
type Builder struct {
	ctx  context.Context
	opts Options
	seen int

	names   []string
	nameIdx map[string]int32

	threads   []Thread
	threadIdx map[[2]int64]int32
	streams   []Stream
	streamIdx map[[3]int64]int32
	// listed holds the streams the input lists, by (pid, stream id), with
	// their context and kind (records.Stream).
	listed map[[2]int64]listedStream
	// listedPIDs are the processes whose streams the input lists.
	listedPIDs map[int64]bool

	calls   callColumns
	ops     opColumns
	syncs   []records.Sync
	events  []records.EventRecord
	ranges  []rawRange
	gaps    []records.Gap
	assumed assumptions

	// The names interned lately, found without hashing, and the last
	// thread and stream looked up, with their indexes: records come in
	// runs of one thread and stream.
	recentNames strcache.Cache[int32]
	lastThread  int32
	lastStream  struct {
		key [3]int64
		at  int32
	}
}

// listedStream is one stream as the input lists it; twice with another
// context or kind, its kind is unknown.
type listedStream struct {
	context int64
	kind    records.StreamKind
}

type rawRange struct {
	name, thread int32
	start, end   int64
}

// NewBuilder returns a builder that checks ctx every CheckEvery records.
func NewBuilder(ctx context.Context, opts Options) *Builder {
	return &Builder{ctx: ctx, opts: opts, nameIdx: map[string]int32{}, threadIdx: map[[2]int64]int32{},
		streamIdx: map[[3]int64]int32{}}
}

// Handler is the records.Handler that feeds the builder: calls, ops,
// syncs, event records, ranges, graph launches and gaps.
func (b *Builder) Handler() records.Handler {
	return records.Handler{
		Gap:    b.gap,
		Range:  b.rng,
		Call:   b.call,
		Op:     b.op,
		Sync:   b.sync,
		Event:  b.event,
		Graph:  b.graph,
		Stream: b.listStream,
	}
}

func (b *Builder) tick() error {
	b.seen++
	if b.seen%CheckEvery == 0 {
		if err := b.ctx.Err(); err != nil {
			return fmt.Errorf("building the timeline after %d records: %w", b.seen, err)
		}
	}
	return nil
}

func (b *Builder) intern(s string) int32 {
	if i, ok := b.recentNames.Get(s); ok {
		return i
	}
	i, ok := b.nameIdx[s]
	if !ok {
		i = int32(len(b.names))
		b.names = append(b.names, s)
		b.nameIdx[s] = i
	}
	b.recentNames.Put(s, i)
	return i
}

// scannedThreads is how many threads thread looks through before it asks
// the map: a program's threads often take turns (a hand-off from one to
// the next), and a few are found sooner one after the other than hashed.
const scannedThreads = 64

func (b *Builder) thread(pid, tid int64, name string) int32 {
	if l := b.lastThread; int(l) < len(b.threads) && b.threads[l].PID == pid && b.threads[l].TID == tid {
		b.nameThread(l, name)
		return l
	}
	if len(b.threads) <= scannedThreads {
		for i := range b.threads {
			if t := &b.threads[i]; t.PID == pid && t.TID == tid {
				b.lastThread = int32(i)
				b.nameThread(int32(i), name)
				return int32(i)
			}
		}
	}
	i := b.threadAt(pid, tid, name)
	b.lastThread = i
	return i
}

// nameThread names thread i name where it has no name yet.
func (b *Builder) nameThread(i int32, name string) {
	if name != "" && b.threads[i].Name == None {
		b.threads[i].Name = b.intern(name)
	}
}

func (b *Builder) threadAt(pid, tid int64, name string) int32 {
	k := [2]int64{pid, tid}
	if i, ok := b.threadIdx[k]; ok {
		b.nameThread(i, name)
		return i
	}
	i := int32(len(b.threads))
	t := Thread{PID: pid, TID: tid, Name: None}
	if name != "" {
		t.Name = b.intern(name)
	}
	b.threads = append(b.threads, t)
	b.threadIdx[k] = i
	return i
}

func (b *Builder) stream(pid, dev, id int64) int32 {
	k := [3]int64{pid, dev, id}
	if len(b.streams) > 0 && b.lastStream.key == k {
		return b.lastStream.at
	}
	i, ok := b.streamIdx[k]
	if !ok {
		i = int32(len(b.streams))
		b.streams = append(b.streams, Stream{PID: pid, Device: dev, ID: id})
		b.streamIdx[k] = i
	}
	b.lastStream.key, b.lastStream.at = k, i
	return i
}

func (b *Builder) gap(g records.Gap) error {
	b.gaps = append(b.gaps, g)
	return nil
}

func (b *Builder) rng(r *records.Range) error {
	if err := b.tick(); err != nil {
		return err
	}
	th := b.thread(r.PID, r.TID, "")
	if r.Open {
		b.assumed.add(AssumeOpenRange, r.PID, r.Name, records.NoID, records.NoID, 0)
		return nil
	}
	b.ranges = append(b.ranges, rawRange{name: b.intern(r.Name), thread: th, start: r.Start, end: r.End})
	return nil
}

func (b *Builder) call(c *records.Call) error {
	if err := b.tick(); err != nil {
		return err
	}
	if c.End < c.Start {
		return fmt.Errorf("building the timeline: call %s (correlation id %d, pid %d) ends at %d before it starts at %d",
			c.Name, c.Corr, c.PID, c.End, c.Start)
	}
	cs := &b.calls
	cs.Start.Add(c.Start)
	cs.End.Add(c.End)
	cs.Corr.Add(c.Corr)
	cs.Name.Add(b.intern(c.Name))
	cs.Thread.Add(b.thread(c.PID, c.TID, c.Thread))
	cs.Result.Add(int32(max(min(c.Result, 1<<31-1), -1<<31)))
	return nil
}

func (b *Builder) addOp(kind OpKind, start, end, corr, pid, dev, stream int64) error {
	if err := b.tick(); err != nil {
		return err
	}
	if end < start {
		return fmt.Errorf("building the timeline: %s op (correlation id %d, pid %d, stream %d) ends at %d before it starts at %d",
			kind, corr, pid, stream, end, start)
	}
	o := &b.ops
	o.Kind.Add(kind)
	o.Start.Add(start)
	o.End.Add(end)
	o.Corr.Add(corr)
	o.Stream.Add(b.stream(pid, dev, stream))
	return nil
}

func (b *Builder) op(r *records.Op) error {
	kind := OpKind(r.Kind)
	if r.Kind < records.OpCopy || r.Kind > records.OpMemset {
		return fmt.Errorf("building the timeline: op with correlation id %d (pid %d, stream %d) has unknown kind %d",
			r.Corr, r.PID, r.Stream, r.Kind)
	}
	corr, pid := r.Corr, r.PID
	if r.Call != nil {
		corr, pid = r.Call.Corr, r.Call.PID
	}
	if err := b.addOp(kind, r.Start, r.End, corr, pid, r.Device, r.Stream); err != nil {
		return err
	}
	o := &b.ops
	o.Bytes.Add(r.Bytes)
	name := None
	if kind == OpKernel && r.Name != "" {
		name = b.intern(r.Name)
	}
	o.Name.Add(name)
	dir, src, dst := DirNone, MemNone, MemNone
	if kind == OpCopy {
		dir, src, dst = DirOf(r.Copy), MemOf(r.Src), MemOf(r.Dst)
		if dir == DirNone {
			dir = DirOther
		}
	}
	o.Dir.Add(dir)
	o.Src.Add(src)
	o.Dst.Add(dst)
	return nil
}

func (b *Builder) graph(g *records.GraphLaunch) error {
	if err := b.addOp(OpGraph, g.Start, g.End, g.Corr, g.PID, g.Device, g.Stream); err != nil {
		return err
	}
	o := &b.ops
	o.Bytes.Add(0)
	o.Name.Add(None)
	o.Dir.Add(DirNone)
	o.Src.Add(MemNone)
	o.Dst.Add(MemNone)
	b.assumed.add(AssumeGraphWhole, g.PID, "", records.NoID, g.Stream, g.Corr)
	return nil
}

func (b *Builder) sync(s *records.Sync) error {
	if err := b.tick(); err != nil {
		return err
	}
	b.syncs = append(b.syncs, *s)
	return nil
}

func (b *Builder) listStream(s *records.Stream) error {
	if b.listed == nil {
		b.listed, b.listedPIDs = map[[2]int64]listedStream{}, map[int64]bool{}
	}
	b.listedPIDs[s.PID] = true
	k := [2]int64{s.PID, s.ID}
	l, seen := b.listed[k]
	if seen && (l.context != s.Context || l.kind != s.Kind) {
		l.kind = records.StreamKindUnknown
	} else {
		l = listedStream{context: s.Context, kind: s.Kind}
	}
	b.listed[k] = l
	return nil
}

func (b *Builder) event(e *records.EventRecord) error {
	if err := b.tick(); err != nil {
		return err
	}
	b.events = append(b.events, *e)
	return nil
}

// Finish sorts what the builder kept and resolves the dependencies. The
// builder is spent afterwards.
func (b *Builder) Finish() (*Timeline, error) {
	if err := b.ctx.Err(); err != nil {
		return nil, fmt.Errorf("building the timeline: %w", err)
	}
	t := &Timeline{Names: b.names, Gaps: b.gaps}
	b.sortThreads(t)
	b.splitRangeThreads(t)
	// The hand-offs read the calls and their threads alone, which are
	// sorted now and not changed again: they are found beside the
	// streams' sort and the resolver, into assumptions of their own.
	type found struct {
		handoffs []Handoff
		assumed  assumptions
		err      error
	}
	var handed chan found
	if !b.opts.NoHandoffs {
		handed = make(chan found, 1)
		go func() {
			var f found
			f.handoffs, f.err = handoffs(b.ctx, t, &f.assumed)
			handed <- f
		}()
	}
	b.sortStreams(t)
	err := b.ctx.Err()
	if err != nil {
		err = fmt.Errorf("building the timeline: %w", err)
	} else {
		err = newResolver(t, b).run(b.ctx)
	}
	if handed != nil {
		f := <-handed
		if err == nil {
			err = f.err
		}
		t.Handoffs = f.handoffs
		b.assumed.merge(&f.assumed)
	}
	if err != nil {
		return nil, err
	}
	t.Assumptions = b.assumed.sorted()
	slices.Sort(t.Unresolved)
	t.Unresolved = slices.Compact(t.Unresolved)
	slices.Sort(t.Unnamed)
	t.Unnamed = slices.Compact(t.Unnamed)
	slices.Sort(t.Unmatched)
	t.Unmatched = slices.Compact(t.Unmatched)
	t.EventRecords = len(b.events)
	// What the timeline holds sorted is not kept twice.
	b.syncs, b.events, b.ranges = nil, nil, nil
	return t, nil
}

// sortThreads orders threads by (pid, tid) and calls by (thread, start,
// end), so each thread's calls are one run in start order.
func (b *Builder) sortThreads(t *Timeline) {
	var newIdx []int32
	t.Threads, newIdx = renumber(b.threads, func(a, c Thread) int {
		return cmp.Or(cmp.Compare(a.PID, c.PID), cmp.Compare(a.TID, c.TID))
	})
	for i := range b.ranges {
		b.ranges[i].thread = newIdx[b.ranges[i].thread]
	}
	// Each column is let go as soon as it is gathered, so that the calls
	// are held about once, not twice.
	cs := &b.calls
	var perm []int32
	perm, t.Calls.Thread, t.Calls.Start, t.Calls.End = inOrderOf(&cs.Thread, &cs.Start, &cs.End, newIdx)
	t.Calls.Corr = gatherList(&cs.Corr, perm)
	t.Calls.Name = gatherList(&cs.Name, perm)
	t.Calls.Result = gatherList(&cs.Result, perm)
	// A thread with ranges and no calls keeps the empty run [0, 0).
	for i, th := range t.Calls.Thread {
		if t.Threads[th].Last == 0 {
			t.Threads[th].First = int32(i)
		}
		t.Threads[th].Last = int32(i + 1)
	}
}

// sortStreams orders streams by (pid, device, id) and ops by (stream,
// start, end).
func (b *Builder) sortStreams(t *Timeline) {
	var newIdx []int32
	t.Streams, newIdx = renumber(b.streams, func(a, c Stream) int {
		return cmp.Or(cmp.Compare(a.PID, c.PID), cmp.Compare(a.Device, c.Device), cmp.Compare(a.ID, c.ID))
	})
	o := &b.ops
	var perm []int32
	perm, t.Ops.Stream, t.Ops.Start, t.Ops.End = inOrderOf(&o.Stream, &o.Start, &o.End, newIdx)
	t.Ops.Kind = gatherList(&o.Kind, perm)
	t.Ops.Bytes = gatherList(&o.Bytes, perm)
	t.Ops.Corr = gatherList(&o.Corr, perm)
	t.Ops.Name = gatherList(&o.Name, perm)
	t.Ops.Dir = gatherList(&o.Dir, perm)
	t.Ops.Src = gatherList(&o.Src, perm)
	t.Ops.Dst = gatherList(&o.Dst, perm)
	for i := range t.Streams {
		if l, ok := b.listed[[2]int64{t.Streams[i].PID, t.Streams[i].ID}]; ok {
			t.Streams[i].Context, t.Streams[i].Kind = l.context, l.kind
		}
	}
	for i, s := range t.Ops.Stream {
		if t.Streams[s].Last == 0 {
			t.Streams[s].First = int32(i)
		}
		t.Streams[s].Last = int32(i + 1)
	}
}

// renumber sorts items by cmp and returns them with, for each old index,
// its new one.
func renumber[T any](items []T, cmp func(a, b T) int) (sorted []T, newIdx []int32) {
	perm := identity(len(items))
	slices.SortFunc(perm, func(x, y int32) int { return cmp(items[x], items[y]) })
	newIdx = make([]int32, len(perm))
	for n, o := range perm {
		newIdx[o] = int32(n)
	}
	return gather(items, perm), newIdx
}

// inOrderOf takes the owner, start and end columns out of their lists, the
// owners renumbered by newIdx, and returns the permutation that puts them
// in (owner, start, end) order, with the three in that order.
func inOrderOf(owner *chunked.List[int32], start, end *chunked.List[int64], newIdx []int32) (perm, owners []int32, starts, ends []int64) {
	o, s, e := owner.Slice(), start.Slice(), end.Slice()
	for i := range o {
		o[i] = newIdx[o[i]]
	}
	perm = inOrder(o, s, e)
	if len(perm) > 0 && isIdentity(perm) {
		return perm, o, s, e
	}
	starts, s = gather(s, perm), nil
	ends, e = gather(e, perm), nil
	return perm, gather(o, perm), starts, ends
}

// inOrder returns the indexes of records in (owner, start, end) order,
// ties by index. The records are put by owner first (a counting sort,
// which keeps each owner's in index order), then each owner's are sorted
// by (start, end) unless they are in that order already, as a thread's
// calls mostly come: the order of one sort of all by (owner, start, end,
// index), at a pass over them where it holds. An owner's records that
// come in a few runs each in order, as a stream's copies, then its
// kernels, then its memsets do (one table after another), are merged run
// by run (mergeRuns), at a pass over them a merge.
func inOrder(owner []int32, start, end []int64) []int32 {
	owners := int32(0)
	for _, o := range owner {
		owners = max(owners, o+1)
	}
	at := make([]int32, owners+1) // where each owner's records begin
	for _, o := range owner {
		at[o+1]++
	}
	for o := range owners {
		at[o+1] += at[o]
	}
	perm := make([]int32, len(owner))
	next := slices.Clone(at[:owners])
	for i, o := range owner {
		perm[next[o]] = int32(i)
		next[o]++
	}
	var runs []int
	var buf []int32
	for o := range owners {
		run := perm[at[o]:at[o+1]]
		runs = runs[:0]
		for i := 1; i < len(run) && len(runs) <= maxMergedRuns; i++ {
			if x, y := run[i-1], run[i]; start[y] < start[x] || start[y] == start[x] && end[y] < end[x] {
				runs = append(runs, i)
			}
		}
		switch {
		case len(runs) == 0:
		case len(runs) <= maxMergedRuns:
			buf = mergeOrdered(run, append(runs, len(run)), start, end, buf)
		default:
			slices.SortFunc(run, func(x, y int32) int {
				return cmp.Or(cmp.Compare(start[x], start[y]), cmp.Compare(end[x], end[y]), cmp.Compare(x, y))
			})
		}
	}
	return perm
}

// maxMergedRuns is how many breaks of order an owner's records may have
// for inOrder to merge their runs rather than sort them.
const maxMergedRuns = 16

// mergeOrdered puts run, whose records are in (start, end) order between
// the breaks at ends (each run's end, the last len(run)) and in index
// order throughout, in (start, end, index) order: each run is merged into
// the runs before it, the earlier one first on a tie, as its indexes are
// the lower. buf is scratch space, returned for the next call.
func mergeOrdered(run []int32, ends []int, start, end []int64, buf []int32) []int32 {
	before := func(x, y int32) bool { // x goes before y, where x's run is the earlier
		return start[x] < start[y] || start[x] == start[y] && end[x] <= end[y]
	}
	lo := ends[0]
	for _, hi := range ends[1:] {
		buf = append(buf[:0], run[:lo]...)
		left, right, k := buf, run[lo:hi], 0
		i, j := 0, 0
		for i < len(left) && j < len(right) {
			if before(left[i], right[j]) {
				run[k] = left[i]
				i++
			} else {
				run[k] = right[j]
				j++
			}
			k++
		}
		k += copy(run[k:], left[i:])
		copy(run[k:], right[j:]) // in place already: k == lo+j
		lo = hi
	}
	return buf
}

func identity(n int) []int32 {
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	return perm
}

// gatherList returns the values of l reordered by perm, and empties l.
// Where perm is the identity, the values are l's in their order.
func gatherList[T any](l *chunked.List[T], perm []int32) []T {
	if len(perm) > 0 && l.Len() == len(perm) && isIdentity(perm) {
		return l.Slice()
	}
	out := make([]T, len(perm))
	for i, p := range perm {
		out[i] = l.At(int(p))
	}
	*l = chunked.List[T]{}
	return out
}

// isIdentity reports whether perm leaves every index where it is: records
// that came in their order, as a single thread's calls mostly do.
func isIdentity(perm []int32) bool {
	for i, p := range perm {
		if p != int32(i) {
			return false
		}
	}
	return true
}

// gather returns s reordered by perm.
func gather[T any](s []T, perm []int32) []T {
	out := make([]T, len(perm))
	for i, p := range perm {
		out[i] = s[p]
	}
	return out
}
