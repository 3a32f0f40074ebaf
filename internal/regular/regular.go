// Package regular opens and reads files only when they are regular files:
// a FIFO planted where a file is expected is refused without waiting for a
// writer, a device (/dev/zero, /dev/urandom) or socket without reading it,
// and a read is bounded so that a huge file is refused instead of read whole.
package regular

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// NotRegularError says that a path is not a regular file and what it is.
type NotRegularError struct {
	Path string
	// What names the kind of file: "a FIFO (named pipe), not a file: ...".
	What string
}

func (e *NotRegularError) Error() string { return e.Path + ": " + e.What }

// TooLargeError says that a file holds more than a reader accepts.
type TooLargeError struct {
	Path string
	Max  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: more than %s, far larger than such a file can be", e.Path, size(e.Max))
}

func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Describe returns "" when mode is a regular file's, else what the file is
// and why it is not read.
func Describe(mode fs.FileMode) string {
	k := Kind(mode)
	switch {
	case k == "":
		return ""
	case mode&fs.ModeNamedPipe != 0:
		return k + ", not a file: reading it would wait for a writer"
	case mode&fs.ModeCharDevice != 0, mode&fs.ModeDevice != 0:
		return k + ", not a file: reading it may never end"
	case mode.IsDir(), mode&fs.ModeSocket != 0:
		return k + ", not a file"
	}
	return k
}

// Kind returns "" when mode is a regular file's, else what the file is
// ("a FIFO (named pipe)", "a device", ...).
func Kind(mode fs.FileMode) string {
	switch {
	case mode.IsRegular():
		return ""
	case mode.IsDir():
		return "a folder"
	case mode&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case mode&fs.ModeCharDevice != 0, mode&fs.ModeDevice != 0:
		return "a device"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

// Open opens path for reading only if it is a regular file (links are
// followed). It never blocks: the file is opened without waiting for a
// FIFO's writer, then checked with fstat. Errors are open's and stat's own
// (*fs.PathError) or a *NotRegularError.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if what := Describe(info.Mode()); what != "" {
		f.Close()
		return nil, nil, &NotRegularError{Path: path, What: what}
	}
	// Back to blocking reads: a regular file never waits.
	if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// ReadFile reads the regular file path whole, refusing it (a
// *TooLargeError) when it holds more than max bytes.
func ReadFile(path string, max int64) ([]byte, error) {
	f, _, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, path, max)
}

// ReadAll reads r to its end, refusing (a *TooLargeError naming path) more
// than max bytes.
func ReadAll(r io.Reader, path string, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{Path: path, Max: max}
	}
	return data, nil
}

// DanglingLink reports whether path is a symbolic link to nothing, and
// where it points: it reads as no file, yet a file cannot be made there
// (or is made in place of the link), nor a folder through it.
func DanglingLink(path string) (target string, ok bool) {
	st, err := os.Lstat(path)
	if err != nil || st.Mode()&fs.ModeSymlink == 0 {
		return "", false
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	target, _ = os.Readlink(path)
	return target, true
}
