package nsysdb

// ReportColumn is one column of an `nsys stats` CSV report: the key the
// reader uses for it, the header spellings (lower-cased, units and
// punctuation dropped) that mean it across nsys releases, and whether its
// unit is a time to convert to ns.
type ReportColumn struct {
	Field    string   // the canonical key, used in struct tags
	Aliases  []string // normalised header keys that mean this column
	Required bool
	Time     bool   // a time: the header's unit is converted to ns
	Display  string // the header as nsys 2025.3 writes it, for messages
}

// APITraceColumns are the cuda_api_trace columns nsyscheck reads.
var APITraceColumns = []ReportColumn{
	{Field: "start", Aliases: []string{"start"}, Required: true, Time: true, Display: "Start (ns)"},
	{Field: "duration", Aliases: []string{"duration"}, Required: true, Time: true, Display: "Duration (ns)"},
	{Field: "name", Aliases: []string{"name"}, Required: true, Display: "Name"},
	{Field: "result", Aliases: []string{"result"}, Display: "Result"},
	{Field: "corrid", Aliases: []string{"corrid", "correlationid"}, Required: true, Display: "CorrID"},
	{Field: "pid", Aliases: []string{"pid", "processid"}, Display: "Pid"},
	{Field: "tid", Aliases: []string{"tid", "threadid"}, Display: "Tid"},
	{Field: "thread", Aliases: []string{"threadname", "thread"}, Display: "Thread Name"},
}

// APISumColumns are the cuda_api_sum columns nsyscheck reads.
var APISumColumns = []ReportColumn{
	{Field: "total", Aliases: []string{"totaltime"}, Required: true, Time: true, Display: "Total Time (ns)"},
	{Field: "calls", Aliases: []string{"numcalls", "calls", "count"}, Required: true, Display: "Num Calls"},
	{Field: "min", Aliases: []string{"min", "minimum"}, Time: true, Display: "Min (ns)"},
	{Field: "max", Aliases: []string{"max", "maximum"}, Time: true, Display: "Max (ns)"},
	{Field: "name", Aliases: []string{"name"}, Required: true, Display: "Name"},
}

// MemTimeColumns are the cuda_gpu_mem_time_sum columns nsyscheck reads.
var MemTimeColumns = []ReportColumn{
	{Field: "total", Aliases: []string{"totaltime"}, Required: true, Time: true, Display: "Total Time (ns)"},
	{Field: "count", Aliases: []string{"count", "operations", "numcalls"}, Required: true, Display: "Count"},
	{Field: "op", Aliases: []string{"operation", "name"}, Required: true, Display: "Operation"},
}

// MemSizeColumns are the cuda_gpu_mem_size_sum columns nsyscheck reads.
var MemSizeColumns = []ReportColumn{
	{Field: "total", Aliases: []string{"total"}, Required: true, Display: "Total (MB)"},
	{Field: "count", Aliases: []string{"count", "operations", "numcalls"}, Required: true, Display: "Count"},
	{Field: "op", Aliases: []string{"operation", "name"}, Required: true, Display: "Operation"},
}

// NVTXSumColumns are the nvtx_sum columns nsyscheck reads.
var NVTXSumColumns = []ReportColumn{
	{Field: "total", Aliases: []string{"totaltime"}, Required: true, Time: true, Display: "Total Time (ns)"},
	{Field: "instances", Aliases: []string{"instances", "count"}, Required: true, Display: "Instances"},
	{Field: "range", Aliases: []string{"range", "name"}, Required: true, Display: "Range"},
	{Field: "style", Aliases: []string{"style"}, Display: "Style"},
}

// GPUTraceColumns are the cuda_gpu_trace (2022: gputrace) columns nsyscheck
// reads: one row per GPU copy, memset or kernel.
var GPUTraceColumns = []ReportColumn{
	{Field: "start", Aliases: []string{"start"}, Required: true, Time: true, Display: "Start (ns)"},
	{Field: "duration", Aliases: []string{"duration"}, Required: true, Time: true, Display: "Duration (ns)"},
	{Field: "corrid", Aliases: []string{"corrid", "correlationid"}, Required: true, Display: "CorrId"},
	{Field: "bytes", Aliases: []string{"bytes", "size"}, Display: "Bytes (MB)"},
	{Field: "srckind", Aliases: []string{"srcmemkd", "srcmemkind", "srckind"}, Display: "SrcMemKd"},
	{Field: "dstkind", Aliases: []string{"dstmemkd", "dstmemkind", "dstkind"}, Display: "DstMemKd"},
	{Field: "device", Aliases: []string{"device", "deviceid"}, Display: "Device"},
	{Field: "stream", Aliases: []string{"strm", "stream", "streamid"}, Display: "Strm"},
	{Field: "pid", Aliases: []string{"pid", "processid"}, Display: "Pid"},
	{Field: "name", Aliases: []string{"name"}, Required: true, Display: "Name"},
}

// NVTXTraceColumns are the nvtx_pushpop_trace (2022: nvtxpptrace) columns
// nsyscheck reads: one row per range instance. Without PID and TID no range
// can be placed on a thread.
var NVTXTraceColumns = []ReportColumn{
	{Field: "start", Aliases: []string{"start"}, Required: true, Time: true, Display: "Start (ns)"},
	{Field: "end", Aliases: []string{"end"}, Required: true, Time: true, Display: "End (ns)"},
	{Field: "name", Aliases: []string{"name", "range"}, Required: true, Display: "Name"},
	{Field: "pid", Aliases: []string{"pid", "processid"}, Display: "PID"},
	{Field: "tid", Aliases: []string{"tid", "threadid"}, Display: "TID"},
}

// RuleColumns are the columns of the CSV that NVIDIA's cuda_memcpy_async
// expert rule writes (nsys analyze -r cuda_memcpy_async --format csv): one
// row per asynchronous copy whose host side is pageable.
var RuleColumns = []ReportColumn{
	{Field: "start", Aliases: []string{"start"}, Required: true, Time: true, Display: "Start (ns)"},
	{Field: "duration", Aliases: []string{"duration"}, Required: true, Time: true, Display: "Duration (ns)"},
	{Field: "srckind", Aliases: []string{"srckind", "srcmemkd", "srcmemkind"}, Display: "Src Kind"},
	{Field: "dstkind", Aliases: []string{"dstkind", "dstmemkd", "dstmemkind"}, Display: "Dst Kind"},
	{Field: "bytes", Aliases: []string{"bytes", "size"}, Display: "Bytes (MB)"},
	{Field: "pid", Aliases: []string{"pid", "processid"}, Required: true, Display: "PID"},
	{Field: "api", Aliases: []string{"apiname", "name"}, Display: "API Name"},
}
