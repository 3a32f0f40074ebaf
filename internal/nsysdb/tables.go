package nsysdb

import (
	"sort"
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
	TableCUDAStream    = "TARGET_INFO_CUDA_STREAM"        // the streams the program made
	TableCUDAContext   = "TARGET_INFO_CUDA_CONTEXT_INFO"  // the contexts the program made, each on its device
	TableSessionStart  = "TARGET_INFO_SESSION_START_TIME" // the wall-clock time the capture's session started
)

// NoStream is the stream id nsys writes for a record of no stream (an
// event or context synchronisation): 2^32-1.
const NoStream = 4294967295

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

// NewerSchema reports whether an export's schema version (EXPORT_SCHEMA_VERSION,
// "MAJOR.MINOR.MICRO") is of a newer major version than KnownSchema; one
// that cannot be read is not.
func NewerSchema(version string) bool {
	major := func(v string) int {
		n, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(v, ".", 2)[0]))
		if err != nil {
			return -1
		}
		return n
	}
	return major(version) > major(KnownSchema)
}

// ReadableSchema reports whether an export's schema version is written as
// nsys writes it: MAJOR.MINOR.MICRO, three unsigned decimal numbers.
func ReadableSchema(version string) bool {
	parts := strings.Split(version, ".")
	if len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}

// ExportHint tells the user how to make a fresh SQLite export.
const ExportHint = "export it again with: nsys export --type sqlite -o FILE.sqlite REPORT.nsys-rep"

// ResolveTables maps each logical name to the table in names that is either
// that name (version 1) or that name with the highest _V<n> suffix. A
// logical name with no such table is absent from the map. It looks at names
// only; a reader of the data resolves through Resolve, which also asks
// which of them holds rows.
func ResolveTables(names []string, logical ...string) map[string]string {
	out := make(map[string]string, len(logical))
	for _, base := range logical {
		if vs := Versions(names, base); len(vs) > 0 {
			out[base] = vs[0]
		}
	}
	return out
}

// Versions lists the names among names that stand for the logical table:
// the name itself (version 1) and NAME_V<n> (n >= 1, written in plain
// digits), the highest version first.
func Versions(names []string, logical string) []string {
	type version struct {
		name string
		v    int
	}
	var vs []version
	for _, n := range names {
		switch {
		case n == logical:
			vs = append(vs, version{n, 1})
		case strings.HasPrefix(n, logical+"_V"):
			digits := n[len(logical)+2:]
			k, err := strconv.Atoi(digits)
			if err != nil || k < 1 || strings.TrimLeft(digits, "0123456789") != "" {
				continue
			}
			vs = append(vs, version{n, k})
		}
	}
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].v > vs[j].v })
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.name
	}
	return out
}

// SchemaObject is one entry of an SQLite file's schema (sqlite_schema): a
// table, a view, an index or a trigger, with the SQL that made it.
type SchemaObject struct {
	Name, Type, SQL string
}

// TableError says why a logical table cannot be read from a file: the name
// of the table (or view) in the file, and what is wrong with it.
type TableError struct {
	Table   string
	Problem string
}

func (e *TableError) Error() string { return "table " + e.Table + ": " + e.Problem }

// Resolve maps each logical name to the table of the file (objs, its
// schema) that holds that table's data: of the tables standing for it
// (Versions), the highest version that holds a row (hasRows answers), else
// the highest of them. A logical name with no table is absent from the map.
//
// nsys writes one plain table of each kind, so anything else bearing one of
// those names is refused with a *TableError: a view (which runs any query,
// a recursive one without end) or a virtual table, and two versions of one
// table that both hold rows (two exports merged, or an edited file: which
// one holds the capture is unclear).
func Resolve(objs []SchemaObject, hasRows func(table string) (bool, error), logical ...string) (map[string]string, error) {
	kinds := make(map[string]SchemaObject, len(objs))
	names := make([]string, 0, len(objs))
	for _, o := range objs {
		if o.Type != "table" && o.Type != "view" {
			continue
		}
		kinds[o.Name] = o
		names = append(names, o.Name)
	}
	out := make(map[string]string, len(logical))
	for _, base := range logical {
		vs := Versions(names, base)
		for _, n := range vs {
			if p := notPlainTable(kinds[n]); p != "" {
				return nil, &TableError{Table: n, Problem: p}
			}
		}
		switch len(vs) {
		case 0:
			continue
		case 1:
			out[base] = vs[0]
			continue
		}
		var full []string
		for _, n := range vs {
			ok, err := hasRows(n)
			if err != nil {
				return nil, &TableError{Table: n, Problem: "cannot read the table: " + err.Error()}
			}
			if ok {
				full = append(full, n)
			}
		}
		switch len(full) {
		case 0:
			out[base] = vs[0]
		case 1:
			out[base] = full[0]
		default:
			return nil, &TableError{Table: full[0], Problem: "both " + strings.Join(full, " and ") +
				" hold rows, where an export has one table of each kind: two exports were merged, or the file was edited, so which one holds the capture is unclear"}
		}
	}
	return out, nil
}

// notPlainTable says why a schema entry is not a table as nsys writes one,
// "" when it is.
func notPlainTable(o SchemaObject) string {
	sql := strings.ToUpper(strings.Join(strings.Fields(o.SQL), " "))
	switch {
	case o.Type == "view":
		return "a view, not a table: nsys exports tables only, and a view runs whatever query it holds (the file was edited)"
	case strings.HasPrefix(sql, "CREATE VIRTUAL TABLE"):
		return "a virtual table, not a table nsys writes (the file was edited)"
	}
	return ""
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

// ProcessOf decodes the process part of nsys's global id: its host (bits
// 48..63: hardware and VM) and its pid, so that processes of one pid on
// two hosts differ.
func ProcessOf(g int64) int64 { return g >> 24 }

// ProcessExpr is the SQL expression that decodes the process part of the
// global id in column expr, the same decoding as ProcessOf.
func ProcessExpr(expr string) string {
	return "(" + expr + " >> 24)"
}

// HostExprs are the SQL expressions that decode the host parts of the
// global id in column expr: its hardware id (bits 56..63) and its VM id
// (bits 48..55), as TARGET_INFO_CUDA_CONTEXT_INFO's hwId and vmId name a
// context's host.
func HostExprs(expr string) (hw, vm string) {
	return "((" + expr + " >> 56) & 255)", "((" + expr + " >> 48) & 255)"
}

// HostIDs decodes the hardware and VM ids from global id g, the same
// decoding as HostExprs.
func HostIDs(g int64) (hw, vm int64) { return (g >> 56) & 255, (g >> 48) & 255 }

// TIDExpr is the SQL expression that decodes the tid from the global id in
// column expr, the same decoding as SplitGlobalID.
func TIDExpr(expr string) string {
	return "(" + expr + " & 16777215)"
}
