package audit

import (
	"sort"
	"strings"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/records"

	"github.com/nsyscheck/nsyscheck/vocab"
)

// Evidence is one copy that backs a finding.
type Evidence struct {
	CorrelationID int64
	PID           int64
	TID           int64
	API           string
	Direction     vocab.CopyKind
	HostMemory    HostMemory
	Bytes         int64
	CallStart     int64
	CallNs        int64
	GPUStart      int64
	GPUNs         int64
	// Held is CallNs over GPUNs: the share of the copy the call held the
	// host for.
	Held  float64
	Range string
}

// copyCall is one GPU memory copy together with the API call that issued
// it, as the accumulator sums it. Times are nanoseconds on the capture's
// clock.
type copyCall struct {
	API       string // runtime API name without _vNNNN, "" when no call was found
	CallStart int64  // the call's start (0 when API is "")
	CallEnd   int64
	// HostNs is the call's duration, counted on the first copy of a call
	// only: a batch call that made several copies holds the host once.
	HostNs int64

	Kind     vocab.CopyKind
	Src, Dst vocab.MemKind
	Bytes    int64
	Start    int64 // the copy on the GPU
	End      int64

	CorrelationID int64
	PID, TID      int64
	Thread        string
	Stream        int64
	// Range is the innermost NVTX push/pop range of the calling thread that
	// encloses the call, "" when none does (or the capture has no NVTX).
	Range string
	// Migration is a unified-memory migration's cause, "" for a copy.
	Migration string
}

// kind is the kind of the copy's API: a migration's own, else its call's.
func (c *copyCall) kind() APIKind {
	if c.Migration != "" {
		return MigrationAPI
	}
	return KindOf(c.API)
}

// HostDuration is the call's whole duration (CallEnd - CallStart), whether
// or not HostNs counts it.
func (c *copyCall) HostDuration() int64 { return c.CallEnd - c.CallStart }

// GPUDuration is the copy's duration on the GPU.
func (c *copyCall) GPUDuration() int64 { return c.End - c.Start }

// host is the memory kind of the copy's host side: managed for a
// migration, whose pages the export names no kind for.
func (c *copyCall) host() HostMemory {
	if c.Migration != "" {
		return Managed
	}
	return HostMemoryOf(c.Kind, c.Src, c.Dst)
}

func evidenceOf(c *copyCall) Evidence {
	e := Evidence{CorrelationID: c.CorrelationID, PID: c.PID, TID: c.TID, API: c.API, Direction: c.Kind,
		HostMemory: c.host(), Bytes: c.Bytes, CallStart: c.CallStart, CallNs: c.HostDuration(),
		GPUStart: c.Start, GPUNs: c.GPUDuration(), Range: c.Range}
	if e.GPUNs > 0 {
		e.Held = float64(e.CallNs) / float64(e.GPUNs)
	}
	return e
}

// Finding is one of the lesson's warnings applied to the capture.
type Finding struct {
	// ID names the finding (FindingSecretlySync, FindingNoOverlap): its
	// title and rule are worded by report.
	ID     string
	Count  int64
	Bytes  int64
	HostNs int64
	// Evidence lists the copies that held the host longest (at most
	// MaxEvidence), with their correlation ids.
	Evidence []Evidence
}

// MinOverlapNs is the shortest copy the cannot-overlap finding counts: a
// copy shorter than a call's own launch cost finishes inside any call.
const MinOverlapNs = 10000

// MaxEvidence bounds the copies a finding lists.
const MaxEvidence = 10

// The findings' ids.
const (
	FindingSecretlySync = "secretly-synchronous"
	FindingNoOverlap    = "cannot-overlap"
)

func (f *Finding) add(c *copyCall) {
	f.Count++
	f.Bytes += c.Bytes
	f.HostNs += c.HostNs
	e := evidenceOf(c)
	if len(f.Evidence) == MaxEvidence && f.Evidence[MaxEvidence-1].CallNs >= e.CallNs {
		return
	}
	i := sort.Search(len(f.Evidence), func(i int) bool { return f.Evidence[i].CallNs < e.CallNs })
	if len(f.Evidence) < MaxEvidence {
		f.Evidence = append(f.Evidence, Evidence{})
	}
	copy(f.Evidence[i+1:], f.Evidence[i:])
	f.Evidence[i] = e
}

// Accumulator sums copies into an Audit as they are read.
type Accumulator struct {
	// ranges places each copy's call in its thread's NVTX ranges, which
	// arrive before the copies (nil once the counts, the last record, came);
	// batches holds the (process, correlation id)
	// of the batch calls already counted.
	ranges  *rangeIndex
	batches map[[2]int64]bool

	classes map[key]*Class
	sync    Finding
	noOver  Finding
	// rule is the digest of the pageable async copies, to compare with
	// NVIDIA's cuda_memcpy_async rule; list, when not nil, sets each of
	// them beside the rule's rows (Audit.CompareRule's second pass).
	rule      ruleDigest
	ruleBytes int64 // the bytes of the copies rule sums
	// ruleSizes sums a hash of each of those copies' process, start and
	// size in kB (sizeHash), to compare with the rule's sizes copy by copy.
	ruleSizes uint64
	list      *ruleList
	// sessionStart is when the capture's session started (ns since 1970,
	// UTC), 0 where the capture does not say.
	sessionStart int64
	// sessionFault says why the start the capture records cannot be a
	// session's (records.Meta.SessionStartFault).
	sessionFault string
	job          string // the job the capture names (records.Meta.Job)
	totals       map[totalKey]*Total
	// sites sums the pageable copies by the call site their stacks name.
	sites siteAccumulator
	// last is the class and total of the copy added last, by what keys
	// them: consecutive copies are mostly of one class.
	last struct {
		in    classInput
		ok    bool
		class *Class
		total *Total
		kind  APIKind
		host  HostMemory
		batch bool // the API may make several copies a call
	}
}

// classInput is what sets a copy's class and total apart, as the copy
// carries it.
type classInput struct {
	api              string
	kind             vocab.CopyKind
	src, dst         vocab.MemKind
	bucket           int
	pid, tid, stream int64
	rng, migration   string
}

// NewAccumulator returns an empty Accumulator.
func NewAccumulator() *Accumulator {
	return &Accumulator{
		classes: map[key]*Class{},
		totals:  map[totalKey]*Total{}, batches: map[[2]int64]bool{}, ranges: newRangeIndex(),
		sync:   Finding{ID: FindingSecretlySync, Evidence: []Evidence{}},
		noOver: Finding{ID: FindingNoOverlap, Evidence: []Evidence{}},
	}
}

// Handler returns the records.Handler that feeds the accumulator: what the
// reader says of the capture (its metadata, the facts it lacks, the
// trace's counts) into scan, the NVTX ranges to place the copies' calls
// in, and every copy with its call (Add). Other kinds are not wanted.
func (a *Accumulator) Handler(scan *capture.CopyScan) records.Handler {
	var durationNs int64
	return records.Handler{
		Meta: func(m *records.Meta) error {
			scan.Meta = capture.Metadata{NsysVersion: m.NsysVersion, SchemaVersion: m.SchemaVersion, GPU: m.GPU,
				Driver: m.Driver, CUDADriver: m.CUDADriver, OS: m.OS}
			durationNs = m.DurationNs
			a.sessionStart, a.sessionFault, a.job = m.SessionStartNs, m.SessionStartFault, m.Job
			return nil
		},
		Gap: func(g records.Gap) error {
			if g.Fact == records.FactStacks {
				a.sites.lack(g.Reason)
				return nil
			}
			scan.Lack(g.Fact, g.Reason)
			return nil
		},
		Range: func(r *records.Range) error {
			a.ranges.add(r)
			return nil
		},
		Op: func(o *records.Op) error {
			if o.Kind != records.OpCopy {
				return nil
			}
			scan.Copies++
			if o.Call == nil {
				scan.Unmatched++
			}
			a.Add(o)
			return nil
		},
		Counts: func(c *records.Counts) error {
			// The counts come last: every copy has its range, and the
			// index is let go before the replay begins.
			a.ranges = nil
			scan.APICalls, scan.Memsets = c.Calls, c.Memsets
			switch {
			case durationNs > 0:
				scan.Span, scan.SpanFrom = durationNs, capture.SpanTrace
			case c.LastCall > c.FirstCall:
				scan.Span, scan.SpanFrom = c.LastCall-c.FirstCall, capture.SpanAPICalls
			}
			return nil
		},
	}
}

// Add sums one copy and the call that issued it (o.Call, nil when the
// trace holds none): the call holds the host for its duration, counted
// once for a batch call that made several copies, inside the innermost
// NVTX range of its thread that encloses it.
func (a *Accumulator) Add(o *records.Op) {
	c := copyCall{Kind: o.Copy, Src: o.Src, Dst: o.Dst, Bytes: o.Bytes, Start: o.Start, End: o.End,
		CorrelationID: o.Corr, PID: o.PID, Stream: o.Stream, Migration: o.Migration}
	if call := o.Call; call != nil {
		c.API, c.CallStart, c.CallEnd, c.HostNs = call.Name, call.Start, call.End, call.Duration()
		c.PID, c.TID, c.Thread = call.PID, call.TID, call.Thread
		if a.batchAPI(call.Name) {
			k := [2]int64{c.PID, c.CorrelationID}
			if a.batches[k] {
				c.HostNs = 0
			}
			a.batches[k] = true
		}
		if a.ranges == nil {
			panic("audit: a copy handed to the accumulator after the trace's counts")
		}
		c.Range = a.ranges.innermost(c.PID, c.TID, c.CallStart, c.CallEnd)
	}
	a.sites.add(o.Call, &c)
	a.add(&c)
}

// isBatchAPI reports whether one call of this API may make several copies.
func isBatchAPI(name string) bool { return strings.Contains(name, "Batch") }

// countsOnce reports whether one call of this API may make several copies,
// whose host time counts once: a batch call's, or a graph launch's.
func countsOnce(name string) bool { return isBatchAPI(name) || KindOf(name) == Graph }

// batchAPI is countsOnce, the last API's answer kept.
func (a *Accumulator) batchAPI(name string) bool {
	if a.last.ok && name == a.last.in.api {
		return a.last.batch
	}
	return countsOnce(name)
}

// classOf returns the class and total of a copy, and its API kind and host
// memory: those of the copy before when it is of the same class.
func (a *Accumulator) classOf(c *copyCall) (*Class, *Total, APIKind, HostMemory) {
	in := classInput{api: c.API, kind: c.Kind, src: c.Src, dst: c.Dst, bucket: BucketOf(c.Bytes), pid: c.PID, tid: c.TID,
		stream: c.Stream, rng: c.Range, migration: c.Migration}
	l := &a.last
	if l.ok && in == l.in {
		return l.class, l.total, l.kind, l.host
	}
	k := keyOf(c)
	cl := a.classes[k]
	if cl == nil {
		cl = &Class{ClassKey: k.classKey(), Thread: c.Thread}
		a.classes[k] = cl
	}
	kind, host := c.kind(), c.host()
	tk := totalKey{c.Kind, host, kind}
	t := a.totals[tk]
	if t == nil {
		t = &Total{Direction: c.Kind, HostMemory: host, APIKind: kind}
		a.totals[tk] = t
	}
	l.in, l.ok, l.class, l.total, l.kind, l.host, l.batch = in, true, cl, t, kind, host, countsOnce(c.API)
	return cl, t, kind, host
}

// add sums one copy.
func (a *Accumulator) add(c *copyCall) {
	cl, t, kind, host := a.classOf(c)
	cl.Count++
	cl.Bytes += c.Bytes
	cl.HostNs += c.HostNs
	gpu := c.GPUDuration()
	cl.GPUNs += gpu
	t.Count++
	t.Bytes += c.Bytes
	t.HostNs += c.HostNs
	t.GPUNs += gpu

	if returnsEarly(kind) && host == Pageable {
		if c.HostNs > 0 && gpu > 0 && float64(c.HostDuration()) >= SyncThreshold*float64(gpu) {
			cl.SecretlySync++
			a.sync.add(c)
		}
		if comparedWithRule(kind, host) {
			a.rule.add(c.PID, c.Start)
			a.ruleBytes += c.Bytes
			a.ruleSizes += sizeHash(c.PID, c.Start, kBOfBytes(c.Bytes))
			if a.list != nil {
				a.list.match(c)
			}
		}
	}
	if returnsEarly(kind) && c.HostNs > 0 && gpu >= MinOverlapNs && c.CallEnd >= c.End {
		a.noOver.add(c)
	}
}

// totalKey sets a Total apart.
type totalKey struct {
	dir  vocab.CopyKind
	host HostMemory
	kind APIKind
}

// Total sums the copies of one direction, host memory kind and API kind.
type Total struct {
	Direction  vocab.CopyKind
	HostMemory HostMemory
	APIKind    APIKind
	Count      int64
	Bytes      int64
	HostNs     int64
	GPUNs      int64
}
