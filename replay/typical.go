package replay

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"

	"github.com/nsyscheck/nsyscheck/timeline"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Quantity names one kind of delay the model takes as typical rather than
// as each call's or op's own: the as-captured replay and the what-if both
// use the typical value, so the replay's fit measures what the model
// misses instead of holding by construction.
type Quantity string

// The modelled quantities.
const (
	// QuantityLaunch: an op's start after the start of a launching call
	// that waits for it (a blocking copy, a pageable copy that holds its
	// thread), from the ops that nothing but their launch held back (their
	// stream predecessor, event and copy engine were done before the call
	// began).
	QuantityLaunch Quantity = "launch"
	// QuantitySubmit: an op's start after the end of a launching call that
	// returns without waiting for it (a kernel launch, a pinned async copy,
	// a staged copy): a launch reaches the GPU as its call returns, however
	// long the call took (loading a module on a kernel's first launch
	// takes milliseconds); from the ops nothing else held back.
	QuantitySubmit Quantity = "submit"
	// QuantityQueue: an op's start after its stream predecessor's end, from
	// the ops the predecessor held back.
	QuantityQueue Quantity = "queue"
	// QuantityEvent: an op's start after the end of the work an event it
	// waited for stood for, from the ops that event held back.
	QuantityEvent Quantity = "event"
	// QuantityReturn: a waiting call's end after the end of the work it
	// waited for (negative where the call returns before its copy ends, as
	// a pageable host-to-device copy's call does), from the calls that
	// waited.
	QuantityReturn Quantity = "return"
	// QuantityOwn: a waiting call's time when its work was done before it
	// began, from the calls that found it so.
	QuantityOwn Quantity = "own"
	// QuantityPoll: the start of a polling run's successful query after
	// the end of the work it waited for.
	QuantityPoll Quantity = "poll"
)

// Class is a class of calls or ops: "" in a field matches every value.
type Class struct {
	// API is the launching or waiting call's name.
	API string
	// Op is the op kind (copy, kernel, memset, graph).
	Op string
	// Direction and Memory are a copy's direction and host memory kind.
	Direction vocab.CopyKind
	Memory    vocab.MemKind
	// Wait is a waiting call's wait kind.
	Wait string
	// SizeClass is the awaited copy's size class.
	SizeClass string
}

// classOf describes a class in words, sizes naming its size class.
func classOf(tl *timeline.Timeline, api int32, kind timeline.OpKind, dir timeline.Dir, mem timeline.Mem, wait timeline.WaitKind, size int, sizes Sizes) Class {
	c := Class{API: tl.Name(api)}
	if kind != 0 {
		c.Op = kind.String()
	}
	if dir != timeline.DirNone {
		c.Direction = dir.Kind()
	}
	if mem != timeline.MemNone {
		c.Memory = mem.Kind()
	}
	if wait != 0 {
		c.Wait = wait.String()
	}
	if size != anyClass {
		c.SizeClass = sizes.Name(size)
	}
	return c
}

// Typical is one modelled quantity for one class of calls or ops: the
// mean of the measured delays of its samples, trimmed by TrimShare at each
// end. A class without samples takes the next coarser class that has some
// (any size, then any API, then any copy direction and memory, then for
// ops every op of the quantity); where none has, each call or op keeps its
// own measured delay and the class is not listed.
type Typical struct {
	Quantity Quantity
	Class
	Ns      int64
	Samples int
	// Uses is how many calls or ops of the replay took this value.
	Uses int
}

// anyClass marks a key field that matches every value.
const anyClass = -1

// qcode is a Quantity in one byte, for the classes' keys.
type qcode uint8

const (
	qLaunch qcode = iota
	qSubmit
	qQueue
	qEvent
	qReturn
	qOwn
	qPoll
)

var quantities = [...]Quantity{qLaunch: QuantityLaunch, qSubmit: QuantitySubmit, qQueue: QuantityQueue, qEvent: QuantityEvent,
	qReturn: QuantityReturn, qOwn: QuantityOwn, qPoll: QuantityPoll}

// tkey is one class of a modelled quantity; fields at their "any" value
// (None, 0, anyClass) match everything.
type tkey struct {
	q    qcode
	api  int32
	kind timeline.OpKind
	dir  timeline.Dir
	mem  timeline.Mem
	wait timeline.WaitKind
	size int32
}

// levels returns k and its coarser classes, most specific first: without
// the size class, without the API, without the copy's direction and
// memory, and for an op's quantity every op of it. A call's quantity
// stops at its wait kind: a stream synchronisation's return says nothing
// of a copy's.
func (k tkey) levels() [5]tkey {
	noSize := k
	noSize.size = anyClass
	noAPI := noSize
	noAPI.api = timeline.None
	noCopy := noAPI
	noCopy.dir, noCopy.mem = timeline.DirNone, timeline.MemNone
	all := noCopy
	if k.wait == 0 {
		all = tkey{q: k.q, api: timeline.None, dir: timeline.DirNone, mem: timeline.MemNone, size: anyClass}
	}
	return [5]tkey{k, noSize, noAPI, noCopy, all}
}

// typicals gathers the samples of every class and answers with the
// typical delay of the most specific class that has any. Samples are kept
// once, under their most specific class; a coarser class's value is taken
// over the union of its finer ones.
type typicals struct {
	samples map[tkey]*[]int64
	// lastAdd is the class a sample was last added to: consecutive ops
	// are mostly of one class.
	lastAdd struct {
		k tkey
		v *[]int64
	}
	value map[tkey]int64
	count map[tkey]int
	// asked holds, per class asked for, the class its answer comes from
	// and how often it was asked; last the class last asked for per
	// quantity (consecutive ops are mostly of one class).
	asked map[tkey]*answer
	last  [len(quantities)]struct {
		k tkey
		a *answer
	}
}

type answer struct {
	from  tkey
	value int64
	ok    bool
	uses  int
}

func newTypicals() *typicals {
	return &typicals{samples: map[tkey]*[]int64{}, value: map[tkey]int64{}, count: map[tkey]int{}, asked: map[tkey]*answer{}}
}

// add records one measured delay of class k.
func (t *typicals) add(k tkey, v int64) {
	l := &t.lastAdd
	if l.v == nil || l.k != k {
		s := t.samples[k]
		if s == nil {
			s = new([]int64)
			t.samples[k] = s
		}
		l.k, l.v = k, s
	}
	if len(*l.v) == cap(*l.v) {
		// Doubled, where append grows a large slice by a quarter and
		// copies the samples each time.
		*l.v = slices.Grow(*l.v, max(len(*l.v), 64))
	}
	*l.v = append(*l.v, v)
}

// TrimShare is the share of a class's samples left out at each end before
// its typical delay is taken as their mean: the mean, because delays add
// up along a chain of work (a stream's kernels back to back, a loop's
// synchronisations) and their sum is what a region's time holds; trimmed,
// so that a sample some dependency outside the model held back does not
// move it.
const TrimShare = 0.01

// finish takes the typical delays of every class of the quantities qs,
// from their samples so far, and lets the samples go.
func (t *typicals) finish(qs ...qcode) {
	// Each class's samples are the union of its finer classes' lists,
	// named by their places in lists; a coarser class often holds the very
	// lists of a finer one (one API launches a direction's copies), and
	// the typical delay of one set of lists is taken once for all of them.
	var lists [][]int64
	union := map[tkey][]int32{}
	for k, v := range t.samples {
		if !slices.Contains(qs, k.q) {
			continue
		}
		n := int32(len(lists))
		lists = append(lists, *v)
		lv := k.levels()
		for i, l := range lv {
			if i == 0 || l != lv[i-1] {
				union[l] = append(union[l], n)
			}
		}
	}
	type typical struct {
		value int64
		count int
	}
	bySet := map[string]typical{}
	var scratch []int64
	var set []byte
	for k, parts := range union {
		slices.Sort(parts)
		set = set[:0]
		for _, p := range parts {
			set = binary.LittleEndian.AppendUint32(set, uint32(p))
		}
		ty, ok := bySet[string(set)]
		if !ok {
			scratch = scratch[:0]
			for _, p := range parts {
				scratch = append(scratch, lists[p]...)
			}
			ty = typical{trimmedMean(scratch), len(scratch)}
			bySet[string(set)] = ty
		}
		t.value[k], t.count[k] = ty.value, ty.count
	}
	for k := range t.samples {
		if slices.Contains(qs, k.q) {
			delete(t.samples, k)
		}
	}
	t.lastAdd.v = nil
}

// trimmedMean is the mean of v without its TrimShare lowest and highest
// values: their sum, less the sums of the values cut at each end (each
// kept by a heap of the cut ones, in one pass), over how many are left.
// Where the values' magnitudes sum to 2^53 or more, so that a sum in
// float64 could round, it is taken as before by selection, and v is
// reordered.
func trimmedMean(v []int64) int64 {
	cut := int(float64(len(v)) * TrimShare)
	var sum int64
	var mag uint64
	for _, x := range v {
		sum += x
		if x < 0 {
			mag += uint64(-x)
		} else {
			mag += uint64(x)
		}
		if mag >= 1<<53 {
			return selectedMean(v, cut)
		}
	}
	if cut > 0 {
		sum -= lowestSum(v, cut, false) + lowestSum(v, cut, true)
	}
	return int64(math.Round(float64(sum) / float64(len(v)-2*cut)))
}

// lowestSum is the sum of the n lowest values of v (of the n highest where
// high), kept in a heap whose root is the greatest of them (the high
// values as their complements, ^x, which reverse their order).
func lowestSum(v []int64, n int, high bool) int64 {
	h := make([]int64, 0, n)
	for _, x := range v {
		if high {
			x = ^x
		}
		if len(h) < n {
			h = append(h, x)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if h[p] >= h[i] {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
			continue
		}
		if x >= h[0] {
			continue
		}
		h[0] = x
		for i := 0; ; {
			l, r, m := 2*i+1, 2*i+2, i
			if l < n && h[l] > h[m] {
				m = l
			}
			if r < n && h[r] > h[m] {
				m = r
			}
			if m == i {
				break
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	var sum int64
	for _, x := range h {
		if high {
			x = ^x
		}
		sum += x
	}
	return sum
}

// selectedMean is the mean of v without its cut lowest and highest values,
// found by selection and summed in float64 in the order selection leaves
// them; v is reordered.
func selectedMean(v []int64, cut int) int64 {
	if cut > 0 {
		selectRank(v, cut)
		selectRank(v[cut:], len(v)-2*cut)
	}
	var sum float64
	for _, x := range v[cut : len(v)-cut] {
		sum += float64(x)
	}
	return int64(math.Round(sum / float64(len(v)-2*cut)))
}

// get returns the typical delay for class k, false when no class of it has
// a sample; each answer counts as one use of the class it came from.
func (t *typicals) get(k tkey) (int64, bool) {
	var a *answer
	if l := &t.last[k.q]; l.a != nil && l.k == k {
		a = l.a
	} else if a = t.asked[k]; a != nil {
		l.k, l.a = k, a
	} else {
		a = &answer{}
		for _, l := range k.levels() {
			if v, ok := t.value[l]; ok {
				a.from, a.value, a.ok = l, v, true
				break
			}
		}
		t.asked[k] = a
		t.last[k.q].k, t.last[k.q].a = k, a
	}
	if !a.ok {
		return 0, false
	}
	a.uses++
	return a.value, true
}

// list returns the classes used, by quantity and then class.
func (t *typicals) list(tl *timeline.Timeline, sizes Sizes) []Typical {
	uses := map[tkey]int{}
	for _, a := range t.asked {
		if a.ok && a.uses > 0 {
			uses[a.from] += a.uses
		}
	}
	out := make([]Typical, 0, len(uses))
	keys := make([]tkey, 0, len(uses))
	for k := range uses {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b tkey) int {
		return cmp.Or(cmp.Compare(quantities[a.q], quantities[b.q]), cmp.Compare(tl.Name(a.api), tl.Name(b.api)), cmp.Compare(a.kind, b.kind),
			cmp.Compare(a.dir, b.dir), cmp.Compare(a.mem, b.mem), cmp.Compare(a.wait, b.wait), cmp.Compare(a.size, b.size))
	})
	for _, k := range keys {
		out = append(out, Typical{Quantity: quantities[k.q], Class: classOf(tl, k.api, k.kind, k.dir, k.mem, k.wait, int(k.size), sizes),
			Ns: t.value[k], Samples: t.count[k], Uses: uses[k]})
	}
	return out
}
