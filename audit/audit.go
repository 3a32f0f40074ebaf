// Package audit applies the pinned-memory lesson's rule to any application's
// capture and answers what pinning would do to the program's own time: it
// sorts every memory copy into classes (API kind, direction, host memory
// kind, size, thread, stream, NVTX range), finds the copies the rule warns
// about, takes each region's time as measured, replayed and predicted after
// pinning from the replay of the capture's timeline (package replay, on the
// one cost rule of Coster and the way to pin of PinByOf), and checks that
// prediction region by region against a second capture made after the fix
// (Compare), refusing two captures that are not of one program
// (SameProgram).
//
// The package does no I/O of its own: a capture's reader feeds an
// Accumulator its copies, each with the call that issued it, one at a time
// (Accumulator.Handler), beside the timeline's builder; Finish takes the
// replay's result.
package audit

import (
	"cmp"
	"github.com/nsyscheck/nsyscheck/source"
	"slices"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// The JSON `audit --format json` writes is the envelope every JSON output
// of nsyscheck shares (report.Envelope, docs/output.schema.json): its
// schemaVersion, kind "audit", the tool, the inputs, one Audit per input as
// its results and the Check as its check, through the transfer types of
// package auditjson.
const (
	// EnvelopeVersion is the envelope's schemaVersion auditjson reads
	// (report.SchemaVersion, which writes it).
	EnvelopeVersion = 1
	// EnvelopeKind is the envelope's kind for an audit (spelt where
	// inputs are told: source.OutputAudit).
	EnvelopeKind = source.OutputAudit
	// EnvelopeKindRanks is the envelope's kind for the audits of a
	// distributed job's captures, a result per rank (audit --ranks).
	EnvelopeKindRanks = source.OutputAuditRanks
	// LegacySchemaVersion named the audit's own JSON form before the
	// envelope: {"schemaVersion": "nsyscheck.audit/v1", "before", "after",
	// "check"}. auditjson.ReadOutput still reads it.
	LegacySchemaVersion = source.LegacyAuditVersion
)

// SyncThreshold is the share of a copy's GPU time its async call must hold
// the host for the copy to count as secretly synchronous.
const SyncThreshold = 0.80

// APIKind says whether a copy's API returns before the copy is done.
type APIKind string

// API kinds.
const (
	Blocking   APIKind = "blocking"
	Async      APIKind = "async"
	UnknownAPI APIKind = "unknown" // the copy's call is not in the trace
	// Graph: a copy a CUDA graph launch ran as a node, traced node by node;
	// its call is the launch (cudaGraphLaunch), which returns before the
	// graph's work is done, as an async call does.
	Graph APIKind = "graph"
	// MigrationAPI: a unified-memory migration, which no call made: the
	// driver moved managed pages (prefetched, or on a page fault).
	MigrationAPI APIKind = "migration"
)

// KindOf tells an API's kind by its name: the *Async variants are async,
// a graph launch's copies are the graph's.
func KindOf(api string) APIKind {
	switch {
	case api == "":
		return UnknownAPI
	case nsysdb.IsGraphLaunch(api):
		return Graph
	case strings.Contains(api, "Async"):
		return Async
	}
	return Blocking
}

// returnsEarly reports whether calls of the kind return before their copy
// is done, so that the findings' rules apply to them: async calls and
// graph launches.
func returnsEarly(k APIKind) bool { return k == Async || k == Graph }

// comparedWithRule reports whether the audit counts a copy of this kind
// and host memory against NVIDIA's cuda_memcpy_async rule: an asynchronous
// copy call from or to pageable memory.
func comparedWithRule(k APIKind, host HostMemory) bool { return k == Async && host == Pageable }

// HostMemory is the kind of the host side of a copy, in vocab's words.
type HostMemory = vocab.MemKind

// Host memory kinds.
const (
	Pageable    = vocab.MemPageable
	Pinned      = vocab.MemPinned
	Managed     = vocab.MemManaged
	UnknownHost = vocab.MemUnknown
	NoHost      = vocab.MemNone // a device-to-device or peer copy
)

// HostMemoryOf returns the memory kind of the host side of a copy of the
// given direction between memory kinds src and dst.
func HostMemoryOf(kind vocab.CopyKind, src, dst vocab.MemKind) HostMemory {
	var m vocab.MemKind
	switch kind {
	case vocab.CopyHtoD:
		m = src
	case vocab.CopyDtoH:
		m = dst
	case vocab.CopyHtoH:
		m = src
		if dst == vocab.MemPageable {
			m = dst
		}
	case vocab.CopyDtoD, vocab.CopyPtoP:
		return NoHost
	default:
		if src == vocab.MemPageable || dst == vocab.MemPageable {
			return Pageable
		}
		m = src
	}
	switch m {
	case vocab.MemPageable:
		return Pageable
	case vocab.MemPinned:
		return Pinned
	case vocab.MemManaged:
		return Managed
	}
	if src == vocab.MemManaged || dst == vocab.MemManaged {
		return Managed
	}
	return UnknownHost
}

// Buckets are the size buckets of copies: each holds sizes from its Min up
// to the next bucket's Min.
var Buckets = []struct {
	Name string
	Min  int64
}{
	{"<4KiB", 0}, {"4KiB-64KiB", 4 << 10}, {"64KiB-1MiB", 64 << 10}, {"1MiB-16MiB", 1 << 20},
	{"16MiB-256MiB", 16 << 20}, {">=256MiB", 256 << 20},
}

// BucketOf returns the index in Buckets of a copy size.
func BucketOf(bytes int64) int {
	i := len(Buckets) - 1
	for i > 0 && bytes < Buckets[i].Min {
		i--
	}
	return i
}

// ClassKey is what sets a class of copies apart.
type ClassKey struct {
	API        string
	APIKind    APIKind
	Direction  vocab.CopyKind
	HostMemory HostMemory
	SizeBucket string
	PID        int64
	TID        int64
	Stream     int64
	Range      string
	// Migration is a unified-memory migration's cause ("prefetch",
	// "fault", ...; "" for a copy), which sets its class apart.
	Migration string
}

// Class is the copies of one ClassKey, summed.
type Class struct {
	ClassKey
	Thread string
	Count  int64
	Bytes  int64
	// HostNs is the time the calls held the host thread; GPUNs the copies'
	// time on the GPU.
	HostNs int64
	GPUNs  int64
	// GPUGBps is Bytes over GPUNs (the copy engine's rate); HostGBps is Bytes
	// over HostNs (what the calling thread saw).
	GPUGBps  float64
	HostGBps float64
	// HostShare is HostNs as a share of the class's region, its NVTX
	// range or the whole capture (replay.CaptureRegion) for a class
	// outside any range (Region.ShareOf).
	HostShare float64
	// SecretlySync counts the class's copies the secretly-synchronous
	// finding holds.
	SecretlySync int64
}

// key is the comparable form of a ClassKey.
type key struct {
	api, apiKind, dir, host string
	bucket                  int
	pid, tid, stream        int64
	rng, migration          string
}

func keyOf(c *copyCall) key {
	return key{api: c.API, apiKind: string(c.kind()), dir: string(c.Kind), host: string(c.host()),
		bucket: BucketOf(c.Bytes), pid: c.PID, tid: c.TID, stream: c.Stream, rng: c.Range, migration: c.Migration}
}

func (k key) classKey() ClassKey {
	return ClassKey{API: k.api, APIKind: APIKind(k.apiKind), Direction: vocab.CopyKind(k.dir),
		HostMemory: HostMemory(k.host), SizeBucket: Buckets[k.bucket].Name, PID: k.pid, TID: k.tid,
		Stream: k.stream, Range: k.rng, Migration: k.migration}
}

// Bucket is the index in Buckets of the class's size bucket (0 for a
// name no bucket has: a class read back from JSON another nsyscheck wrote).
func (k ClassKey) Bucket() int { return max(BucketIndex(k.SizeBucket), 0) }

// sortClasses orders classes by host time, then bytes, then key, classes
// alike in all three in the order they came: each sorted with its place,
// where a stable sort's merges in place moved 600,000 classes (one an NVTX
// range name each) for seconds.
func sortClasses(cs []*Class) {
	type placed struct {
		c  *Class
		at int
	}
	ps := make([]placed, len(cs))
	for i, c := range cs {
		ps[i] = placed{c, i}
	}
	slices.SortFunc(ps, func(x, y placed) int {
		a, b := x.c, y.c
		if a.HostNs != b.HostNs {
			return cmp.Compare(b.HostNs, a.HostNs)
		}
		if a.Bytes != b.Bytes {
			return cmp.Compare(b.Bytes, a.Bytes)
		}
		return cmp.Or(strings.Compare(a.label(), b.label()), cmp.Compare(x.at, y.at))
	})
	for i, p := range ps {
		cs[i] = p.c
	}
}

// Label is a short one-line name of the class.
func (k ClassKey) Label() string { return k.label() }

func (k ClassKey) label() string {
	if k.Migration != "" {
		// No call, thread or stream: the driver moved managed pages.
		return strings.Join([]string{"unified-memory", k.Migration, string(k.Direction), k.SizeBucket, "pid", itoa(k.PID)}, " ")
	}
	var b strings.Builder
	api := k.API
	if api == "" {
		api = "(no call)"
	}
	b.WriteString(api)
	b.WriteString(" ")
	b.WriteString(string(k.Direction))
	b.WriteString(" ")
	b.WriteString(string(k.HostMemory))
	b.WriteString(" ")
	b.WriteString(k.SizeBucket)
	b.WriteString(" pid ")
	b.WriteString(itoa(k.PID))
	b.WriteString("/tid ")
	b.WriteString(itoa(k.TID))
	b.WriteString(" stream ")
	b.WriteString(itoa(k.Stream))
	if k.Range != "" {
		b.WriteString(" [")
		b.WriteString(k.Range)
		b.WriteString("]")
	}
	return b.String()
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
