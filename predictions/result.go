// Package predictions judges the pinned-memory lesson's four predictions and
// its exercise against one capture of the program: an Nsight Systems trace,
// its CSV reports, the program's own numbers, or several of these at once.
//
// Every claim is evaluated from the trace wherever the trace holds the data
// and from the program's numbers wherever those are given. When both exist,
// both values are reported and the trace decides the verdict. A claim the
// input cannot answer is "unavailable" with the reason; it is never guessed.
package predictions

import (
	"path/filepath"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Verdict is the outcome of one claim or prediction (vocab.Verdict).
type Verdict = vocab.Verdict

// Verdicts.
const (
	Held        = vocab.Held
	Died        = vocab.Died
	Unavailable = vocab.Unavailable
)

// Diagnostic codes.
const (
	CodeSourcesDisagree      diag.Code = "sources-disagree"
	CodePinnedSourcePageable diag.Code = "pinned-source-pageable"
	CodePinnedSlower         diag.Code = "pinned-slower-than-pageable"
	CodeOtherThreadsIgnored  diag.Code = "other-threads-ignored"
	CodeOpenRange            diag.Code = "open-nvtx-range"
	CodeGateFailed           diag.Code = "gate-failed"
	CodeKernelBytes          diag.Code = "kernel-bytes-inconsistent"
	// CodeLessonShape: a group found by its structure deviates from the
	// lesson's counts, sizes or order; the group is still used.
	CodeLessonShape diag.Code = "lesson-structure"
	// CodeSetAside: calls that belong to no group (other directions,
	// sizes, ranges) were left out of the groups.
	CodeSetAside diag.Code = "set-aside"
	// CodeCopySync: part 1's copies are cudaMemcpyAsync + synchronize
	// rather than blocking cudaMemcpy calls.
	CodeCopySync diag.Code = "copy-and-synchronize"
	// CodeAsyncPremise: the lesson's premise that part 2's copies are the
	// program's only cudaMemcpyAsync calls does not hold.
	CodeAsyncPremise diag.Code = "async-premise"
	// CodeMemoryKind: a group's copies have another host memory kind than
	// the group's name says (other than pinned-source-pageable).
	CodeMemoryKind diag.Code = "memory-kind-mismatch"
	// CodeSiblingSetAside: a file beside the capture (transcript, results
	// JSON) was not the program's output and was set aside.
	CodeSiblingSetAside diag.Code = "sibling-set-aside"
	// CodeGPUUnknown: the trace names no GPU for its copies and kernels,
	// so the rates they may reach are bounded by the fastest link and
	// memory there are, not their GPU's.
	CodeGPUUnknown diag.Code = "gpu-unknown"
	// CodeSchemaNewer: the export's schema is of a newer major version
	// than the one nsyscheck reads, whose columns may mean other things.
	CodeSchemaNewer diag.Code = "schema-newer"
	// CodeSchemaUnknown: the export names no schema version that can be
	// read (no META_DATA_EXPORT, or a version not MAJOR.MINOR.MICRO), so
	// what its tables and columns mean is not known to be what nsyscheck
	// reads them as.
	CodeSchemaUnknown diag.Code = "schema-unknown"
)

// Source names where a number came from.
type Source string

// Sources of numbers.
const (
	SourceTrace   Source = "trace"   // the capture's per-call and per-activity records
	SourceProgram Source = "program" // the program's transcript, results JSON or a measurements file
)

// Result is the evaluation of one input.
type Result struct {
	Input       Input
	Claims      []Claim
	Predictions []Prediction
	Exercise    Exercise
	// Reference is the exercise's check against a reference input, where
	// one was given (CheckReference, on results whose paths are already as
	// output names them); nil otherwise.
	Reference   *ReferenceCheck
	Diagnostics []diag.Diagnostic

	// rows are each part's rows (RowKey.Of reads them), per source of
	// numbers (trace first, then program).
	rows []RowSet
	// DeviceCopyGBps is the device-to-device copy bandwidth (bytes read +
	// written per second / 1e9) when known, 0 otherwise.
	DeviceCopyGBps float64
	// DeviceCopyFrom says where DeviceCopyGBps came from; nil with it 0.
	DeviceCopyFrom *DeviceCopyFrom
}

// DeviceCopyFrom says where the device-to-device bandwidth came from: the
// trace's reference copies (Trace), or the program's own figure.
type DeviceCopyFrom struct {
	Source  Source
	Trace   *DeviceCopy
	Program Program
}

// Input describes what was evaluated.
type Input struct {
	Path   string
	Format capture.Format
	Files  []string
	GPU    string
	// ProgramSource is the program numbers' own note of their origin.
	ProgramSource string
	// Thread is the program's thread the trace was read from; nil where
	// the input has no trace.
	Thread *vocab.Thread
	// SetAside are the files beside the capture that are not its program's
	// output and were left out, each also named by a sibling-set-aside
	// warning.
	SetAside []capture.SetAside
}

// Claim is one checkable statement and its verdict.
type Claim struct {
	ID         string
	Prediction int
	// Statement says what the claim holds; Unit what Measured counts.
	Statement Words
	Verdict   Verdict
	// Measured is the number Compare tests; nil when unavailable.
	Measured *float64
	// Compare is the claim's test: its relation and bound (for 3.factor
	// the predicted value, set by the source that decided).
	Compare Comparison
	Unit    Words
	// From names the source whose numbers decided the verdict.
	From     Source
	Evidence []Evidence
	Sources  []SourceValue
	// Why says, per source, why the claim is unavailable; nil otherwise.
	Why []SourceWhy
	// Control marks a check that guards the prediction's comparison rather
	// than stating its claim (4.bytes): see Prediction.Unchecked.
	Control bool

	short   Why    // why a control is unavailable, in a few words
	control string // the control's name
}

// SourceValue is one source's answer to a claim.
type SourceValue struct {
	Source   Source
	Verdict  Verdict
	Measured *float64
	// Bound is the bound this source's numbers set (3.factor's predicted
	// value), 0 where it cannot answer.
	Bound float64
	// Why is why the source cannot answer; nil where it can.
	Why Why
}

// Prediction is one of the lesson's four predictions.
type Prediction struct {
	ID      int
	Verdict Verdict
	Claims  []string
	// Unchecked names each control the input could not check and why. The
	// verdict then comes from the claims alone.
	Unchecked []Unchecked
}

// Unchecked is a control the input could not check: its name ("bytes")
// and why, in a few words.
type Unchecked struct {
	Control string
	// Why is why in a few words; where there are none, Whole gives each
	// source's full reason.
	Why   Why
	Whole []SourceWhy
}

// Exercise is the lesson's device-to-host exercise: the pageable/pinned
// ratio at 64 MiB in both directions and where pinning buys more.
type Exercise struct {
	H2DRatio *float64
	D2HRatio *float64
	// Answer is where pinning buys more, "" where unanswered.
	Answer Gain
	// Verdict says whether the input answers the exercise.
	Verdict  vocab.ExerciseVerdict
	From     Source
	Evidence []Evidence
	// Why says, per source, why the exercise is unanswered.
	Why []SourceWhy
}

// CopyRow is one row of part 1 (h2d) or 1b (d2h).
type CopyRow struct {
	From      Source          `json:"from"`      // trace or program
	Direction vocab.Direction `json:"direction"` // h2d or d2h
	Source    vocab.MemKind   `json:"source"`    // host side: pageable or pinned
	Bytes     int64           `json:"bytes"`
	Ms        float64         `json:"ms"` // mean per copy
	GBps      float64         `json:"gbps"`
	// Ratio is pageable ms / pinned ms at this size and direction (the same
	// on both rows of a size); 0 when one side is missing.
	Ratio float64 `json:"ratio"`
	Runs  int     `json:"runs,omitempty"`
	// CorrelationIDs are the timed copies' API correlation ids (trace only).
	CorrelationIDs []int64 `json:"correlationIds,omitempty"`
}

// AsyncRow is one row of part 2.
type AsyncRow struct {
	From         Source        `json:"from"`
	Source       vocab.MemKind `json:"source"` // pageable or pinned
	Bytes        int64         `json:"bytes,omitempty"`
	CallMs       float64       `json:"callMs"`
	CompletionMs float64       `json:"completionMs"`
	Share        float64       `json:"share"` // CallMs / CompletionMs
	Runs         int           `json:"runs,omitempty"`
	// CorrelationIDs are the timed calls' correlation ids (trace only).
	CorrelationIDs []int64 `json:"correlationIds,omitempty"`
}

// KernelRow is one row of part 3.
type KernelRow struct {
	From        Source          `json:"from"`
	Variant     vocab.Variant   `json:"variant"` // device-resident or zero-copy
	Bytes       int64           `json:"bytes"`   // read + written per launch
	BytesFrom   KernelBytesFrom `json:"-"`       // report words it as bytesFrom
	MsPerLaunch float64         `json:"msPerLaunch"`
	GBps        float64         `json:"gbps"`
	Runs        int             `json:"runs,omitempty"`
	// CorrelationIDs are the timed launches' correlation ids (trace only).
	CorrelationIDs []int64 `json:"correlationIds,omitempty"`
}

// CallDurations are prediction 4's per-call durations of the two groups of
// timed cudaMemcpyAsync calls, in milliseconds, in call order.
type CallDurations struct {
	From       Source    `json:"from"`
	PageableMs []float64 `json:"pageableMs"`
	PinnedMs   []float64 `json:"pinnedMs"`
	// Correlation ids of the calls, in the same order (trace only).
	PageableCorrelationIDs []int64 `json:"pageableCorrelationIds,omitempty"`
	PinnedCorrelationIDs   []int64 `json:"pinnedCorrelationIds,omitempty"`
}

// AllHeld reports whether every prediction held.
func (r *Result) AllHeld() bool {
	if len(r.Predictions) == 0 {
		return false
	}
	for _, p := range r.Predictions {
		if p.Verdict != Held {
			return false
		}
	}
	return true
}

// Claim returns the claim with the given id, or nil.
func (r *Result) Claim(id string) *Claim {
	for i := range r.Claims {
		if r.Claims[i].ID == id {
			return &r.Claims[i]
		}
	}
	return nil
}

// API names.
const (
	apiMemcpy       = "cudaMemcpy"
	apiMemcpyAsync  = "cudaMemcpyAsync"
	apiStreamSync   = "cudaStreamSynchronize"
	apiLaunchKernel = "cudaLaunchKernel"
	apiDeviceSync   = "cudaDeviceSynchronize"
)

// Name is a short name for the input: its folder and file, or its format
// when it has no path.
func (r *Result) Name() string {
	if r.Input.Path == "" {
		return string(r.Input.Format)
	}
	dir := filepath.Base(filepath.Dir(r.Input.Path))
	if dir == "." || dir == string(filepath.Separator) {
		return filepath.Base(r.Input.Path)
	}
	return dir + "/" + filepath.Base(r.Input.Path)
}

// Evidence is one line of where a claim's numbers came from: the source
// that gave them, the export table or CSV report (Table) or the program's
// numbers file (File) they were read from, the groups of records behind
// the line (Records), and what the line says (Fact).
type Evidence struct {
	Source  Source
	Table   string
	File    string
	Records []Records
	Fact    Fact
}

// Records is one group of records an evidence line's numbers came from:
// the data rows of a CSV report, else a span of correlation ids.
type Records struct {
	// Group names the group.
	Group GroupKey
	// Table is the export table or CSV report file that holds the records.
	Table string
	// Rows is the span of data rows (1 = the first row after the header)
	// where the input is a CSV report; Corr the span of correlation ids
	// otherwise. At most one is set.
	Rows *Span
	Corr *Span
	// Count is how many records the group holds.
	Count int
}

// Span is a first and last number, both included.
type Span struct {
	First int64
	Last  int64
}
