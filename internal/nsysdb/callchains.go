package nsysdb

// The tables, columns and enum name of the call stacks nsys takes of CUDA
// calls (nsys profile --cudabacktrace, with CPU sampling on). nsys writes a
// stack as a second row of the runtime table with the call's correlation
// id and thread, of the event class EventClassBacktrace, whose span
// encloses the call's: that row is no call, and its callchainId names the
// stack's frames in CUDA_CALLCHAINS.
const (
	TableEventClass = "ENUM_NSYS_EVENT_CLASS"
	TableCallchains = "CUDA_CALLCHAINS"

	EventClassBacktrace = "TRACE_PROCESS_EVENT_CUDABACKTRACE"

	ColEventClass  = "eventClass"  // CUPTI_ACTIVITY_KIND_RUNTIME -> ENUM_NSYS_EVENT_CLASS
	ColCallchainID = "callchainId" // CUPTI_ACTIVITY_KIND_RUNTIME -> CUDA_CALLCHAINS.id
	ColSymbol      = "symbol"      // CUDA_CALLCHAINS -> StringIds: the function
	ColModule      = "module"      // CUDA_CALLCHAINS -> StringIds: the library or executable
	ColUnresolved  = "unresolved"  // CUDA_CALLCHAINS: 1 where no symbol was found
	ColOriginalIP  = "originalIP"  // CUDA_CALLCHAINS: the instruction address
	ColStackDepth  = "stackDepth"  // CUDA_CALLCHAINS: 0 for the innermost frame
)

// StacksHint says how to profile so that nsys takes the call stacks of
// CUDA calls: CPU sampling on (without it nsys warns "CUDA backtraces will
// not be collected because CPU sampling is disabled" and takes none), and a
// threshold below nsys's default of 80 µs, which misses shorter calls.
const StacksHint = "nsys profile --sample=process-tree --cudabacktrace=all:10000"

// PythonStacksHint is the flag added for a Python program, whose Python
// frames nsys then takes beside the native ones where it can.
const PythonStacksHint = "--python-backtrace=cuda"
