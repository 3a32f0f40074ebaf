package records

// Stack is the call stack nsys took of one CUDA API call
// (nsys profile --cudabacktrace, with CPU sampling on): the frames from the
// innermost (the profiler's and the driver's own) outwards to the thread's
// start. Calls that share a stack id share one Stack.
type Stack struct {
	// ID is the export's id of the stack (CUDA_CALLCHAINS.id).
	ID int64
	// Frames are the stack's frames, innermost first.
	Frames []Frame
}

// Frame is one frame of a call stack: the function and the library or
// executable it is in. nsys records no source line, only symbols.
type Frame struct {
	// Symbol is the function's name as nsys resolved it (demangled C++), or
	// the instruction address in hex where it could not (Unresolved).
	Symbol string
	// Module is the path of the executable or shared library.
	Module string
	// Unresolved says nsys found no symbol for the frame's address.
	Unresolved bool
	// IP is the frame's instruction address where the export gives it, 0
	// otherwise.
	IP uint64
}
