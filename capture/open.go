package capture

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// OpenRegular opens path for reading only if it is a regular file. It never
// blocks: a FIFO is opened without waiting for a writer and then refused,
// as are devices (/dev/zero, /dev/urandom) and sockets, whose reads never
// end. The error is an *InputError that says what the path is.
func OpenRegular(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, &InputError{Path: path, Problem: "no such file", Hint: "check the path"}
		}
		return nil, nil, &InputError{Path: path, Problem: "cannot open the file", Err: err}
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, &InputError{Path: path, Problem: "cannot read the file", Err: err}
	}
	if err := regularFile(path, info); err != nil {
		f.Close()
		return nil, nil, err
	}
	// Back to blocking reads: a regular file never waits, and the runtime's
	// poller is not involved either way.
	if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, nil, &InputError{Path: path, Problem: "cannot read the file", Err: err}
	}
	return f, info, nil
}

// regularFile returns nil when info describes a regular file, else an
// *InputError naming what the path is instead.
func regularFile(path string, info fs.FileInfo) error {
	m := info.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "not a regular file"
	switch {
	case m.IsDir():
		what = "a folder, not a file"
	case m&fs.ModeNamedPipe != 0:
		what = "a FIFO (named pipe), not a file: reading it would wait for a writer"
	case m&fs.ModeCharDevice != 0, m&fs.ModeDevice != 0:
		what = "a device, not a file: reading it may never end"
	case m&fs.ModeSocket != 0:
		what = "a socket, not a file"
	}
	return &InputError{Path: path, Problem: what, Hint: "copy the data into a regular file and give that"}
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
