// Package inputerr says what is wrong with a user's input: which file,
// where in it, what is wrong and what to do about it. Every reader of a
// capture returns its errors as an *Error, and opens and reads the user's
// files through Open and ReadFile, which refuse anything but a regular file
// and bound what they read, with an *Error that says so.
package inputerr

import (
	"errors"
	"strings"
)

// Error says that an input cannot be read: which file, where in it, what
// is wrong and what the user can do about it.
type Error struct {
	Path    string // the file or folder given
	Where   string // e.g. "row 12", "table CUPTI_ACTIVITY_KIND_MEMCPY", "column Duration (ns)"
	Problem string // what is wrong, in plain words
	Hint    string // what to do; may be empty
	Err     error  // underlying error; may be nil
}

// Error formats the error as "path: where: problem: cause (hint)".
func (e *Error) Error() string {
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

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// ProblemNoAPITrace is the Problem of an export that holds no CUDA API
// trace table at all: profiled without -t cuda, or another profiler took
// the trace (check tells the two apart in a run folder).
const ProblemNoAPITrace = "no CUDA API trace in this export"

// Is reports whether err is, or wraps, an *Error.
func Is(err error) bool {
	var ie *Error
	return errors.As(err, &ie)
}

// Attribute names the file and the place of a record that a reader handed
// on, in an error its consumer returned about it without them (a *Error
// with no Path: the consumer knows what is wrong with the record, the
// reader where it came from). where ("table CUPTI_ACTIVITY_KIND_MEMCPY")
// comes before the consumer's own Where. Any other error is returned as
// it is.
func Attribute(err error, path, where string) error {
	var e *Error
	if !errors.As(err, &e) || e.Path != "" {
		return err
	}
	e.Path = path
	switch {
	case where == "":
	case e.Where == "":
		e.Where = where
	default:
		e.Where = where + ", " + e.Where
	}
	return err
}
