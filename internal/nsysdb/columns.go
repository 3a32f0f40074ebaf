package nsysdb

import "strings"

// Columns of the export's tables that nsyscheck reads or rewrites.
const (
	ColID            = "id"            // StringIds, ENUM_*, TARGET_INFO_GPU
	ColValue         = "value"         // StringIds, META_DATA_*, TARGET_INFO_SYSTEM_ENV
	ColName          = "name"          // ENUM_*, META_DATA_*, TARGET_INFO_*, PROCESSES
	ColPID           = "pid"           // PROCESSES
	ColGlobalTid     = "globalTid"     // activity and thread tables (SplitGlobalID)
	ColGlobalPid     = "globalPid"     // activity tables (SplitGlobalID)
	ColNameID        = "nameId"        // CUPTI_ACTIVITY_KIND_RUNTIME, ThreadNames -> StringIds
	ColStart         = "start"         // ns on the capture's clock
	ColEnd           = "end"           // ns on the capture's clock
	ColReturnValue   = "returnValue"   // CUPTI_ACTIVITY_KIND_RUNTIME
	ColCorrelationID = "correlationId" // API call <-> GPU activity
	ColBytes         = "bytes"         // CUPTI_ACTIVITY_KIND_MEMCPY
	ColCopyKind      = "copyKind"      // CUPTI_ACTIVITY_KIND_MEMCPY -> ENUM_CUDA_MEMCPY_OPER
	ColSrcKind       = "srcKind"       // CUPTI_ACTIVITY_KIND_MEMCPY -> ENUM_CUDA_MEM_KIND
	ColDstKind       = "dstKind"       // CUPTI_ACTIVITY_KIND_MEMCPY -> ENUM_CUDA_MEM_KIND
	ColStreamID      = "streamId"      // GPU activity
	ColDeviceID      = "deviceId"      // GPU activity
	ColContextID     = "contextId"     // GPU activity, TARGET_INFO_CUDA_CONTEXT_INFO
	ColProcessID     = "processId"     // TARGET_INFO_CUDA_CONTEXT_INFO: the pid of a context's process
	ColStreamFlag    = "flag"          // TARGET_INFO_CUDA_STREAM -> ENUM_CUPTI_STREAM_TYPE
	ColHwID          = "hwId"          // TARGET_INFO_CUDA_CONTEXT_INFO: the hardware id of a context's host (HostExprs)
	ColVMID          = "vmId"          // TARGET_INFO_CUDA_CONTEXT_INFO: the VM id of a context's host (HostExprs)
	ColShortName     = "shortName"     // CUPTI_ACTIVITY_KIND_KERNEL -> StringIds
	ColDomainID      = "domainId"      // NVTX_EVENTS
	ColText          = "text"          // NVTX_EVENTS, inline name
	ColTextID        = "textId"        // NVTX_EVENTS -> StringIds
	ColEventType     = "eventType"     // NVTX_EVENTS -> ENUM_NSYS_EVENT_TYPE
	ColCUDAID        = "cudaId"        // TARGET_INFO_CUDA_DEVICE
	ColGPUID         = "gpuId"         // TARGET_INFO_CUDA_DEVICE
	ColCUDADevice    = "cuDevice"      // TARGET_INFO_GPU
	ColDuration      = "duration"      // ANALYSIS_DETAILS: the trace's duration in ns
	ColUTCEpochNs    = "utcEpochNs"    // TARGET_INFO_SESSION_START_TIME: the session's start, ns since 1970 (UTC)
	ColStopTime      = "stopTime"      // ANALYSIS_DETAILS: the trace's stop on its clock (ns)
	ColSyncType      = "syncType"      // CUPTI_ACTIVITY_KIND_SYNCHRONIZATION
	ColOldSyncType   = "deprecatedSyncType"
	ColEventID       = "eventId"        // CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, _CUDA_EVENT
	ColEventSyncID   = "eventSyncId"    // ties an event sync to the recording it waited for
	ColGraphID       = "graphId"        // CUPTI_ACTIVITY_KIND_GRAPH_TRACE
	ColGraphNodeID   = "graphNodeId"    // GPU activity run as a graph node
	ColMigration     = "migrationCause" // CUPTI_ACTIVITY_KIND_MEMCPY -> ENUM_CUDA_UNIF_MEM_MIGRATION
	ColTimestamp     = "timestamp"      // DIAGNOSTIC_EVENT
	ColSeverity      = "severity"       // DIAGNOSTIC_EVENT -> ENUM_DIAGNOSTIC_SEVERITY_LEVEL
	ColSource        = "source"         // DIAGNOSTIC_EVENT -> ENUM_DIAGNOSTIC_SOURCE_TYPE
)

// Cols quotes and joins column names for a SELECT list.
func Cols(names ...string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = QuoteIdent(n)
	}
	return strings.Join(q, ", ")
}

// IsTextColumn reports whether nsys writes the column as text (a string, a
// name, an NVTX range's inline text); every other column nsyscheck reads
// holds integers.
func IsTextColumn(name string) bool {
	return name == ColValue || name == ColName || name == ColText
}
