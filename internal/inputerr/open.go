package inputerr

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/nsyscheck/nsyscheck/internal/regular"
)

// Open opens path for reading only if it is a regular file. It never
// blocks: a FIFO is opened without waiting for a writer and then refused,
// as are devices (/dev/zero, /dev/urandom) and sockets, whose reads never
// end. The error is an *Error that says what the path is.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, info, err := regular.Open(path)
	var nr *regular.NotRegularError
	switch {
	case errors.As(err, &nr):
		return nil, nil, &Error{Path: path, Problem: nr.What, Hint: "copy the data into a regular file and give that"}
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, &Error{Path: path, Problem: "no such file", Hint: "check the path"}
	case err != nil:
		return nil, nil, &Error{Path: path, Problem: "cannot open the file", Err: UnwrapPath(err)}
	}
	return f, info, nil
}

// ReadFile reads a small file whole (an expectation, a run's JSON, a
// rule's CSV) as Open opens it, refusing one of more than max bytes; what
// names the file in that error ("an expected-audit file").
func ReadFile(path string, max int64, what string) ([]byte, error) {
	f, info, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info.Size() > max {
		// Refused before a byte is read: reading up to the limit first
		// would hold it, and more while the buffer grew.
		return nil, tooLarge(path, max, what)
	}
	// Read into a buffer of the file's size and a byte more, to see the
	// end, where io.ReadAll grows one by doubling, holding up to twice
	// the file at once; a file that grows meanwhile is still held to max.
	r := Bounded(f, max, path, what)
	buf := make([]byte, info.Size()+1)
	n, err := io.ReadFull(r, buf)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return buf[:n], nil
	case err != nil:
		return nil, err
	}
	rest, err := io.ReadAll(r) // it grew since its size was taken
	if err != nil {
		return nil, err
	}
	return append(buf, rest...), nil
}

// tooLarge is the error of a file of more than max bytes.
func tooLarge(path string, max int64, what string) error {
	return &Error{Path: path, Problem: fmt.Sprintf("more than %d MiB, far larger than %s can be", max>>20, what),
		Hint: "give the right file; a damaged or foreign file can be this large"}
}

// UnwrapPath drops the path an *fs.PathError repeats: Error names it
// already.
func UnwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Regular returns nil when info describes a regular file, else an *Error
// naming what the path is instead.
func Regular(path string, info fs.FileInfo) error {
	if what := regular.Describe(info.Mode()); what != "" {
		return &Error{Path: path, Problem: what, Hint: "copy the data into a regular file and give that"}
	}
	return nil
}

// limitedReader reads at most max bytes from r, then fails with an *Error
// that names the file and the limit instead of reading on.
type limitedReader struct {
	r    io.Reader
	left int64
	max  int64
	path string
	what string
}

// Bounded wraps r so that reading more than max bytes is an error naming
// path and what the bytes are (e.g. "a transcript").
func Bounded(r io.Reader, max int64, path, what string) io.Reader {
	return &limitedReader{r: r, left: max, max: max, path: path, what: what}
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// One more byte tells a file of exactly max bytes from a longer one.
		var one [1]byte
		if n, _ := l.r.Read(one[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, tooLarge(l.path, l.max, l.what)
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}
