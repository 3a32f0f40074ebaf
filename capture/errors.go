package capture

import (
	"errors"
	"strings"
)

// InputError says that an input cannot be read: which file, where in it,
// what is wrong and what the user can do about it.
type InputError struct {
	Path    string // the file or folder given
	Where   string // e.g. "row 12", "table CUPTI_ACTIVITY_KIND_MEMCPY", "column Duration (ns)"
	Problem string // what is wrong, in plain words
	Hint    string // what to do; may be empty
	Err     error  // underlying error; may be nil
}

// Error formats the error as "path: where: problem: cause (hint)".
func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Where != "" {
		b.WriteString(": ")
		b.WriteString(e.Where)
	}
	b.WriteString(": ")
	b.WriteString(e.Problem)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.Hint != "" {
		b.WriteString(" (")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// ProblemNoAPITrace is the Problem of an export that holds no CUDA API
// trace table at all: profiled without -t cuda, or another profiler took
// the trace (check tells the two apart in a run folder).
const ProblemNoAPITrace = "no CUDA API trace in this export"

// Unwrap returns the underlying error.
func (e *InputError) Unwrap() error { return e.Err }

// IsInputError reports whether err is, or wraps, an *InputError.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

// Options tune how an input is loaded.
type Options struct {
	// APINames, when not empty, limits the API calls loaded to these names
	// (without _vNNNN suffix), which keeps memory small on big captures.
	// Empty loads every call.
	APINames []string
	// ProgramThread, when set, loads the API calls of the program's thread
	// only: the thread with the most cudaMemcpyAsync calls, then the most
	// cudaMemcpy calls, then the most calls (counting the calls APINames
	// selects; ties go to the lower process, then thread id). GPU copies and
	// kernels are loaded only where they belong to a loaded call (kernels of
	// the program's process when the thread launched none through the
	// runtime API). Capture.OtherThreads counts the calls of the threads
	// left out. This keeps what a big capture loads to the program's own
	// records, whatever the other threads did.
	ProgramThread bool
	// Nsys is the nsys executable used to export a .nsys-rep; empty means
	// look it up ($NSYS, PATH, the usual install folders).
	Nsys string
	// CacheDir, when set, receives .nsys-rep exports instead of the folder
	// beside the report.
	CacheDir string
}

// WantsAPI reports whether calls named name are to be loaded.
func (o Options) WantsAPI(name string) bool {
	if len(o.APINames) == 0 {
		return true
	}
	for _, n := range o.APINames {
		if n == name {
			return true
		}
	}
	return false
}
