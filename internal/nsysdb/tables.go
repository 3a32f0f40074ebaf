package nsysdb

import (
	"strconv"
	"strings"
)

// Logical names of the SQLite export's tables. Newer exports may name a
// table with a _V2, _V3, ... suffix; ResolveTables picks the highest.
const (
	TableRuntime       = "CUPTI_ACTIVITY_KIND_RUNTIME"
	TableDriver        = "CUPTI_ACTIVITY_KIND_DRIVER"
	TableMemcpy        = "CUPTI_ACTIVITY_KIND_MEMCPY"
	TableKernel        = "CUPTI_ACTIVITY_KIND_KERNEL"
	TableNVTX          = "NVTX_EVENTS"
	TableStrings       = "StringIds"
	TableCopyOper      = "ENUM_CUDA_MEMCPY_OPER"
	TableMemKind       = "ENUM_CUDA_MEM_KIND"
	TableEventType     = "ENUM_NSYS_EVENT_TYPE"
	TableMetaExport    = "META_DATA_EXPORT"
	TableMetaCapture   = "META_DATA_CAPTURE"
	TableGPU           = "TARGET_INFO_GPU"
	TableCUDADevice    = "TARGET_INFO_CUDA_DEVICE"
	TableSystemEnv     = "TARGET_INFO_SYSTEM_ENV"
	TableThreadNames   = "ThreadNames"
	TableProcesses     = "PROCESSES"
	TableSchemaListing = "sqlite_master"
	TableMemset        = "CUPTI_ACTIVITY_KIND_MEMSET" // memsets, counted apart from copies
	TableAnalysis      = "ANALYSIS_DETAILS"           // the trace's duration
	TableSync          = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"
	TableCUDAEvent     = "CUPTI_ACTIVITY_KIND_CUDA_EVENT"  // event records: which stream recorded an event
	TableGraphTrace    = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE" // whole graph launches (--cuda-graph-trace=graph)
	TableDiagnostic    = "DIAGNOSTIC_EVENT"                // what nsys says about its own capture
	TableSyncType      = "ENUM_CUPTI_SYNC_TYPE"
	TableDiagSeverity  = "ENUM_DIAGNOSTIC_SEVERITY_LEVEL"
	TableDiagSource    = "ENUM_DIAGNOSTIC_SOURCE_TYPE"
	TableMigration     = "ENUM_CUDA_UNIF_MEM_MIGRATION"
)

// Rows of META_DATA_CAPTURE that say what nsys was asked to trace. The
// per-process options are written PROCESS_<n>:<option>, so they are matched
// by their suffix.
const (
	CaptureCUDATrace  = ":COLLECT_CUDA_TRACE"            // "true" or "false"
	CaptureNVTXTrace  = ":COLLECT_NVTX_TRACE"            // "true" or "false"
	CaptureOSRTTrace  = ":COLLECT_OSRT_TRACE"            // "true" or "false"
	CaptureGraphTrace = ":CUDA_GRAPH_TRACE_OPTIONS:MODE" // "Graph" or "Node"
	CaptureBacktrace  = "SHOW_BACKTRACE"                 // "true" or "false"
	CaptureGPUFaults  = ":COLLECT_UVM_GPU_PAGE_FAULTS"   // "true" or "false" (--cuda-um-gpu-page-faults)
	CaptureCPUFaults  = ":COLLECT_UVM_CPU_PAGE_FAULTS"   // "true" or "false" (--cuda-um-cpu-page-faults)
)

// Rows of the (name, value) metadata tables that nsyscheck reads.
const (
	MetaProductVersion = "EXPORT_PRODUCT_VERSION"  // META_DATA_EXPORT
	MetaSchemaVersion  = "EXPORT_SCHEMA_VERSION"   // META_DATA_EXPORT
	MetaInputFile      = "EXPORT_PARAM_INPUT_FILE" // META_DATA_EXPORT: the report exported
	EnvDriver          = "NvDriverVersion"         // TARGET_INFO_SYSTEM_ENV
	EnvCUDADriver      = "CudaDriverVersion"       // TARGET_INFO_SYSTEM_ENV
	EnvOS              = "OsDescription"           // TARGET_INFO_SYSTEM_ENV
	EnvDevice          = "DeviceEnvironment"       // TARGET_INFO_SYSTEM_ENV: the environment block
	CaptureCommand     = "PROCESS_0:COMMAND"       // META_DATA_CAPTURE: the profiled command
)

// KnownSchema is the export schema version of the Nsight Systems release
// whose exports nsyscheck is tested against.
const KnownSchema = "3.20.3"

// ExportHint tells the user how to make a fresh SQLite export.
const ExportHint = "export it again with: nsys export --type sqlite -o FILE.sqlite REPORT.nsys-rep"

// ResolveTables maps each logical name to the table in names that is either
// that name (version 1) or that name with the highest _V<n> suffix. A
// logical name with no such table is absent from the map.
func ResolveTables(names []string, logical ...string) map[string]string {
	out := make(map[string]string, len(logical))
	best := make(map[string]int, len(logical))
	for _, base := range logical {
		for _, n := range names {
			v := 0
			switch {
			case n == base:
				v = 1
			case strings.HasPrefix(n, base+"_V"):
				k, err := strconv.Atoi(n[len(base)+2:])
				if err != nil || k < 1 || strings.HasPrefix(n[len(base)+2:], "+") {
					continue
				}
				v = k
			default:
				continue
			}
			if v > best[base] {
				best[base], out[base] = v, n
			}
		}
	}
	return out
}

// SplitGlobalID decodes nsys's global thread or process id (globalTid,
// globalPid): pid in bits 24..47, tid in bits 0..23.
func SplitGlobalID(g int64) (pid, tid int64) {
	return (g >> 24) & 0xFFFFFF, g & 0xFFFFFF
}

// PIDExpr is the SQL expression that decodes the pid from the global id in
// column expr, the same decoding as SplitGlobalID.
func PIDExpr(expr string) string {
	return "((" + expr + " >> 24) & 16777215)"
}

// TIDExpr is the SQL expression that decodes the tid from the global id in
// column expr, the same decoding as SplitGlobalID.
func TIDExpr(expr string) string {
	return "(" + expr + " & 16777215)"
}
