package nsysdb

import (
	"sort"
	"strings"

	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// Enum value names nsyscheck looks up by name.
const (
	EventPushPopRange = "NvtxPushPopRange"                 // ENUM_NSYS_EVENT_TYPE
	EventDomainCreate = "NvtxDomainCreate"                 // ENUM_NSYS_EVENT_TYPE
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
	case uvmPrefix + "HTOD":
		return vocab.CopyHtoD
	case uvmPrefix + "DTOH":
		return vocab.CopyDtoH
	case uvmPrefix + "DTOD":
		return vocab.CopyDtoD
	case "UNKNOWN", "":
		return vocab.CopyUnknown
	}
	return vocab.CopyOther
}

// uvmPrefix starts the copy kinds of unified-memory migrations after
// copyOperPrefix (CUDA_MEMCPY_KIND_UVM_HTOD, _DTOH, _DTOD).
const uvmPrefix = "UVM_"

// IsMigrationKind reports whether an ENUM_CUDA_MEMCPY_OPER name is a
// unified-memory migration ("Unified Host-to-Device", ...): the driver
// moving managed pages, not a copy the program asked for. CopyKindOf gives
// its direction.
func IsMigrationKind(enumName string) bool {
	return strings.HasPrefix(strings.TrimPrefix(strings.ToUpper(enumName), copyOperPrefix), uvmPrefix)
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

// SyncKindOfCall tells what a CUPTI_ACTIVITY_KIND_SYNCHRONIZATION record
// waited for from the API call that made it (name without its _vNNNN
// suffix); ok is false for a call that does not say.
//
// The call decides, not the record's syncType column: in the exports of
// nsys 2025.3 the rows of cudaStreamSynchronize carry syncType 2, which
// ENUM_CUPTI_SYNC_TYPE names STREAM_WAIT_EVENT, and those of
// cudaEventSynchronize and cudaEventQuery carry 1 (EVENT_SYNCHRONIZE); the
// column is off by one from the enum past 1, and deprecatedSyncType, which
// would reference the enum, is empty.
func SyncKindOfCall(name string) (k records.SyncKind, ok bool) {
	k, ok = syncCalls[name]
	return k, ok
}

// syncCalls are the calls that synchronise, and what each waits for.
var syncCalls = map[string]records.SyncKind{
	"cudaEventSynchronize": records.SyncEvent, "cudaEventQuery": records.SyncEvent,
	"cuEventSynchronize": records.SyncEvent, "cuEventQuery": records.SyncEvent,
	"cudaStreamWaitEvent": records.SyncStreamWait, "cuStreamWaitEvent": records.SyncStreamWait,
	"cudaStreamSynchronize": records.SyncStream, "cudaStreamQuery": records.SyncStream,
	"cuStreamSynchronize": records.SyncStream, "cuStreamQuery": records.SyncStream,
	"cudaDeviceSynchronize": records.SyncContext, "cudaThreadSynchronize": records.SyncContext,
	"cuCtxSynchronize": records.SyncContext,
}

// SyncAPIs lists the calls SyncKindOfCall knows, in order.
func SyncAPIs() []string {
	out := make([]string, 0, len(syncCalls))
	for n := range syncCalls {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// SyncKindOfColumn tells a synchronisation record's kind from its syncType
// column where no call says (SyncKindOfCall): as nsys 2025.3 writes the
// column, 1 is an event sync and 2 a stream sync; other values are not
// seen in real exports and stay unknown.
func SyncKindOfColumn(v int64) records.SyncKind {
	switch v {
	case 1:
		return records.SyncEvent
	case 2:
		return records.SyncStream
	}
	return records.SyncUnknown
}

// SyncKindOfEnum maps an ENUM_CUPTI_SYNC_TYPE name to a kind, for the
// deprecatedSyncType column older exports fill and which references the
// enum.
func SyncKindOfEnum(enumName string) records.SyncKind {
	switch strings.TrimPrefix(enumName, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_") {
	case "EVENT_SYNCHRONIZE":
		return records.SyncEvent
	case "STREAM_WAIT_EVENT":
		return records.SyncStreamWait
	case "STREAM_SYNCHRONIZE":
		return records.SyncStream
	case "CONTEXT_SYNCHRONIZE":
		return records.SyncContext
	}
	return records.SyncUnknown
}

// SeverityOf maps an ENUM_DIAGNOSTIC_SEVERITY_LEVEL name (Info, Warning,
// Error, Verbose) to its level.
func SeverityOf(enumName string) records.Severity {
	switch strings.ToLower(enumName) {
	case "info":
		return records.SeverityInfo
	case "warning":
		return records.SeverityWarning
	case "error":
		return records.SeverityError
	case "verbose":
		return records.SeverityVerbose
	}
	return records.SeverityUnknown
}

// ReportMigration reports whether a cuda_gpu_trace row's name ("[CUDA
// memcpy Unified Host-to-Device]") is a unified-memory migration, which
// the report gives without its cause.
func ReportMigration(name string) bool {
	n := strings.ToLower(name)
	return strings.HasPrefix(n, "[cuda memcpy unified ") || strings.HasPrefix(n, "[cuda unified memory")
}

// MigrationOf names the cause of a unified-memory migration from its
// ENUM_CUDA_UNIF_MEM_MIGRATION name: "prefetch" (the user's), "fault",
// "speculative", "eviction", "access-counters", or "unknown".
func MigrationOf(enumName string) string {
	switch strings.TrimPrefix(enumName, "CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_") {
	case "USER":
		return "prefetch"
	case "COHERENCE":
		return "fault"
	case "PREFETCH":
		return "speculative"
	case "EVICTION":
		return "eviction"
	case "ACCESS_COUNTERS":
		return "access-counters"
	}
	return "unknown"
}
