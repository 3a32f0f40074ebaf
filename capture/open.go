package capture

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/nsyscheck/nsyscheck/internal/regular"
)

// OpenRegular opens path for reading only if it is a regular file. It never
// blocks: a FIFO is opened without waiting for a writer and then refused,
// as are devices (/dev/zero, /dev/urandom) and sockets, whose reads never
// end. The error is an *InputError that says what the path is.
func OpenRegular(path string) (*os.File, fs.FileInfo, error) {
	f, info, err := regular.Open(path)
	var nr *regular.NotRegularError
	switch {
	case errors.As(err, &nr):
		return nil, nil, &InputError{Path: path, Problem: nr.What, Hint: "copy the data into a regular file and give that"}
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, &InputError{Path: path, Problem: "no such file", Hint: "check the path"}
	case err != nil:
		return nil, nil, &InputError{Path: path, Problem: "cannot open the file", Err: unwrapPathError(err)}
	}
	return f, info, nil
}

// ReadRegular reads a small file whole (an expectation, a run's JSON, a
// rule's CSV) as OpenRegular opens it, refusing one of more than max bytes;
// what names the file in that error ("an expected-audit file").
func ReadRegular(path string, max int64, what string) ([]byte, error) {
	f, _, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(boundedReader(f, max, path, what))
}

// unwrapPathError drops the path an *fs.PathError repeats: InputError
// names it already.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// regularFile returns nil when info describes a regular file, else an
// *InputError naming what the path is instead.
func regularFile(path string, info fs.FileInfo) error {
	if what := regular.Describe(info.Mode()); what != "" {
		return &InputError{Path: path, Problem: what, Hint: "copy the data into a regular file and give that"}
	}
	return nil
}

// checkRegular stats path (following links) and refuses anything but a
// regular file, without opening it.
func checkRegular(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &InputError{Path: path, Problem: "no such file"}
		}
		return &InputError{Path: path, Problem: "cannot read the file", Err: err}
	}
	return regularFile(path, info)
}

// limitedReader reads at most max bytes from r, then fails with an
// *InputError that names the file and the limit instead of reading on.
type limitedReader struct {
	r    io.Reader
	left int64
	max  int64
	path string
	what string
}

// boundedReader wraps r so that reading more than max bytes is an error
// naming path and what the bytes are (e.g. "a transcript").
func boundedReader(r io.Reader, max int64, path, what string) io.Reader {
	return &limitedReader{r: r, left: max, max: max, path: path, what: what}
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// One more byte tells a file of exactly max bytes from a longer one.
		var one [1]byte
		if n, _ := l.r.Read(one[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, &InputError{Path: l.path, Problem: fmt.Sprintf("more than %d MiB, far larger than %s can be", l.max>>20, l.what),
			Hint: "give the right file; a damaged or foreign file can be this large"}
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}
