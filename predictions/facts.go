package predictions

import (
	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// What an evaluation says is typed values: the facts of its evidence lines
// (Fact), why a source cannot answer (Why) and its diagnostics' details
// (diag.Detail, in details.go). None of them is a sentence: report puts
// every one into words, so that no reader has to take a sentence apart.

// Fact is what one evidence line says.
type Fact interface{ isFact() }

// Why is why a source of numbers cannot answer a claim or a part.
type Why interface{ isWhy() }

// RangeRef is an NVTX range as evidence names it: its name and span.
type RangeRef struct {
	Name       string
	Start, End int64 // ns; End is 0 when Open
	Open       bool  // never closed: the capture ended inside it
}

func rangeRef(r capture.Range) RangeRef {
	return RangeRef{Name: r.Name, Start: r.Start, End: r.End, Open: r.Open}
}

// CallRef names one API call so that it can be found in the input: its
// CSV data row in Table where the input is a CSV report, else its
// correlation id.
type CallRef struct {
	Name  string // the API, e.g. cudaMemcpyAsync
	Table string
	Row   int   // 1 = the first row after the header; 0 where not a CSV
	Corr  int64 // the correlation id
}

// Program names where the program's own numbers came from: the kind of
// input and its file's base name ("" when the input names none).
type Program struct {
	Format capture.Format
	File   string
}

// GroupKey names a group of records: part 1's copies of one direction,
// size and host memory, part 2's of one host memory, part 3's launches of
// one variant. Fields a group does not have are zero.
type GroupKey struct {
	Dir     vocab.Direction
	Bytes   int64
	Source  vocab.MemKind
	Variant vocab.Variant
}

// Timed is a group's mean time, its bandwidth and where its records are.
type Timed struct {
	Ms   float64
	GBps float64
	At   *Records // nil where the source names no records
}

// SizeCount is how many copies of one size a group holds.
type SizeCount struct {
	Bytes int64
	N     int
}

// KindCount is how many copies of one direction were set aside.
type KindCount struct {
	Kind vocab.CopyKind
	N    int
}

// GroupNote is how many operations one group holds and how many of them
// are timed: a part 1 group of one direction, host memory and size.
type GroupNote struct {
	Dir    vocab.Direction
	Source vocab.MemKind
	Bytes  int64
	N      int
	Timed  int
}

// SourceSize is a size that only one source's group has.
type SourceSize struct {
	Source vocab.MemKind
	Bytes  int64
}

// LaunchOwner says whose kernel launches part 3 reads: those whose
// cudaLaunchKernel call is on Thread, or, without launch calls in the
// input, those of process PID.
type LaunchOwner struct {
	ByCall bool
	Thread vocab.Thread
	PID    int64
}

// The facts of evidence lines.

// SweepRow is one size of part 1: both sources' mean copy times, their
// bandwidths and the records behind them, and their ratio.
type SweepRow struct {
	Dir              vocab.Direction
	Bytes            int64
	Pageable, Pinned Timed
	Ratio            float64
}

// NotFaster names the sizes at which pinned copies were not faster.
type NotFaster struct{ Sizes []int64 }

// GrowthRatios lists the host-to-device ratios by size and how the rows
// were found.
type GrowthRatios struct {
	Sizes  []int64
	Ratios []float64
	Method Fact
}

// Tau is 1.growth's Kendall's tau and the largest and smallest size's
// ratios.
type Tau struct {
	Tau, Largest, Smallest float64
}

// Ties says that some ratios tie.
type Ties struct{}

// Share is part 2's call against completion time of one host memory.
type Share struct {
	Source       vocab.MemKind
	CallMs       float64
	CompletionMs float64
	Share        float64
	Calls        int
	At           *Records // nil where the source names no records
}

// KernelBytesFrom says where part 3's bytes per launch came from.
type KernelBytesFrom struct {
	// Given is true when the program's numbers give the bytes, Implied
	// when their GB/s x ms imply them; neither: the lesson's design.
	Given, Implied bool
	Variant        string  // the program's row that gave them
	Bytes          int64   // the bytes per launch taken
	ImpliedBytes   float64 // GB/s x ms, with Implied
}

// KernelBytes is part 3's bytes per launch and where they came from.
type KernelBytes struct {
	Bytes int64
	From  KernelBytesFrom
}

// KernelTimes are part 3's times and bandwidths of both variants.
type KernelTimes struct {
	Resident, ZeroCopy Timed
}

// PinnedRate is part 1's pinned host-to-device rate at part 3's size.
type PinnedRate struct {
	Bytes int64
	Timed Timed
}

// Loss is 3.factor's arithmetic: the predicted loss (resident GB/s over
// pinned GB/s), the measured one (zero-copy ms over resident ms) and the
// span the measured one must lie in.
type Loss struct {
	ResidentGBps, PinnedGBps, Predicted float64
	ZeroCopyMs, ResidentMs, Measured    float64
	Compare                             Comparison
}

// CallTotals is 4.calltime's arithmetic: each group's total call time and
// size and their ratio (of the means, when the groups differ in size).
type CallTotals struct {
	PageableMs, PinnedMs float64
	PageableN, PinnedN   int
	Ratio                float64
	OfMeans              bool
}

// GroupBytes is 4.bytes's arithmetic: each group's bytes, in all or per
// copy.
type GroupBytes struct {
	Pageable, Pinned int64
	PerCopy          bool
}

// ExerciseRatio is one direction's pageable/pinned ratio at the
// exercise's size.
type ExerciseRatio struct {
	Dir                  vocab.Direction
	Bytes                int64
	PageableMs, PinnedMs float64
	Ratio                float64
}

// ExerciseBoth is a further source's answer to the exercise.
type ExerciseBoth struct {
	H2D, D2H float64
	Answer   Gain
}

// DeviceCopy is the device-to-device reference copy: its size, the timed
// copies of the range, their records and mean GPU time, and the bandwidth
// (bytes read + written per second).
type DeviceCopy struct {
	Bytes     int64
	Timed, Of int
	At        *Records
	Ms        float64
	GBps      float64
}

// Quantity is a plain measured value: what it is, the value and its
// unit; for a prediction whose evidence needs no words of its own.
type Quantity struct {
	What  Words
	Value float64
	Unit  Words
}

// The facts that say how a part's groups were found.

// SweepByRanges: part 1 found in NVTX ranges, one per host memory.
type SweepByRanges struct {
	APITable, CopyTable string
	Thread              vocab.Thread
	Ranges              []RangeRef
	// Shaped is true when the groups are exactly the lesson's; else
	// FromProgram says whether the program's timed runs set the warm-ups,
	// and Groups count each group's copies.
	Shaped      bool
	FromProgram bool
	CopySync    []CopySync
	Groups      []GroupNote
}

// CopySync notes a range whose copies are cudaMemcpyAsync + synchronize.
type CopySync struct {
	Range string
	N     int
}

// SweepByRuns: part 1 found without NVTX, as runs of consecutive copies.
type SweepByRuns struct {
	APITable, CopyTable string
	Thread              vocab.Thread
	Shaped              bool
	Runs                []GroupNote
	// NoRanges names the direction whose NVTX ranges the analysed thread
	// lacks in a trace with NVTX (they may be on another thread); "" where
	// the trace has no NVTX at all.
	NoRanges vocab.Direction
}

// ProgramSweep: part 1 from the program's rows.
type ProgramSweep struct {
	Program Program
	Dir     vocab.Direction
	Lone    []int64 // sizes with one source only, left out
}

// AsyncByRanges: part 2's groups in NVTX ranges async-pageable/pinned.
type AsyncByRanges struct {
	Ranges           []RangeRef
	Shaped           bool
	Pageable, Pinned int
}

// AsyncByCopies: part 2's groups found without NVTX by their copies.
type AsyncByCopies struct {
	Thread    vocab.Thread
	Bytes     int64
	CopyTable string
	Groups    []AsyncGroup
}

// AsyncGroup is one host memory's calls found by their copies, and how
// many are warm-ups.
type AsyncGroup struct {
	N      int
	Source vocab.MemKind
	Warm   int
}

// AsyncByOrder: part 2's groups by call order alone.
type AsyncByOrder struct {
	Thread vocab.Thread
}

// AsyncMethod is how part 2 was read from the trace: the groups, the
// tables, and whether the copies' records confirmed them.
type AsyncMethod struct {
	Groups     Fact // AsyncByRanges, AsyncByCopies or AsyncByOrder
	APITable   string
	CopyTable  string
	WithCopies bool
}

// ProgramAsync: part 2 from the program's rows.
type ProgramAsync struct{ Program Program }

// KernelsByRanges: part 3's groups in NVTX ranges, one per variant.
type KernelsByRanges struct {
	KernelTable string
	Owner       LaunchOwner
	Ranges      []RangeRef
	Shaped      bool
	Groups      []KernelGroup
}

// KernelGroup is the kernel a part 3 range launched most, how often, and
// how many launches are timed.
type KernelGroup struct {
	Range  string
	N      int
	Kernel string
	Timed  int
}

// KernelsByOrder: part 3's groups by launch order alone.
type KernelsByOrder struct {
	KernelTable string
	Owner       LaunchOwner
}

// ProgramKernels: part 3 from the program's rows.
type ProgramKernels struct{ Program Program }

// CallsMethod: prediction 4's call times, of part 2's groups.
type CallsMethod struct {
	APITable         string
	Pageable, Pinned *Records
	Groups           Fact
}

// BytesMethod: prediction 4's bytes, of the copies of part 2's groups.
type BytesMethod struct {
	CopyTable        string
	PageableN        int
	PageableBytes    int64
	PinnedN          int
	PinnedBytes      int64
	Pageable, Pinned *Records
	PerCopy          bool
	Groups           Fact
}

// ProgramCalls: prediction 4's call times from the program's asyncCalls.
type ProgramCalls struct{ Program Program }

// ProgramBytes: prediction 4's bytes from the program's asyncCalls.
type ProgramBytes struct{ Program Program }

func (Quantity) isFact()        {}
func (SweepRow) isFact()        {}
func (NotFaster) isFact()       {}
func (GrowthRatios) isFact()    {}
func (Tau) isFact()             {}
func (Ties) isFact()            {}
func (Share) isFact()           {}
func (KernelBytes) isFact()     {}
func (KernelTimes) isFact()     {}
func (PinnedRate) isFact()      {}
func (Loss) isFact()            {}
func (CallTotals) isFact()      {}
func (GroupBytes) isFact()      {}
func (ExerciseRatio) isFact()   {}
func (ExerciseBoth) isFact()    {}
func (DeviceCopy) isFact()      {}
func (SweepByRanges) isFact()   {}
func (SweepByRuns) isFact()     {}
func (ProgramSweep) isFact()    {}
func (AsyncByRanges) isFact()   {}
func (AsyncByCopies) isFact()   {}
func (AsyncByOrder) isFact()    {}
func (AsyncMethod) isFact()     {}
func (ProgramAsync) isFact()    {}
func (KernelsByRanges) isFact() {}
func (KernelsByOrder) isFact()  {}
func (ProgramKernels) isFact()  {}
func (CallsMethod) isFact()     {}
func (BytesMethod) isFact()     {}
func (ProgramCalls) isFact()    {}
func (ProgramBytes) isFact()    {}
