package replay

import (
	"cmp"
	"slices"

	"github.com/nsyscheck/nsyscheck/timeline"
)

// Misfit is one class of calls or ops that the capture shows later than
// the model allows, each taken alone: an op's measured start against the
// latest of its launch, stream predecessor and events (measured) plus the
// model's typical delays, a waiting call's measured end against its
// awaited work's measured end plus the typical return. Late time the
// model cannot explain is a dependency or a cost it lacks; a class early
// by as much is one whose typical delay its own members do not share.
type Misfit struct {
	// What is "op" or "call".
	What string
	// Class is the ops' kind, API and a copy's direction and memory, or
	// the calls' API and wait kind.
	Class
	// Count is how many calls or ops the class holds; Late how many of
	// them came later than the model allows by more than MisfitNs.
	Count int
	Late  int
	// LateNs and EarlyNs sum the time the members came later and earlier
	// than the model allows.
	LateNs  int64
	EarlyNs int64
	// WorstNs is the latest member's lateness, WorstCorr its correlation
	// id.
	WorstNs   int64
	WorstCorr int64
}

// MisfitNs is the lateness below which a call or op is not counted late;
// MaxMisfits is how many classes a Result lists.
const (
	MisfitNs   = 10_000
	MaxMisfits = 8
)

type misfitKey struct {
	call bool
	api  int32
	kind timeline.OpKind
	dir  timeline.Dir
	mem  timeline.Mem
	wait timeline.WaitKind
}

// misfits measures each call and op against the model, one step at a
// time (a copy also after the copy engine it waited for in the capture), and returns the classes by the late time they hold, latest first.
func (m *model) misfits() []Misfit {
	tl := m.tl
	o := &tl.Ops
	cs := &tl.Calls
	by := map[misfitKey]*Misfit{}
	// Consecutive calls and ops are mostly of one class: the last one's
	// is kept at hand.
	var lastKey misfitKey
	var last *Misfit
	add := func(k misfitKey, d, corr int64) {
		f := last
		if f == nil || k != lastKey {
			if f = by[k]; f == nil {
				f = &Misfit{What: "op", Class: classOf(tl, k.api, k.kind, k.dir, k.mem, k.wait, anyClass, oneSize)}
				if k.call {
					f.What = "call"
				}
				by[k] = f
			}
			lastKey, last = k, f
		}
		f.Count++
		if d > 0 {
			f.LateNs += d
		} else {
			f.EarlyNs -= d
		}
		if d > MisfitNs {
			f.Late++
		}
		if f.Count == 1 || d > f.WorstNs {
			f.WorstNs, f.WorstCorr = d, corr
		}
	}
	for j := range o.Kind {
		op := int32(j)
		c := o.Call[j]
		at, known := int64(0), false
		if c != timeline.None {
			at, known = m.anchor(op)+m.latL.at(op), true
			at = max(at, cs.Start[c])
		}
		if op > tl.Streams[o.Stream[j]].First {
			if v := o.End[j-1] + m.latP.at(op); !known || v > at {
				at, known = v, true
			}
		}
		for k := m.streamWaitOf(op); k >= 0 && int(k) < len(tl.StreamWaits) && tl.StreamWaits[k].Op == op; k++ {
			at = max(at, o.End[tl.StreamWaits[k].On]+m.swLat[k])
		}
		if f, ok := m.engineWait(op); ok {
			at, known = max(at, f), true
		}
		if !known {
			continue // no call, first on its stream: at its measured time
		}
		k := misfitKey{api: timeline.None, kind: o.Kind[j], dir: o.Dir[j], mem: o.HostMem(op)}
		if c != timeline.None {
			k.api = cs.Name[c]
		}
		add(k, o.Start[j]-at, o.Corr[j])
	}
	for i := range cs.Start {
		wi := m.callWait[i]
		if wi < 0 || m.waits[wi].kind == timeline.WaitPoll {
			continue
		}
		w := &m.waits[wi]
		var wEnd, wStart int64
		for k, j := range w.on {
			if k == 0 || o.End[j] > wEnd {
				wEnd = o.End[j]
			}
			if k == 0 || o.Start[j] > wStart {
				wStart = o.Start[j]
			}
		}
		end := max(cs.Start[i]+w.own, wEnd+w.tail)
		if w.clampStart {
			end = max(end, wStart)
		}
		add(misfitKey{call: true, api: cs.Name[i], dir: timeline.DirNone, mem: timeline.MemNone, wait: w.kind}, cs.End[i]-end, cs.Corr[i])
	}
	out := make([]Misfit, 0, len(by))
	for _, f := range by {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b Misfit) int {
		return cmp.Or(cmp.Compare(b.LateNs, a.LateNs), cmp.Compare(a.What, b.What), cmp.Compare(a.API, b.API),
			cmp.Compare(a.Op, b.Op), cmp.Compare(a.Direction, b.Direction), cmp.Compare(a.Memory, b.Memory), cmp.Compare(a.Wait, b.Wait))
	})
	return out
}

// Misfits measures each call and op of tl against the model, one step at
// a time (Misfit), and returns the classes latest first.
func Misfits(tl *timeline.Timeline) []Misfit {
	return newModel(tl, oneSize).misfits()
}
