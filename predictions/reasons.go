package predictions

import (
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Why a source cannot answer: one type per reason, its values typed.
// Fields named Lacks hold the capture's own account of a fact it lacks
// (capture.Capture.Why), carried as the capture gave it.

// SourceWhy is one source's reason.
type SourceWhy struct {
	Source Source
	Why    Why
}

// NoSources: the input holds neither a trace nor the program's numbers.
type NoSources struct{}

// NoAPITrace: the capture has no per-call API trace.
type NoAPITrace struct{ Lacks string }

// NoCalls: the API trace holds no CUDA calls.
type NoCalls struct{}

// NoTopSize: 1.floor's largest size is missing.
type NoTopSize struct {
	Top   int64
	Sizes []int64
}

// TooFewSizes: 1.growth needs two sizes.
type TooFewSizes struct{ Sizes []int64 }

// NeedsPinnedRate: 3.factor prices zero-copy against part 1's pinned rate,
// which is unavailable.
type NeedsPinnedRate struct{ Why Why }

// NoPinnedAt: part 1 has no pinned host-to-device row at part 3's size.
type NoPinnedAt struct{ Bytes int64 }

// PinnedCallsZero: the pinned group's total call time is zero.
type PinnedCallsZero struct{}

// NoExerciseRows: no row at the exercise's size in both directions.
type NoExerciseRows struct{}

// PinnedNotPinned: the trace shows the pinned copies of the groups the
// exercise compares with a pageable host side (pinned-source-pageable), so
// both sources, which time the same buffers, compare pageable with
// pageable.
type PinnedNotPinned struct{ Groups []string }

// NoRange: the thread has no NVTX range of the name.
type NoRange struct {
	Range  string
	Thread vocab.Thread
}

// RangeCount: the range occurs N times where the lesson has one.
type RangeCount struct {
	Range  string
	N      int
	Thread vocab.Thread
}

// RangesOverlap: two of the lesson's ranges overlap.
type RangesOverlap struct {
	A, B   RangeRef
	Thread vocab.Thread
}

// NoCopyRecords: the trace has no per-copy records.
type NoCopyRecords struct{ Lacks string }

// NoCorrelation: calls cannot be matched with their copies.
type NoCorrelation struct{ Lacks string }

// NoMemoryKinds: without NVTX the groups are told apart by memory kinds,
// which the trace lacks.
type NoMemoryKinds struct{ Lacks string }

// NoKernelRecords: the trace has no per-launch kernel records.
type NoKernelRecords struct{ Lacks string }

// CallWithoutCopy: a copy call in a range has no copy record.
type CallWithoutCopy struct {
	Call      CallRef
	Range     string
	CopyTable string
}

// AsyncWithoutSync: a cudaMemcpyAsync in a part 1 range is not followed by
// a synchronize before the next copy.
type AsyncWithoutSync struct {
	Call  CallRef
	Range string
}

// NoSharedSize: the two part 1 ranges share no copy size.
type NoSharedSize struct{ Dir vocab.Direction }

// MixedHosts: a range's copies of one size come from host memory of
// several kinds.
type MixedHosts struct {
	Range string
	Kind  vocab.CopyKind
	Bytes int64
	Kinds int
}

// CopiesOnGPUs: the copies a part sets side by side ran on more than one
// GPU (Dir is the part 1 sweep's direction, empty for part 2's
// cudaMemcpyAsync groups), so their times are not one GPU's.
type CopiesOnGPUs struct {
	Dir       vocab.Direction
	Devices   []DeviceCount
	CopyTable string
}

// DeviceCount counts the copies or kernels that ran on one GPU (its
// device id).
type DeviceCount struct {
	Device int64
	N      int
}

// KernelsOnGPUs: part 3's timed kernels ran on more than one GPU, so the
// two variants' times are not one GPU's.
type KernelsOnGPUs struct {
	Devices     []DeviceCount
	KernelTable string
}

// RangeHoldsNoCopies: a part 1 range holds no copies of its direction.
type RangeHoldsNoCopies struct {
	Range  string
	Kind   vocab.CopyKind
	Thread vocab.Thread
}

// MemcpyWithoutCopy: a cudaMemcpy call has no copy record.
type MemcpyWithoutCopy struct {
	Call      CallRef
	Thread    vocab.Thread
	CopyTable string
}

// AllPageable: without NVTX, a sweep's copies are all pageable.
type AllPageable struct{ Dir vocab.Direction }

// NoRuns: without NVTX, no size has one run of each host memory.
type NoRuns struct {
	Kind   vocab.CopyKind
	Thread vocab.Thread
}

// NoStreamSync: the thread makes no cudaStreamSynchronize calls.
type NoStreamSync struct{ Thread vocab.Thread }

// NoFollowingSync: a cudaMemcpyAsync has no synchronize after it.
type NoFollowingSync struct {
	Call   CallRef
	Thread vocab.Thread
}

// AsyncBeforeSync: another cudaMemcpyAsync comes before a call's
// synchronize.
type AsyncBeforeSync struct{ Call, Next CallRef }

// AsyncWithoutCopy: a cudaMemcpyAsync has no copy record.
type AsyncWithoutCopy struct {
	Call      CallRef
	CopyTable string
}

// AsyncNotHtoD: a part 2 cudaMemcpyAsync copies another direction.
type AsyncNotHtoD struct {
	Call CallRef
	Kind vocab.CopyKind
}

// AsyncCount: without NVTX or copy records, the thread's cudaMemcpyAsync
// calls are not the lesson's count.
type AsyncCount struct {
	N      int
	Thread vocab.Thread
}

// AsyncMixedHosts: a part 2 range's copies come from host memory of
// several kinds.
type AsyncMixedHosts struct {
	Range string
	Kinds int
}

// RangeHoldsNoAsync: a part 2 range holds no host-to-device
// cudaMemcpyAsync calls.
type RangeHoldsNoAsync struct {
	Range  string
	Thread vocab.Thread
}

// NoAsyncPair: without NVTX, no size is copied host-to-device from both
// pageable and pinned memory.
type NoAsyncPair struct {
	Thread vocab.Thread
	N      int
}

// SummaryBytesOnly: only cuda_gpu_mem_size_sum's totals give bytes, which
// mix every part's copies.
type SummaryBytesOnly struct {
	Count   int64
	TotalMB float64
}

// NoBytes: no per-copy records and no per-kind byte totals.
type NoBytes struct{}

// LaunchCount: without NVTX, the scaleCopy launches are not the lesson's
// count.
type LaunchCount struct {
	N     int
	Owner LaunchOwner
}

// ImpossibleKernelRate: a variant's kernels run faster than the memory or
// link they read allows (limits.Kernel): a time in the trace is wrong.
type ImpossibleKernelRate struct {
	Variant     vocab.Variant
	KernelTable string
	Bytes       int64   // read + written per launch
	Ms          float64 // mean time per launch
	Reason      string  // limits.Bound.Exceeded's "impossible: …"
}

// ZeroKernelTime: a timed kernel of a variant ends when it starts in the
// trace (Corr its correlation id, Count how many of the variant's do): no
// kernel runs in no time, so its record is damaged, and a mean over it
// would be less than the kernels took.
type ZeroKernelTime struct {
	Variant     vocab.Variant
	KernelTable string
	Corr        int64
	Count       int
}

// RangeHoldsNoLaunches: a part 3 range holds no kernel launches.
type RangeHoldsNoLaunches struct {
	Range string
	Owner LaunchOwner
}

// ProgramBadSource: a program copy row names another host memory.
type ProgramBadSource struct {
	Program Program
	Dir     vocab.Direction
	Source  string
}

// ProgramTwoRows: the program gives two rows for one copy.
type ProgramTwoRows struct {
	Program Program
	Dir     vocab.Direction
	Source  string
	Bytes   int64
}

// ProgramNoTime: a program copy row has no time.
type ProgramNoTime struct {
	Program Program
	Dir     vocab.Direction
	Source  string
	Bytes   int64
}

// ProgramNoCopies: the program gives no copy rows of a direction.
type ProgramNoCopies struct {
	Program Program
	Dir     vocab.Direction
}

// ProgramNoPair: no size has both a pageable and a pinned row.
type ProgramNoPair struct {
	Program Program
	Dir     vocab.Direction
}

// ProgramTwoAsync: two part 2 rows for one host memory.
type ProgramTwoAsync struct {
	Program Program
	Source  vocab.MemKind
}

// ProgramNoAsync: no part 2 row for a host memory.
type ProgramNoAsync struct {
	Program Program
	Source  vocab.MemKind
}

// ProgramNoCompletion: a part 2 row has no completion time.
type ProgramNoCompletion struct {
	Program Program
	Source  vocab.MemKind
}

// ProgramTwoKernels: two part 3 rows for one variant.
type ProgramTwoKernels struct {
	Program Program
	Variant vocab.Variant
}

// ProgramNoKernel: no part 3 row for a variant.
type ProgramNoKernel struct {
	Program Program
	Variant vocab.Variant
}

// ProgramNoLaunchTime: a part 3 row has no time per launch.
type ProgramNoLaunchTime struct {
	Program Program
	Variant vocab.Variant
}

// ProgramNoCallTotals: the program's numbers have no call-time totals
// from a trace; MeanRatio is what its own mean call times give, when it
// has part 2.
type ProgramNoCallTotals struct {
	Program   Program
	MeanRatio *float64
}

// ProgramNoGroupBytes: the program's asyncCalls give no bytes per group.
type ProgramNoGroupBytes struct{ Program Program }

// ProgramAskedBytes: the program reports the bytes each copy was asked to
// move, not what the copies moved.
type ProgramAskedBytes struct{ Program Program }

// GateUntrusted: the program's correctness gate failed, so none of its
// numbers may decide a claim: the copies or kernels it timed did not do
// what they were asked.
type GateUntrusted struct {
	Program      Program
	Name, Detail string
}

// The short reasons a control's "unchecked" note gives.

// NoPerCopyRecords: no per-copy records; AddGPUTrace where the CSV
// reports would have them with cuda_gpu_trace.
type NoPerCopyRecords struct{ AddGPUTrace bool }

// ProgramGivesNoGroupBytes: the program's numbers give no bytes per group.
type ProgramGivesNoGroupBytes struct{}

func (NoSources) isWhy()                {}
func (GateUntrusted) isWhy()            {}
func (NoAPITrace) isWhy()               {}
func (NoCalls) isWhy()                  {}
func (NoTopSize) isWhy()                {}
func (TooFewSizes) isWhy()              {}
func (NeedsPinnedRate) isWhy()          {}
func (NoPinnedAt) isWhy()               {}
func (PinnedCallsZero) isWhy()          {}
func (NoExerciseRows) isWhy()           {}
func (PinnedNotPinned) isWhy()          {}
func (NoRange) isWhy()                  {}
func (RangeCount) isWhy()               {}
func (RangesOverlap) isWhy()            {}
func (NoCopyRecords) isWhy()            {}
func (NoCorrelation) isWhy()            {}
func (NoMemoryKinds) isWhy()            {}
func (NoKernelRecords) isWhy()          {}
func (CallWithoutCopy) isWhy()          {}
func (AsyncWithoutSync) isWhy()         {}
func (NoSharedSize) isWhy()             {}
func (MixedHosts) isWhy()               {}
func (CopiesOnGPUs) isWhy()             {}
func (KernelsOnGPUs) isWhy()            {}
func (RangeHoldsNoCopies) isWhy()       {}
func (MemcpyWithoutCopy) isWhy()        {}
func (AllPageable) isWhy()              {}
func (NoRuns) isWhy()                   {}
func (NoStreamSync) isWhy()             {}
func (NoFollowingSync) isWhy()          {}
func (AsyncBeforeSync) isWhy()          {}
func (AsyncWithoutCopy) isWhy()         {}
func (AsyncNotHtoD) isWhy()             {}
func (AsyncCount) isWhy()               {}
func (AsyncMixedHosts) isWhy()          {}
func (RangeHoldsNoAsync) isWhy()        {}
func (NoAsyncPair) isWhy()              {}
func (SummaryBytesOnly) isWhy()         {}
func (NoBytes) isWhy()                  {}
func (LaunchCount) isWhy()              {}
func (RangeHoldsNoLaunches) isWhy()     {}
func (ImpossibleKernelRate) isWhy()     {}
func (ZeroKernelTime) isWhy()           {}
func (ProgramBadSource) isWhy()         {}
func (ProgramTwoRows) isWhy()           {}
func (ProgramNoTime) isWhy()            {}
func (ProgramNoCopies) isWhy()          {}
func (ProgramNoPair) isWhy()            {}
func (ProgramTwoAsync) isWhy()          {}
func (ProgramNoAsync) isWhy()           {}
func (ProgramNoCompletion) isWhy()      {}
func (ProgramTwoKernels) isWhy()        {}
func (ProgramNoKernel) isWhy()          {}
func (ProgramNoLaunchTime) isWhy()      {}
func (ProgramNoCallTotals) isWhy()      {}
func (ProgramNoGroupBytes) isWhy()      {}
func (ProgramAskedBytes) isWhy()        {}
func (NoPerCopyRecords) isWhy()         {}
func (ProgramGivesNoGroupBytes) isWhy() {}
