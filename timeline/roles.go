package timeline

import "strings"

// Role is what an API call does, as far as the timeline's dependencies go.
type Role uint8

// Roles of API calls, told by name (runtime and driver API alike).
const (
	RoleOther        Role = iota
	RoleCopyAsync         // cudaMemcpyAsync, cudaMemcpy2DAsync, cuMemcpyHtoDAsync, ...
	RoleCopyBlocking      // cudaMemcpy, cudaMemcpy2D, cuMemcpyHtoD, cuMemcpyDtoH, ...
	RoleStreamSync        // cudaStreamSynchronize, cuStreamSynchronize
	RoleDeviceSync        // cudaDeviceSynchronize, cudaThreadSynchronize, cuCtxSynchronize
	RoleEventSync         // cudaEventSynchronize, cuEventSynchronize
	RoleEventQuery        // cudaEventQuery, cuEventQuery
	RoleEventRecord       // cudaEventRecord, cudaEventRecordWithFlags, cuEventRecord, ...
	RoleStreamWait        // cudaStreamWaitEvent, cuStreamWaitEvent
	RoleHostAlloc         // cudaHostAlloc, cudaMallocHost, cudaHostRegister, cuMemHostAlloc, ...
)

// String names the role.
func (r Role) String() string {
	switch r {
	case RoleCopyAsync:
		return "async-copy"
	case RoleCopyBlocking:
		return "blocking-copy"
	case RoleStreamSync:
		return "stream-sync"
	case RoleDeviceSync:
		return "device-sync"
	case RoleEventSync:
		return "event-sync"
	case RoleEventQuery:
		return "event-query"
	case RoleEventRecord:
		return "event-record"
	case RoleStreamWait:
		return "stream-wait-event"
	case RoleHostAlloc:
		return "host-alloc"
	}
	return "other"
}

// RoleOf tells an API's role by its name (without a _vNNNN suffix; a
// per-thread default stream's _ptsz or _ptds is ignored).
func RoleOf(api string) Role {
	name := strings.TrimSuffix(strings.TrimSuffix(api, "_ptsz"), "_ptds")
	name = strings.TrimPrefix(strings.TrimPrefix(name, "cuda"), "cu")
	switch {
	case strings.HasPrefix(name, "Memcpy"):
		if strings.Contains(name, "Async") {
			return RoleCopyAsync
		}
		return RoleCopyBlocking
	case name == "StreamSynchronize":
		return RoleStreamSync
	case name == "DeviceSynchronize" || name == "ThreadSynchronize" || name == "CtxSynchronize":
		return RoleDeviceSync
	case name == "EventSynchronize":
		return RoleEventSync
	case name == "EventQuery":
		return RoleEventQuery
	case strings.HasPrefix(name, "EventRecord"):
		return RoleEventRecord
	case name == "StreamWaitEvent":
		return RoleStreamWait
	case name == "HostAlloc" || name == "MallocHost" || name == "HostRegister" ||
		name == "MemHostAlloc" || name == "MemAllocHost" || name == "MemHostRegister":
		return RoleHostAlloc
	}
	return RoleOther
}
