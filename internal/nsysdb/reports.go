package nsysdb

import "strings"

// The `nsys stats` reports nsyscheck reads, by their current names.
const (
	ReportAPITrace   = "cuda_api_trace"
	ReportAPISum     = "cuda_api_sum"
	ReportMemTimeSum = "cuda_gpu_mem_time_sum"
	ReportMemSizeSum = "cuda_gpu_mem_size_sum"
	ReportNVTXSum    = "nvtx_sum"
	// The per-record reports: one row per GPU copy, memset or kernel with
	// its API call's CorrId; one row per NVTX push/pop range instance.
	ReportGPUTrace  = "cuda_gpu_trace"
	ReportNVTXTrace = "nvtx_pushpop_trace"
)

// TraceReportsCommand is the nsys command that makes the per-record reports
// the audit reads beside cuda_api_trace, for messages.
const TraceReportsCommand = "nsys stats --report " + ReportAPITrace + "," + ReportGPUTrace + "," + ReportNVTXTrace +
	" --format csv --output BASE REPORT.nsys-rep"

// Report is one `nsys stats` report with the names of both generations.
type Report struct {
	Key   string   // the current report name
	Names []string // every report name that maps to it, newest first
}

// Reports are the reports nsyscheck reads, with their 2022-era names
// (before about 2023.1) beside the current ones.
var Reports = []Report{
	{ReportAPITrace, []string{ReportAPITrace, "cudaapitrace"}},
	{ReportAPISum, []string{ReportAPISum, "cudaapisum"}},
	{ReportMemTimeSum, []string{ReportMemTimeSum, "gpumemtimesum"}},
	{ReportMemSizeSum, []string{ReportMemSizeSum, "gpumemsizesum"}},
	{ReportNVTXSum, []string{ReportNVTXSum, "nvtxsum"}},
	{ReportGPUTrace, []string{ReportGPUTrace, "gputrace"}},
	{ReportNVTXTrace, []string{ReportNVTXTrace, "nvtxpptrace"}},
}

// optionalReports are taken where an nsys lists them and left out
// otherwise: the SQLite export holds the same records.
var optionalReports = map[string]bool{ReportGPUTrace: true, ReportNVTXTrace: true}

// ReportSuffixes lists the accepted file-name suffixes, for messages.
func ReportSuffixes() string {
	var s []string
	for _, r := range Reports {
		for _, n := range r.Names {
			s = append(s, "_"+n+".csv")
		}
	}
	return strings.Join(s, ", ")
}

// MatchReport returns the report key and base name of a file name such as
// "ref_cuda_api_trace.csv", or ok false.
func MatchReport(file string) (key, base string, ok bool) {
	if !strings.HasSuffix(strings.ToLower(file), ".csv") {
		return "", "", false
	}
	stem := file[:len(file)-len(".csv")]
	for _, r := range Reports {
		for _, n := range r.Names {
			if stem == n {
				return r.Key, "", true
			}
			if strings.HasSuffix(stem, "_"+n) {
				return r.Key, strings.TrimSuffix(stem, "_"+n), true
			}
		}
	}
	return "", "", false
}

// StatsNames picks, for each report, the name an nsys lists (the set of
// names `nsys stats --help-reports` prints): the current name where listed,
// the older one otherwise. missing names the required reports it lists under
// neither; cuda_gpu_trace and nvtx_pushpop_trace are optional.
func StatsNames(listed map[string]bool) (names, missing []string) {
	// --help-reports lists cuda_api_sum before cuda_api_trace; keep its order.
	order := []string{ReportAPISum, ReportAPITrace, ReportMemTimeSum, ReportMemSizeSum, ReportNVTXSum, ReportGPUTrace, ReportNVTXTrace}
	for _, key := range order {
		var r Report
		for _, x := range Reports {
			if x.Key == key {
				r = x
			}
		}
		found := false
		for _, n := range r.Names {
			if listed[n] {
				names = append(names, n)
				found = true
				break
			}
		}
		if !found && !optionalReports[r.Key] {
			missing = append(missing, r.Key)
		}
	}
	return names, missing
}

// UnknownGPUBounds says what bounds a record's rates where the input names
// no GPU.
const UnknownGPUBounds = "a copy's rate is bounded by the fastest host link there is (NVLink-C2C, 450 GB/s) and the fastest memory, not the GPU's own"
