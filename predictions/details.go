package predictions

import (
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// The details of the evaluation's diagnostics: one type per thing
// noticed, each naming its code.

// SiblingSetAside: a file beside the capture is not the program's output
// and was left out (the capture's reason, as it gave it).
type SiblingSetAside struct{ Path, Reason string }

// SourcesDisagree: the sources' verdicts on a claim differ; Decided's
// stands.
type SourcesDisagree struct {
	Claim                          string
	Decided, Other                 Source
	DecidedVerdict, OtherVerdict   Verdict
	DecidedMeasured, OtherMeasured float64
}

// SlowSize is a size at which pinned copies were slower than pageable.
type SlowSize struct {
	Bytes                int64
	PinnedMs, PageableMs float64
}

// PinnedSlower: a source's pinned copies are slower than its pageable ones.
type PinnedSlower struct {
	Source Source
	Dir    vocab.Direction
	Sizes  []SlowSize
}

// ThreadCalls is a thread and how many CUDA calls it made.
type ThreadCalls struct {
	Thread vocab.Thread
	Calls  int
}

// OtherThreads: the trace was read from one thread and others were left
// out. Read says why that thread, by its counts.
type OtherThreads struct {
	Read   records.ThreadCount
	Others []ThreadCalls
}

// OpenRange: an NVTX range was never closed.
type OpenRange struct {
	Range string
	Start int64
}

// RangeOrder: a pinned range comes before its pageable one.
type RangeOrder struct{ Pinned, Pageable string }

// RangeShape: a part 1 range holds other counts or sizes than the lesson.
type RangeShape struct {
	Range  string
	Counts []SizeCount
}

// RunsShape: without NVTX, a sweep's runs are not the lesson's.
type RunsShape struct {
	Dir  vocab.Direction
	Runs []GroupNote
}

// AsyncRangeCount: a part 2 range holds other than the lesson's count.
type AsyncRangeCount struct {
	Range  string
	N      int
	Thread vocab.Thread
}

// AsyncGroupShape: without NVTX, a part 2 group is not the lesson's size.
type AsyncGroupShape struct {
	Thread vocab.Thread
	N      int
	Bytes  int64
	Source vocab.MemKind
}

// KernelRangeShape: a part 3 range's group is not the lesson's.
type KernelRangeShape struct {
	Range  string
	N      int
	Kernel string
	Timed  int
}

// PinnedPageable: a pinned group's copies have a pageable host side.
type PinnedPageable struct {
	Group     string
	Dir       vocab.Direction
	CopyTable string
	Corr      int64
}

// PinnedPageableRuns: without NVTX, a sweep has two runs of pageable
// copies per size and no pinned ones.
type PinnedPageableRuns struct{ Dir vocab.Direction }

// MemoryKindMismatch: a group's copies have another host memory kind than
// its name says.
type MemoryKindMismatch struct {
	Group     string
	Dir       vocab.Direction
	Host      vocab.MemKind
	CopyTable string
	Corr      int64
	Want      vocab.MemKind
}

// RangeAlsoHolds: a part 1 range holds copies of other directions, set
// aside.
type RangeAlsoHolds struct {
	Range string
	Aside []KindCount
	Kind  vocab.CopyKind
}

// AsyncRangeAlsoHolds: a part 2 range holds copies that are not
// host-to-device, set aside.
type AsyncRangeAlsoHolds struct {
	Range string
	Aside []KindCount
}

// OneSourceSizes: a sweep's sizes with copies from one source only.
type OneSourceSizes struct {
	Dir  vocab.Direction
	Lone []SourceSize
}

// RunAside is a size without exactly one run of each host memory.
type RunAside struct {
	Bytes            int64
	Pageable, Pinned int
}

// RunSizesAside: without NVTX, a sweep's sizes without one run of each
// host memory.
type RunSizesAside struct {
	Dir   vocab.Direction
	Sizes []RunAside
}

// KernelCount is a kernel and how often a range launched it.
type KernelCount struct {
	Kernel string
	N      int
}

// OtherKernels: a part 3 range launches other kernels besides its group's.
type OtherKernels struct {
	Range  string
	N      int
	Kernel string
	Aside  []KernelCount
}

// CopySyncRange: a part 1 range's copies are cudaMemcpyAsync +
// synchronize.
type CopySyncRange struct {
	Range string
	N     int
}

// AsyncOutside: the thread makes cudaMemcpyAsync calls outside part 2's
// ranges.
type AsyncOutside struct {
	Thread     vocab.Thread
	N, Outside int
}

// AsyncAside: without NVTX, some cudaMemcpyAsync calls are not part 2's.
type AsyncAside struct {
	Thread   vocab.Thread
	N, Aside int
	Bytes    int64
}

// GateFailed: the program's correctness gate failed.
type GateFailed struct{ Name, Detail string }

// KernelBytesMismatch: a program row's bytes disagree with its GB/s x ms.
type KernelBytesMismatch struct {
	Variant string
	Bytes   int64
	Implied float64
}

// Code is the detail's code.
func (SiblingSetAside) Code() diag.Code     { return CodeSiblingSetAside }
func (SourcesDisagree) Code() diag.Code     { return CodeSourcesDisagree }
func (PinnedSlower) Code() diag.Code        { return CodePinnedSlower }
func (OtherThreads) Code() diag.Code        { return CodeOtherThreadsIgnored }
func (OpenRange) Code() diag.Code           { return CodeOpenRange }
func (RangeOrder) Code() diag.Code          { return CodeLessonShape }
func (RangeShape) Code() diag.Code          { return CodeLessonShape }
func (RunsShape) Code() diag.Code           { return CodeLessonShape }
func (AsyncRangeCount) Code() diag.Code     { return CodeLessonShape }
func (AsyncGroupShape) Code() diag.Code     { return CodeLessonShape }
func (KernelRangeShape) Code() diag.Code    { return CodeLessonShape }
func (PinnedPageable) Code() diag.Code      { return CodePinnedSourcePageable }
func (PinnedPageableRuns) Code() diag.Code  { return CodePinnedSourcePageable }
func (MemoryKindMismatch) Code() diag.Code  { return CodeMemoryKind }
func (RangeAlsoHolds) Code() diag.Code      { return CodeSetAside }
func (AsyncRangeAlsoHolds) Code() diag.Code { return CodeSetAside }
func (OneSourceSizes) Code() diag.Code      { return CodeSetAside }
func (RunSizesAside) Code() diag.Code       { return CodeSetAside }
func (OtherKernels) Code() diag.Code        { return CodeSetAside }
func (CopySyncRange) Code() diag.Code       { return CodeCopySync }
func (AsyncOutside) Code() diag.Code        { return CodeAsyncPremise }
func (AsyncAside) Code() diag.Code          { return CodeAsyncPremise }
func (GateFailed) Code() diag.Code          { return CodeGateFailed }
func (KernelBytesMismatch) Code() diag.Code { return CodeKernelBytes }
