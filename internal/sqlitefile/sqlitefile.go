// Package sqlitefile reads an SQLite database file as nsyscheck's readers
// need it: its header checked before SQLite sees the file (an empty,
// zero-filled, foreign or truncated file gets a clear error), its
// committed state opened without writing anything (state.go), SQLite's own
// integrity check, and the header fields a page walk needs.
package sqlitefile

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	_ "github.com/mattn/go-sqlite3" // SQLite driver for database/sql

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

// Header is what the first 100 bytes of an SQLite database say about its
// pages.
type Header struct {
	PageSize int64 // bytes per page
	// Reserved is the space at the end of each page the file reserves
	// (usable bytes = PageSize - Reserved).
	Reserved int64
	// Pages is the page count the header records, 0 when it is not valid
	// (the change counter does not match the version-valid-for number).
	Pages int64
	// FreeTrunk is the first free-list trunk page, 0 for none.
	FreeTrunk int64
	// AutoVacuum is set when the file keeps pointer-map pages.
	AutoVacuum bool
}

// headerSize is the length of an SQLite database header.
const headerSize = 100

// parseHeader decodes a database header; ok is false when head does not
// start with the SQLite magic or is shorter than a header.
func parseHeader(head []byte) (h Header, ok bool) {
	if len(head) < headerSize || !bytes.HasPrefix(head, []byte(nsysdb.SQLiteMagic)) {
		return h, false
	}
	h.PageSize = int64(binary.BigEndian.Uint16(head[16:18]))
	if h.PageSize == 1 {
		h.PageSize = 65536
	}
	h.Reserved = int64(head[20])
	// The page count at offset 28 is valid when the change counter (24)
	// matches the version-valid-for number (92).
	if bytes.Equal(head[24:28], head[92:96]) {
		h.Pages = int64(binary.BigEndian.Uint32(head[28:32]))
	}
	h.FreeTrunk = int64(binary.BigEndian.Uint32(head[32:36]))
	h.AutoVacuum = binary.BigEndian.Uint32(head[52:56]) != 0
	return h, true
}

// ReadHeader reads and decodes the header of the database in r, refusing
// a file that is not an SQLite database or whose page size is impossible.
func ReadHeader(r io.ReaderAt) (Header, error) {
	head := make([]byte, headerSize)
	n, err := r.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return Header{}, err
	}
	h, ok := parseHeader(head[:n])
	if !ok {
		return Header{}, errors.New("not a SQLite database file")
	}
	if h.PageSize < 512 || h.PageSize&(h.PageSize-1) != 0 {
		return Header{}, fmt.Errorf("bad page size %d in the file header", h.PageSize)
	}
	return h, nil
}

// Check makes sure the file at path, open as r and size bytes long, is a
// complete SQLite 3 database before SQLite itself sees it, so that an
// empty, zero-filled, foreign or truncated file gets a clear error instead
// of an obscure one (or an empty model). The error is an *inputerr.Error.
func Check(path string, r io.ReaderAt, size int64) error {
	fail := func(problem, hint string, err error) error {
		return &inputerr.Error{Path: path, Problem: problem, Hint: hint, Err: err}
	}
	if size == 0 {
		return fail("the file is empty, not an Nsight Systems SQLite export", nsysdb.ExportHint, nil)
	}
	head := make([]byte, headerSize)
	n, err := r.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return fail("cannot read the file", "", err)
	}
	head = head[:n]
	magic := nsysdb.SQLiteMagic
	if n < len(magic) || string(head[:len(magic)]) != magic {
		switch {
		case len(bytes.Trim(head, "\x00")) == 0:
			return fail("the file holds only zero bytes, not an SQLite database (an interrupted copy or download?)", nsysdb.ExportHint, nil)
		case bytes.HasPrefix(head, []byte("NVIDIA")):
			return fail("this is an Nsight Systems report (.nsys-rep), not its SQLite export",
				"give it a .nsys-rep name so nsyscheck exports it, or "+nsysdb.ExportHint, nil)
		case n < len(magic) && strings.HasPrefix(magic, string(head)):
			return fail(fmt.Sprintf("the file is truncated: it holds only %d bytes", size), nsysdb.ExportHint, nil)
		default:
			return fail("not an SQLite database (the file does not start with the SQLite header)", nsysdb.ExportHint, nil)
		}
	}
	if n < headerSize {
		return fail(fmt.Sprintf("the file is truncated: it holds only %d bytes, less than an SQLite header", size), nsysdb.ExportHint, nil)
	}
	h, _ := parseHeader(head)
	if h.PageSize < 512 || h.PageSize&(h.PageSize-1) != 0 {
		return fail(fmt.Sprintf("the SQLite header is damaged (page size %d)", h.PageSize), nsysdb.ExportHint, nil)
	}
	if h.Pages > 0 {
		if want := h.Pages * h.PageSize; size < want {
			return fail(fmt.Sprintf("the file is truncated: its header says %d bytes but it holds %d", want, size),
				"copy it again, or "+nsysdb.ExportHint, nil)
		}
	} else if size%h.PageSize != 0 {
		return fail(fmt.Sprintf("the file is truncated: %d bytes is not a whole number of %d-byte pages", size, h.PageSize),
			"copy it again, or "+nsysdb.ExportHint, nil)
	}
	return nil
}

// CheckPath is Check on the file at path, opened (a regular file only)
// for the check and closed again; a folder is refused with its own words.
func CheckPath(path string) error {
	f, info, err := inputerr.Open(path)
	if err != nil {
		var ie *inputerr.Error
		if errors.As(err, &ie) && strings.HasPrefix(ie.Problem, "a folder") {
			return &inputerr.Error{Path: path, Problem: "is a folder, not an Nsight Systems SQLite export", Hint: "give the .sqlite file itself"}
		}
		return err
	}
	defer f.Close()
	return Check(path, f, info.Size())
}

// Querier runs queries: a *sql.DB, *sql.Conn or *sql.Tx.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Integrity runs SQLite's quick_check (every page, record and index entry
// well-formed; it skips only the cross-check of index contents) and
// returns an *inputerr.Error when the file fails it. It runs on db, a
// connection or a pool. Cancelling ctx interrupts the check.
func Integrity(ctx context.Context, db Querier, path string) error {
	fail := func(err error) error {
		return &inputerr.Error{Path: path, Problem: "the database fails SQLite's integrity check", Err: err, Hint: nsysdb.ExportHint}
	}
	rows, err := db.QueryContext(ctx, `PRAGMA quick_check(5)`)
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return fail(err)
		}
		msgs = append(msgs, s)
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	if len(msgs) == 1 && msgs[0] == "ok" {
		return nil
	}
	return &inputerr.Error{Path: path, Problem: fmt.Sprintf("the database fails SQLite's integrity check: %s", strings.Join(msgs, "; ")),
		Hint: "the file is damaged; " + nsysdb.ExportHint}
}
