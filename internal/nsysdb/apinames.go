package nsysdb

import "strings"

// CUDA API names as the trace writes them.

// StripAPIVersion removes a trailing _v<digits> from a CUDA API name
// (cudaMemcpy_v3020 -> cudaMemcpy).
func StripAPIVersion(name string) string {
	i := strings.LastIndex(name, "_v")
	if i <= 0 || i+2 == len(name) {
		return name
	}
	for _, ch := range name[i+2:] {
		if ch < '0' || ch > '9' {
			return name
		}
	}
	return name[:i]
}

// CopyAPIPrefixes name the API families that issue memory copies: the
// runtime's cudaMemcpy* and the driver's cuMemcpy*.
var CopyAPIPrefixes = []string{"cudaMemcpy", "cuMemcpy"}

// GraphLaunchPrefixes name the API families that launch a CUDA graph
// (IsGraphLaunch): traced per node, a graph's copies carry their launch's
// correlation id as a copy carries its call's.
var GraphLaunchPrefixes = []string{"cudaGraphLaunch", "cuGraphLaunch"}

// IsCopyAPI reports whether an API name is one of the families that issue
// memory copies (cudaMemcpy*, cuMemcpy*).
func IsCopyAPI(name string) bool {
	for _, p := range CopyAPIPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// IsLaunchAPI reports whether an API launches GPU work of its own: a
// kernel (cudaLaunchKernel, cuLaunchKernel, their Ex and cooperative
// forms) or a CUDA graph (IsGraphLaunch).
func IsLaunchAPI(name string) bool { return strings.Contains(name, "Launch") }

// IsEventRecordAPI reports whether an API name (without its _vNNNN
// suffix) records a CUDA event on a stream (cudaEventRecord,
// cudaEventRecordWithFlags, cuEventRecord, ...).
func IsEventRecordAPI(name string) bool {
	return strings.HasPrefix(name, "cudaEventRecord") || strings.HasPrefix(name, "cuEventRecord")
}

// IsGraphLaunch reports whether an API name (without its _vNNNN suffix)
// launches a CUDA graph (cudaGraphLaunch, cuGraphLaunch_ptsz, ...), whose
// copies and kernels carry the launch's correlation id.
func IsGraphLaunch(name string) bool {
	return strings.HasPrefix(name, "cudaGraphLaunch") || strings.HasPrefix(name, "cuGraphLaunch")
}
