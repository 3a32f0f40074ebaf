package nsysdb

import (
	"strings"

	"github.com/nsyscheck/nsyscheck/vocab"
)

// Enum value names nsyscheck looks up by name.
const (
	EventPushPopRange = "NvtxPushPopRange"                 // ENUM_NSYS_EVENT_TYPE
	MemKindPinned     = "CUDA_MEMOPR_MEMORY_KIND_PINNED"   // ENUM_CUDA_MEM_KIND
	MemKindDevice     = "CUDA_MEMOPR_MEMORY_KIND_DEVICE"   // ENUM_CUDA_MEM_KIND
	MemKindPageable   = "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE" // ENUM_CUDA_MEM_KIND
	CopyOperHtoD      = "CUDA_MEMCPY_KIND_HTOD"            // ENUM_CUDA_MEMCPY_OPER
	CopyOperDtoH      = "CUDA_MEMCPY_KIND_DTOH"            // ENUM_CUDA_MEMCPY_OPER
	CopyOperDtoD      = "CUDA_MEMCPY_KIND_DTOD"            // ENUM_CUDA_MEMCPY_OPER
	copyOperPrefix    = "CUDA_MEMCPY_KIND_"
	memKindPrefix     = "CUDA_MEMOPR_MEMORY_KIND_"
)

// CopyKindOf maps an ENUM_CUDA_MEMCPY_OPER name (CUDA_MEMCPY_KIND_HTOD, ...)
// to a copy kind.
func CopyKindOf(enumName string) vocab.CopyKind {
	switch strings.TrimPrefix(strings.ToUpper(enumName), copyOperPrefix) {
	case "HTOD":
		return vocab.CopyHtoD
	case "DTOH":
		return vocab.CopyDtoH
	case "DTOD":
		return vocab.CopyDtoD
	case "HTOH":
		return vocab.CopyHtoH
	case "PTOP":
		return vocab.CopyPtoP
	case "UNKNOWN", "":
		return vocab.CopyUnknown
	}
	return vocab.CopyOther
}

// MemKindOf maps an ENUM_CUDA_MEM_KIND name (CUDA_MEMOPR_MEMORY_KIND_PINNED,
// ...) to a memory kind.
func MemKindOf(enumName string) vocab.MemKind {
	switch strings.TrimPrefix(strings.ToUpper(enumName), memKindPrefix) {
	case "PAGEABLE":
		return vocab.MemPageable
	case "PINNED":
		return vocab.MemPinned
	case "DEVICE", "DEVICE_STATIC":
		return vocab.MemDevice
	case "ARRAY":
		return vocab.MemArray
	case "MANAGED", "MANAGED_STATIC":
		return vocab.MemManaged
	}
	return vocab.MemUnknown
}

// ReportRowKind says what one row of cuda_gpu_trace (2022: gputrace)
// records, by its Name column: a memset ("[CUDA memset]"), a copy ("[CUDA
// memcpy Host-to-Device]", 2022's "[CUDA memcpy HtoD]") or, for any other
// name, a kernel launch.
func ReportRowKind(name string) (copy, memset bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	switch {
	case strings.HasPrefix(n, "[cuda memset"):
		return false, true
	case strings.HasPrefix(n, "[cuda memcpy"), strings.HasPrefix(n, "[cuda "):
		return true, false
	}
	return false, false
}

// ReportCopyKindOf maps the operation column of the cuda_gpu_mem_*_sum
// reports ("[CUDA memcpy Host-to-Device]", 2022's "[CUDA memcpy HtoD]") to a
// copy kind; ok is false for rows that are not copies (memsets).
func ReportCopyKindOf(op string) (kind vocab.CopyKind, ok bool) {
	o := strings.ToLower(op)
	switch {
	case strings.Contains(o, "memset"):
		return "", false
	case strings.Contains(o, "host-to-device"), strings.Contains(o, "htod"):
		return vocab.CopyHtoD, true
	case strings.Contains(o, "device-to-host"), strings.Contains(o, "dtoh"):
		return vocab.CopyDtoH, true
	case strings.Contains(o, "device-to-device"), strings.Contains(o, "dtod"):
		return vocab.CopyDtoD, true
	case strings.Contains(o, "host-to-host"), strings.Contains(o, "htoh"):
		return vocab.CopyHtoH, true
	case strings.Contains(o, "peer-to-peer"), strings.Contains(o, "ptop"):
		return vocab.CopyPtoP, true
	}
	return vocab.CopyOther, true
}
