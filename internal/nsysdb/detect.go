package nsysdb

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Magic bytes at the start of the files nsys writes.
const (
	SQLiteMagic  = "SQLite format 3\x00"          // every SQLite 3 database
	NsysRepMagic = "NVIDIA Tegra Profiler Report" // a .nsys-rep (and older .qdrep)
)

// Kind is what an input file holds.
type Kind int

// The kinds of input file.
const (
	KindUnknown    Kind = iota
	KindNsysRep         // an Nsight Systems report
	KindSQLite          // its SQLite export
	KindJSON            // a results JSON or measurements file
	KindCSV             // one `nsys stats` CSV report
	KindTranscript      // the bundled program's stdout, told by its own lines
	KindQdstrm          // the raw stream nsys writes while profiling, before its importer makes a report
)

// String names the kind as the command line and JSON output do.
func (k Kind) String() string {
	switch k {
	case KindNsysRep:
		return "nsys-rep"
	case KindSQLite:
		return "sqlite"
	case KindJSON:
		return "json"
	case KindCSV:
		return "csv"
	case KindTranscript:
		return "transcript"
	case KindQdstrm:
		return "qdstrm"
	}
	return "unknown"
}

// errNotRegular is Head's error for a FIFO, a device or a socket.
var errNotRegular = errors.New("not a regular file")

// Head returns up to n bytes from the start of the file. It never blocks:
// anything but a regular file (a FIFO, a device) is an error.
func Head(path string, n int) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, &os.PathError{Op: "read", Path: path, Err: errNotRegular}
	}
	b := make([]byte, n)
	k, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:k], nil
}

// HeadSize is how many bytes Magic and Sniff need to see.
const HeadSize = len(NsysRepMagic)

// Magic tells an SQLite database or an Nsight Systems report by its first
// bytes alone; anything else is KindUnknown.
func Magic(head []byte) Kind {
	switch {
	case bytes.HasPrefix(head, []byte(SQLiteMagic)):
		return KindSQLite
	case bytes.HasPrefix(head, []byte(NsysRepMagic)):
		return KindNsysRep
	}
	return KindUnknown
}

// IsStreamName reports whether name ends as the raw stream's does (.qdstrm),
// which nsys leaves behind when it could not turn it into a report.
func IsStreamName(name string) bool {
	return strings.HasSuffix(strings.ToLower(name), ".qdstrm")
}

// IsReportName reports whether name ends as an Nsight Systems report's does
// (.nsys-rep, or .qdrep before 2021).
func IsReportName(name string) bool {
	l := strings.ToLower(name)
	return strings.HasSuffix(l, ".nsys-rep") || strings.HasSuffix(l, ".qdrep")
}

// SniffSize is how many bytes Detect reads for Sniff: enough for nsys's own
// lines (a warning, "Collecting data...") before the program's first line.
const SniffSize = 64 << 10

// transcriptLines are how the lines the bundled program prints first begin
// (kernels/pinned.cu; capture/program.go reads them): its device line, its
// correctness gates and part 1's heading. A transcript holds at least one
// near its start, whatever nsys printed before it.
var transcriptLines = []string{"device: ", "gate ", "Part 1: "}

// Looked names every kind of input Sniff tells, for the one error about a
// file that is none of them.
const Looked = "a .nsys-rep or its SQLite export (by their first bytes), an nsys stats .csv report, " +
	"a .json results or measurements file, or the pinned program's stdout " +
	"(a line starting \"device: \", \"gate \" or \"Part 1: \" in its first 64 KiB)"

// Sniff tells an input's kind from its first bytes (up to SniffSize) and
// its name, the one rule by which every input is read: a raw stream's
// name, a report name, then the SQLite magic or a .sqlite name, then the
// report magic, then .json and .csv names, then the program's own lines
// (KindTranscript). Anything else is KindUnknown, which readers turn into
// one error naming Looked. A .nsys-rep or .sqlite name stands for its kind
// even when the content is damaged, so that the reader of that kind
// explains what is wrong with it.
func Sniff(name string, head []byte) Kind {
	l := strings.ToLower(filepath.Base(name))
	switch {
	case IsStreamName(l):
		return KindQdstrm
	case IsReportName(l):
		return KindNsysRep
	case Magic(head) == KindSQLite, strings.HasSuffix(l, ".sqlite"):
		return KindSQLite
	case Magic(head) == KindNsysRep:
		return KindNsysRep
	case strings.HasSuffix(l, ".json"):
		return KindJSON
	case strings.HasSuffix(l, ".csv"):
		return KindCSV
	case isTranscript(head):
		return KindTranscript
	}
	return KindUnknown
}

// isTranscript reports whether one of head's lines begins as the program's
// first lines do. A progress bar redraws itself with \r on the line the
// program then prints on, so a line is also split at \r.
func isTranscript(head []byte) bool {
	for len(head) > 0 {
		line := head
		if i := bytes.IndexAny(head, "\r\n"); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		line = bytes.TrimLeft(line, " \t")
		for _, p := range transcriptLines {
			if bytes.HasPrefix(line, []byte(p)) {
				return true
			}
		}
	}
	return false
}
