package sqlitefile

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/leftover"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// SQLite keeps a database's state in more than one file: committed changes
// may still sit in NAME-wal, a crashed writer leaves a hot NAME-journal
// whose pages must be rolled back, and a writer at work holds a lock on the
// file while the pages it wrote are not yet committed. An immutable read
// sees none of that and can return pages nobody committed. openSQLite reads
// the committed state or refuses.

// sqlitePendingByte is where SQLite's lock bytes start in the database file
// (PENDING, then RESERVED, then the SHARED range).
const sqlitePendingByte = 0x40000000

// fOFDGetLK is F_OFD_GETLK (Linux): unlike F_GETLK it also reports a lock
// this very process holds through another open file.
const fOFDGetLK = 36

// writeLocked reports whether some connection holds SQLite's RESERVED or
// PENDING lock on the file, i.e. is writing it.
func writeLocked(f *os.File) bool {
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart, Start: sqlitePendingByte, Len: 2}
	_, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), fOFDGetLK, uintptr(unsafe.Pointer(&lk)))
	if errno != 0 {
		lk = syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart, Start: sqlitePendingByte, Len: 2}
		if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil {
			return false
		}
	}
	return lk.Type != syscall.F_UNLCK
}

// sidecar returns the size of path+suffix, or -1 when there is none.
func sidecar(path, suffix string) int64 {
	info, err := os.Lstat(path + suffix)
	if err != nil || !info.Mode().IsRegular() {
		return -1
	}
	return info.Size()
}

// hotJournal reports whether a rollback journal of size bytes beside path
// holds pages to roll back: non-empty with a header that is not zeroed.
func hotJournal(path string, size int64) bool {
	if size <= 0 {
		return false
	}
	head, err := nsysdb.Head(path+"-journal", 8)
	if err != nil {
		return true // cannot tell: treat it as hot, the safe side
	}
	for _, b := range head {
		if b != 0 {
			return true
		}
	}
	return false
}

// Open opens the database at path, open as f, for reading its committed
// state. A file SQLite has nothing pending for is opened immutable and
// read-only, so that nothing is written or created beside it (a read-only
// folder, a read-only medium). A write lock held by another connection is
// refused. A -wal with content, or a hot -journal, is applied by SQLite
// itself to a private copy of the file (copied from f) and its sidecar in a
// temporary folder (the input and its folder are never written); cleanup
// removes the copy. Call cleanup once done with db (after closing it), also
// after an error. db holds PoolSize connections at most (open.go). Errors
// are *inputerr.Error.
func Open(path string, f *os.File) (db *DB, cleanup func(), err error) {
	cleanup = func() {}
	noteOpen(path) // f, the handle the caller opened the file with
	if err := Available(path); err != nil {
		return nil, cleanup, err
	}
	if writeLocked(f) {
		return nil, cleanup, &inputerr.Error{Path: path, Problem: "another program holds a write lock on the database: it is still writing it, and what it wrote is not committed",
			Hint: "wait until that program (nsys export, sqlite3, ...) finishes or close it, then run again"}
	}
	wal := sidecar(path, "-wal")
	journal := sidecar(path, "-journal")
	if wal <= 0 && !hotJournal(path, journal) {
		uri := nsysdb.ReadOnlyURI(path)
		return openDB(uri, uri, path), cleanup, nil
	}
	sweepCopies()
	tmp, err := os.MkdirTemp("", copyPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, cleanup, &inputerr.Error{Path: path, Problem: "cannot make a temporary folder to read the database's pending changes", Err: err}
	}
	cleanup = func() { os.RemoveAll(tmp) }
	copyPath := filepath.Join(tmp, "db.sqlite")
	side := "-wal"
	if wal <= 0 {
		side = "-journal"
	}
	fail := func(err error) (*DB, func(), error) {
		cleanup()
		return nil, func() {}, &inputerr.Error{Path: path, Problem: "cannot copy the database and its " + strings.TrimPrefix(side, "-") +
			" to read its committed state", Err: err, Hint: "free space in " + os.TempDir() + " or set TMPDIR"}
	}
	info, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if err := writeCopy(io.NewSectionReader(f, 0, info.Size()), copyPath); err != nil {
		return fail(err)
	}
	in, _, err := inputerr.Open(path + side)
	if err != nil {
		return fail(err)
	}
	err = writeCopy(in, copyPath+side)
	in.Close()
	if err != nil {
		return fail(err)
	}
	db = openDB(nsysdb.URI(copyPath, "mode=rw"), nsysdb.URI(copyPath, "mode=ro"), path)
	// The first read applies the WAL or rolls the hot journal back.
	if _, err := db.Exec(`PRAGMA schema_version`); err != nil {
		db.Close()
		cleanup()
		what := "its write-ahead log " + filepath.Base(path) + "-wal"
		if side == "-journal" {
			what = "the journal " + filepath.Base(path) + "-journal that an interrupted write left"
		}
		return nil, func() {}, &inputerr.Error{Path: path, Problem: "cannot apply " + what, Err: err,
			Hint: "open the database once with sqlite3 in a writable folder, or " + nsysdb.ExportHint}
	}
	return db, cleanup, nil
}

// Sidecars lists the files beside path that hold state of the database
// SQLite has not yet written into it (a -wal with content, a hot
// -journal), by full path.
func Sidecars(path string) []string {
	var out []string
	if sidecar(path, "-wal") > 0 {
		out = append(out, path+"-wal")
	}
	if hotJournal(path, sidecar(path, "-journal")) {
		out = append(out, path+"-journal")
	}
	return out
}

// copyPrefix starts the name of the temporary folder that holds a
// private copy of a database with pending changes; the owner's process id
// follows.
const copyPrefix = "nsyscheck-sqlite-"

// sweepCopies removes the private copies that runs no longer alive
// (killed before their cleanup) left in the temporary folder.
func sweepCopies() {
	entries, err := os.ReadDir(os.TempDir())
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), copyPrefix) {
			continue
		}
		if info, err := e.Info(); err == nil && leftover.OwnerGone(e.Name()[len(copyPrefix):], info.ModTime()) {
			os.RemoveAll(filepath.Join(os.TempDir(), e.Name()))
		}
	}
}

// writeCopy copies what r holds into a new file dst.
func writeCopy(r io.Reader, dst string) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
