// Package vocab is the one typed vocabulary the capture model, the
// predictions and the reports share: the direction of a copy, the kind of
// memory on each side, which host buffer a lesson copy uses, the kernel
// variants of prediction 3 and the verdicts. Each word is spelled once here;
// its string form is what the JSON output and the reports print.
package vocab

// CopyKind is the direction of a memory copy as a GPU trace records it,
// normalised across nsys releases ("[CUDA memcpy HtoD]", "[CUDA memcpy
// Host-to-Device]", ENUM_CUDA_MEMCPY_OPER: nsysdb maps each).
type CopyKind string

// Copy kinds.
const (
	CopyHtoD    CopyKind = "HtoD"
	CopyDtoH    CopyKind = "DtoH"
	CopyDtoD    CopyKind = "DtoD"
	CopyHtoH    CopyKind = "HtoH"
	CopyPtoP    CopyKind = "PtoP"
	CopyOther   CopyKind = "other" // array, unified-memory and other kinds
	CopyUnknown CopyKind = "unknown"
)

// MemKind is the kind of memory on one side of a copy (ENUM_CUDA_MEM_KIND).
// MemPageable and MemPinned also name a lesson copy's host buffer.
type MemKind string

// Memory kinds.
const (
	MemPageable MemKind = "pageable"
	MemPinned   MemKind = "pinned"
	MemDevice   MemKind = "device"
	MemArray    MemKind = "array"
	MemManaged  MemKind = "managed"
	MemUnknown  MemKind = "unknown"
	MemNone     MemKind = "none" // no host side: a device-to-device or peer copy
)

// Direction is a lesson copy's direction, as the program and the reports
// name it.
type Direction string

// Directions of the lesson's host/device copies.
const (
	H2D Direction = "h2d"
	D2H Direction = "d2h"
)

// Variant is one of prediction 3's kernels.
type Variant string

// Kernel variants.
const (
	ZeroCopy       Variant = "zero-copy"
	DeviceResident Variant = "device-resident"
)

// Verdict is the outcome of one claim or prediction.
type Verdict string

// Verdicts.
const (
	Held        Verdict = "held"
	Died        Verdict = "died"
	Unavailable Verdict = "unavailable"
)

// Thread is one thread of the profiled application: its process id and
// its thread id, as the trace records them.
type Thread struct {
	PID, TID int64
}

// ExerciseVerdict is the outcome of the lesson's exercise: answered, or
// unavailable where the input cannot answer it.
type ExerciseVerdict string

// Exercise verdicts.
const (
	Answered   ExerciseVerdict = "answered"
	Unanswered ExerciseVerdict = "unavailable"
)
