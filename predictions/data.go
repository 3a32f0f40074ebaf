package predictions

import (
	"sort"

	"github.com/nsyscheck/nsyscheck/vocab"
)

const mib = int64(1) << 20

// The bundled program's design (kernels/pinned.cu).
var (
	sweepSizes  = []int64{1 * mib, 4 * mib, 16 * mib, 64 * mib, 256 * mib}
	probeBytes  = 64 * mib  // part 2's copy
	kernelBytes = 64 * mib  // part 3's buffers; a launch reads and writes this much
	floorSize   = 256 * mib // 1.floor's size, the sweep's largest
)

// ExerciseBytes is the size at which the exercise compares the directions.
const ExerciseBytes = 64 * mib

const (
	warmups      = 3
	timedRuns    = 10
	perSize      = warmups + timedRuns // part 1 copies per size in a range
	asyncPerSrc  = 1 + timedRuns       // part 2: one warm-up then the timed calls
	asyncTotal   = 2 * asyncPerSrc     // cudaMemcpyAsync calls in the program
	launchPerVar = 1 + warmups + timedRuns
	launchTotal  = 2 * launchPerVar // scaleCopy launches in the program
	kernelName   = "scaleCopy"
)

var (
	sources  = []vocab.MemKind{vocab.MemPageable, vocab.MemPinned}
	variants = []vocab.Variant{vocab.DeviceResident, vocab.ZeroCopy}
)

// timing is a group of timed operations of one kind.
type timing struct {
	ms    float64   // mean milliseconds per operation
	runs  int       // operations averaged
	durMs []float64 // each operation's milliseconds (trace only)
	corr  []int64   // correlation ids (trace only)
	at    *Records  // where the records are, for evidence (trace only)
}

// sweepData is part 1 (h2d) or 1b (d2h) from one source.
type sweepData struct {
	dir      vocab.Direction
	sizes    []int64 // ascending; sizes present for both sources
	pageable map[int64]timing
	pinned   map[int64]timing
	how      Fact   // how the rows were found, for evidence
	table    string // the table or CSV report the durations came from
}

func (s *sweepData) ratio(size int64) float64 {
	return s.pageable[size].ms / s.pinned[size].ms
}

func (s *sweepData) ratios() []float64 {
	out := make([]float64, len(s.sizes))
	for i, b := range s.sizes {
		out[i] = s.ratio(b)
	}
	return out
}

func (s *sweepData) has(size int64) bool {
	_, a := s.pageable[size]
	_, b := s.pinned[size]
	return a && b
}

// asyncSide is part 2 for one source.
type asyncSide struct {
	callMs       float64
	completionMs float64
	runs         int
	bytes        int64 // bytes per call, 0 when unknown
	totalBytes   int64 // bytes moved by the timed copies, 0 when unknown
	callDurMs    []float64
	corr         []int64
	at           *Records // where the calls are (trace only)
}

type asyncData struct {
	side  map[vocab.MemKind]*asyncSide
	how   Fact
	table string
}

// kernelData is part 3 from one source.
type kernelData struct {
	ms        map[vocab.Variant]timing // per variant
	bytes     int64                    // read + written per launch
	bytesFrom KernelBytesFrom
	how       Fact
	table     string
}

func (k *kernelData) gbps(variant vocab.Variant) float64 {
	return float64(k.bytes) / (k.ms[variant].ms * 1e-3) / 1e9
}

// callTotals is prediction 4's call time per group.
type callTotals struct {
	pageableMs, pinnedMs float64
	pageableN, pinnedN   int
	perCall              *CallDurations
	how                  Fact
	table                string
	recs                 []Records // the groups' calls (trace only)
}

// byteTotals is prediction 4's bytes per group.
type byteTotals struct {
	pageable, pinned int64
	perCopy          bool // bytes per copy (groups of different sizes), not totals
	how              Fact
	table            string
	recs             []Records // the groups' calls (trace only)
}

// recordsOf lists the records of timings that name theirs.
func recordsOf(ts ...*Records) []Records {
	var out []Records
	for _, t := range ts {
		if t != nil {
			out = append(out, *t)
		}
	}
	return out
}

// corrRecords is the group of records of table with the correlation ids
// ids, by their smallest and largest id; nil when there are none.
func corrRecords(group GroupKey, table string, ids []int64) *Records {
	if len(ids) == 0 {
		return nil
	}
	s := append([]int64(nil), ids...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return &Records{Group: group, Table: table, Corr: &Span{First: s[0], Last: s[len(s)-1]}, Count: len(s)}
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func sum(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}

func gbps(bytes int64, ms float64) float64 { return float64(bytes) / (ms * 1e-3) / 1e9 }

func ptr(x float64) *float64 { return &x }

// LessonDesign is the bundled program's design, by which the lesson's
// groups are found: part 1's sizes, warm-ups and timed runs per size,
// part 2's calls per host memory and in all, part 3's launches per variant
// and in all, its kernel and the bytes a launch reads (and writes).
type LessonDesign struct {
	SweepSizes                      []int64
	Warmups, Timed, PerSize         int
	AsyncPerSource, AsyncTotal      int
	LaunchesPerVariant, LaunchTotal int
	Kernel                          string
	KernelBytes                     int64
}

// Design is kernels/pinned.cu's design.
var Design = LessonDesign{
	SweepSizes: sweepSizes, Warmups: warmups, Timed: timedRuns, PerSize: perSize,
	AsyncPerSource: asyncPerSrc, AsyncTotal: asyncTotal,
	LaunchesPerVariant: launchPerVar, LaunchTotal: launchTotal,
	Kernel: kernelName, KernelBytes: kernelBytes,
}
