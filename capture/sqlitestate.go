package capture

import (
	"database/sql"
	"fmt"
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

// sqliteWriteLocked reports whether some connection holds SQLite's
// RESERVED or PENDING lock on the file, i.e. is writing it.
func sqliteWriteLocked(f *os.File) bool {
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
	head, err := readHead(path+"-journal", 8)
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

// openSQLite opens the database at path for reading its committed state.
// A file SQLite has nothing pending for is opened immutable and read-only,
// so that nothing is written or created beside it (a read-only folder, a
// read-only medium). A write lock held by another connection is refused. A
// -wal with content, or a hot -journal, is applied by SQLite itself to a
// private copy of the file and its sidecar in a temporary folder (the
// input and its folder are never written); cleanup removes the copy.
func openSQLite(path string, f *os.File) (db *sql.DB, cleanup func(), err error) {
	cleanup = func() {}
	if sqliteWriteLocked(f) {
		return nil, cleanup, &inputerr.Error{Path: path, Problem: "another program holds a write lock on the database: it is still writing it, and what it wrote is not committed",
			Hint: "wait until that program (nsys export, sqlite3, ...) finishes or close it, then run again"}
	}
	wal := sidecar(path, "-wal")
	journal := sidecar(path, "-journal")
	if wal <= 0 && !hotJournal(path, journal) {
		db, err = sql.Open("sqlite3", sqliteReadOnlyDSN(path))
		return db, cleanup, err
	}
	sweepSQLiteCopies()
	tmp, err := os.MkdirTemp("", sqliteCopyPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, cleanup, &inputerr.Error{Path: path, Problem: "cannot make a temporary folder to read the database's pending changes", Err: err}
	}
	cleanup = func() { os.RemoveAll(tmp) }
	copyPath := filepath.Join(tmp, "db.sqlite")
	side := "-wal"
	if wal <= 0 {
		side = "-journal"
	}
	for _, s := range []string{"", side} {
		if err := copyFile(path+s, copyPath+s); err != nil {
			cleanup()
			return nil, func() {}, &inputerr.Error{Path: path, Problem: "cannot copy the database and its " + strings.TrimPrefix(side, "-") +
				" to read its committed state", Err: err, Hint: "free space in " + os.TempDir() + " or set TMPDIR"}
		}
	}
	db, err = sql.Open("sqlite3", nsysdb.URI(copyPath, "mode=rw"))
	if err != nil {
		cleanup()
		return nil, func() {}, err
	}
	// The first read applies the WAL or rolls the hot journal back.
	if _, err := db.Exec(`PRAGMA schema_version`); err != nil {
		db.Close()
		cleanup()
		what := "its write-ahead log " + filepath.Base(path) + "-wal"
		if side == "-journal" {
			what = "the journal " + filepath.Base(path) + "-journal that an interrupted write left"
		}
		return nil, func() {}, &inputerr.Error{Path: path, Problem: "cannot apply " + what, Err: err,
			Hint: "open the database once with sqlite3 in a writable folder, or " + sqliteExportHint}
	}
	return db, cleanup, nil
}

// OpenSQLite opens the SQLite database at path for reading its committed
// state, as LoadSQLite reads it: a write lock held by another program is
// refused, changes still in a -wal or a hot -journal are applied to a
// private copy, and nothing is written beside path. Call cleanup once done
// with db (after closing it). Errors are *inputerr.Error.
func OpenSQLite(path string) (db *sql.DB, cleanup func(), err error) {
	f, _, err := inputerr.Open(path)
	if err != nil {
		return nil, func() {}, err
	}
	defer f.Close()
	db, cleanup, err = openSQLite(path, f)
	if err != nil && !inputerr.Is(err) {
		err = &inputerr.Error{Path: path, Problem: "cannot open the SQLite database", Err: err, Hint: sqliteExportHint}
	}
	return db, cleanup, err
}

// SQLiteSidecars lists the files beside path that hold state of the
// database SQLite has not yet written into it (a -wal with content, a hot
// -journal), by full path.
func SQLiteSidecars(path string) []string {
	var out []string
	if sidecar(path, "-wal") > 0 {
		out = append(out, path+"-wal")
	}
	if hotJournal(path, sidecar(path, "-journal")) {
		out = append(out, path+"-journal")
	}
	return out
}

// sqliteCopyPrefix starts the name of the temporary folder that holds a
// private copy of a database with pending changes; the owner's process id
// follows.
const sqliteCopyPrefix = "nsyscheck-sqlite-"

// sweepSQLiteCopies removes the private copies that runs no longer alive
// (killed before their cleanup) left in the temporary folder.
func sweepSQLiteCopies() {
	entries, err := os.ReadDir(os.TempDir())
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), sqliteCopyPrefix) {
			continue
		}
		if info, err := e.Info(); err == nil && leftover.OwnerGone(e.Name()[len(sqliteCopyPrefix):], info.ModTime()) {
			os.RemoveAll(filepath.Join(os.TempDir(), e.Name()))
		}
	}
}

// copyFile copies the regular file src to dst.
func copyFile(src, dst string) error {
	in, _, err := inputerr.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// sqliteIntegrity runs SQLite's quick_check (every page, record and index
// entry well-formed; it skips only the cross-check of index contents) and
// returns an *inputerr.Error when the file fails it.
func sqliteIntegrity(db *sql.DB, path string) error {
	rows, err := db.Query(`PRAGMA quick_check(5)`)
	if err != nil {
		return &inputerr.Error{Path: path, Problem: "the database fails SQLite's integrity check", Err: err, Hint: sqliteExportHint}
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return &inputerr.Error{Path: path, Problem: "the database fails SQLite's integrity check", Err: err, Hint: sqliteExportHint}
		}
		msgs = append(msgs, s)
	}
	if err := rows.Err(); err != nil {
		return &inputerr.Error{Path: path, Problem: "the database fails SQLite's integrity check", Err: err, Hint: sqliteExportHint}
	}
	if len(msgs) == 1 && msgs[0] == "ok" {
		return nil
	}
	return &inputerr.Error{Path: path, Problem: fmt.Sprintf("the database fails SQLite's integrity check: %s", strings.Join(msgs, "; ")),
		Hint: "the file is damaged; " + sqliteExportHint}
}
