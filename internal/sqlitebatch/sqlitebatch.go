//go:build cgo

// Package sqlitebatch reads the integer columns of an SQLite query's rows a
// batch at a time: one call into C steps up to a batch of rows and copies
// their values into Go's memory, where database/sql's driver crosses into C
// once a row and boxes every value. It opens a connection of its own, read
// only, with the SQLite that github.com/mattn/go-sqlite3 links into the
// program (declared here, so no SQLite headers are needed to build), and
// serves the readers' long scans; everything else goes through
// database/sql.
package sqlitebatch

/*
#include <stdlib.h>

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
typedef long long sqlite3_int64;

int sqlite3_open_v2(const char *filename, sqlite3 **ppDb, int flags, const char *zVfs);
int sqlite3_close_v2(sqlite3 *db);
int sqlite3_prepare_v2(sqlite3 *db, const char *zSql, int nByte, sqlite3_stmt **ppStmt, const char **pzTail);
int sqlite3_finalize(sqlite3_stmt *pStmt);
int sqlite3_step(sqlite3_stmt *pStmt);
int sqlite3_column_count(sqlite3_stmt *pStmt);
const char *sqlite3_column_name(sqlite3_stmt *pStmt, int N);
int sqlite3_column_type(sqlite3_stmt *pStmt, int iCol);
typedef struct sqlite3_value sqlite3_value;
sqlite3_value *sqlite3_column_value(sqlite3_stmt *pStmt, int iCol);
int sqlite3_value_type(sqlite3_value *v);
sqlite3_int64 sqlite3_value_int64(sqlite3_value *v);
sqlite3_int64 sqlite3_column_int64(sqlite3_stmt *pStmt, int iCol);
double sqlite3_column_double(sqlite3_stmt *pStmt, int iCol);
const unsigned char *sqlite3_column_text(sqlite3_stmt *pStmt, int iCol);
int sqlite3_column_bytes(sqlite3_stmt *pStmt, int iCol);
const char *sqlite3_errmsg(sqlite3 *db);
const char *sqlite3_errstr(int rc);
void sqlite3_interrupt(sqlite3 *db);

int sqlite3_config(int, ...);

enum { ROW = 100, INTEGER = 1, CONFIG_MEMSTATUS = 9 };

// memstatus_off stops SQLite counting its memory, which takes one mutex of
// the whole process at every allocation; it must come before SQLite is
// first used (SQLITE_MISUSE after).
static int memstatus_off(void) { return sqlite3_config(CONFIG_MEMSTATUS, 0); }

// columns_strided reports whether the current row's values lie at one
// stride from each other, *stride apart, as sqlite3_column_value gives them
// one by one (SQLite keeps a row's results as one array): then a value is
// found from the first without a call that looks it up by its column.
static int columns_strided(sqlite3_stmt *s, int ncol, long *stride) {
	char *base = (char *)sqlite3_column_value(s, 0);
	*stride = 0;
	if (ncol > 1) {
		*stride = (char *)sqlite3_column_value(s, 1) - base;
	}
	for (int i = 1; i < ncol; i++) {
		if ((char *)sqlite3_column_value(s, i) != base + (long)i * *stride) {
			return 0;
		}
	}
	return 1;
}

// step_batch steps s up to max rows, writing each row's ncol integer
// values into out. It returns the rows written; *rc is the last step's
// result (ROW when it stopped at max or at a value that is not an
// integer), *bad the column of that value in the row it stopped on (the
// row not written), else -1.
//
// sqlite3_column_type and sqlite3_column_int64 each look the value up by
// its column; a row's values are looked up once, the first through
// sqlite3_column_value and the others at the stride the batch's first row
// showed (checked column by column on it), or each through
// sqlite3_column_value where that row showed none. The type and the value
// are then read from it as those two calls read them.
static int step_batch(sqlite3_stmt *s, int ncol, sqlite3_int64 *out, int max, int *rc, int *bad) {
	int n = 0;
	int strided = 0;
	long stride = 0;
	*bad = -1;
	while (n < max) {
		int r = sqlite3_step(s);
		if (r != ROW) {
			*rc = r;
			return n;
		}
		if (n == 0) {
			strided = columns_strided(s, ncol, &stride);
		}
		sqlite3_int64 *v = out + (long)n * ncol;
		char *base = (char *)sqlite3_column_value(s, 0);
		for (int i = 0; i < ncol; i++) {
			sqlite3_value *c = strided ? (sqlite3_value *)(base + (long)i * stride) : sqlite3_column_value(s, i);
			if (sqlite3_value_type(c) != INTEGER) {
				*rc = ROW;
				*bad = i;
				return n;
			}
			v[i] = sqlite3_value_int64(c);
		}
		n++;
	}
	*rc = ROW;
	return n;
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"unsafe"
)

// SQLite's result codes, column types and open flags this package uses.
const (
	sqliteRow      = 100
	sqliteDone     = 101
	sqliteInteger  = 1
	sqliteFloat    = 2
	sqliteText     = 3
	sqliteBlob     = 4
	sqliteNull     = 5
	openReadOnly   = 0x00000001
	openURI        = 0x00000040
	openNoMutex    = 0x00008000
	openPrivateCch = 0x00040000
)

// memStatusOff is what turning SQLite's memory statistics off returned (0
// when they are off). SQLite counts every allocation under one mutex of
// the process while they are on, so that the audits of many ranks at once,
// each with connections of its own, queue on it; nothing here reads the
// statistics. It is done when the program starts, before any connection.
var memStatusOff = int(C.memstatus_off())

// Available reports whether batches can be read in this build.
const Available = true

// Conn is one read-only connection.
type Conn struct {
	db *C.sqlite3
}

// Open opens the database the SQLite URI names (file:...?mode=ro...), read
// only.
func Open(uri string) (*Conn, error) {
	cu := C.CString(uri)
	defer C.free(unsafe.Pointer(cu))
	var db *C.sqlite3
	rc := C.sqlite3_open_v2(cu, &db, openReadOnly|openURI|openNoMutex|openPrivateCch, nil)
	if rc != 0 {
		msg := C.GoString(C.sqlite3_errstr(rc))
		if db != nil {
			msg = C.GoString(C.sqlite3_errmsg(db))
			C.sqlite3_close_v2(db)
		}
		return nil, fmt.Errorf("cannot open %s: %s", uri, msg)
	}
	return &Conn{db: db}, nil
}

// Close closes the connection.
func (c *Conn) Close() error {
	if c.db != nil {
		C.sqlite3_close_v2(c.db)
		c.db = nil
	}
	return nil
}

// Rows is one query's rows.
type Rows struct {
	c     *Conn
	stmt  *C.sqlite3_stmt
	cols  []string
	done  bool
	err   error
	stop  chan struct{}
	wg    sync.WaitGroup
	stops sync.Once
}

// Query prepares and starts query, every column of which is to be read as
// an integer; cancelling ctx interrupts it (sqlite3_interrupt), and the
// next Next reports ctx's error.
func (c *Conn) Query(ctx context.Context, query string) (*Rows, error) {
	cq := C.CString(query)
	defer C.free(unsafe.Pointer(cq))
	var stmt *C.sqlite3_stmt
	if rc := C.sqlite3_prepare_v2(c.db, cq, -1, &stmt, nil); rc != 0 {
		return nil, errors.New(C.GoString(C.sqlite3_errmsg(c.db)))
	}
	r := &Rows{c: c, stmt: stmt, stop: make(chan struct{})}
	for i := range int(C.sqlite3_column_count(stmt)) {
		r.cols = append(r.cols, C.GoString(C.sqlite3_column_name(stmt, C.int(i))))
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		select {
		case <-ctx.Done():
			C.sqlite3_interrupt(c.db)
		case <-r.stop:
		}
	}()
	return r, nil
}

// Columns names the query's columns.
func (r *Rows) Columns() []string { return r.cols }

// Next reads the next rows into out, len(out)/len(Columns()) at most, and
// returns how many; 0 with a nil error once the rows are done. A value that
// is not an integer is converted, or refused, as database/sql's Scan into an
// *int64 would (its error's words, naming the column).
func (r *Rows) Next(ctx context.Context, out []int64) (int, error) {
	if r.err != nil || r.done {
		return 0, r.err
	}
	ncol := len(r.cols)
	max := len(out) / ncol
	if max == 0 {
		return 0, errors.New("sqlitebatch: no room for a row")
	}
	n := 0
	for n < max {
		var rc, bad C.int
		got := int(C.step_batch(r.stmt, C.int(ncol), (*C.sqlite3_int64)(unsafe.Pointer(&out[n*ncol])), C.int(max-n), &rc, &bad))
		n += got
		if bad >= 0 {
			// The row it stopped on has a value that is not an integer:
			// convert it as Scan would, or fail.
			if err := r.convertRow(out[n*ncol : (n+1)*ncol]); err != nil {
				r.err = err
				return n, err
			}
			n++
			continue
		}
		switch rc {
		case sqliteRow:
		case sqliteDone:
			r.done = true
			return n, nil
		default:
			if err := ctx.Err(); err != nil {
				r.err = err
			} else {
				r.err = errors.New(C.GoString(C.sqlite3_errmsg(r.c.db)))
			}
			return n, r.err
		}
	}
	return n, nil
}

// convertRow reads the current row's values one by one into v.
func (r *Rows) convertRow(v []int64) error {
	for i := range v {
		var err error
		if v[i], err = r.intAt(i); err != nil {
			return fmt.Errorf("sql: Scan error on column index %d, name %q: %w", i, r.cols[i], err)
		}
	}
	return nil
}

// intAt is column i of the current row as Scan into an *int64 gives it.
func (r *Rows) intAt(i int) (int64, error) {
	ci := C.int(i)
	var s, typ string
	switch C.sqlite3_column_type(r.stmt, ci) {
	case sqliteInteger:
		return int64(C.sqlite3_column_int64(r.stmt, ci)), nil
	case sqliteNull:
		return 0, errors.New("converting NULL to int64 is unsupported")
	case sqliteFloat:
		s, typ = strconv.FormatFloat(float64(C.sqlite3_column_double(r.stmt, ci)), 'g', -1, 64), "float64"
	case sqliteBlob:
		s, typ = r.text(ci), "[]uint8"
	default:
		s, typ = r.text(ci), "string"
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok {
			err = ne.Err
		}
		return 0, fmt.Errorf("converting driver.Value type %s (%q) to a int64: %v", typ, s, err)
	}
	return v, nil
}

func (r *Rows) text(ci C.int) string {
	p := C.sqlite3_column_text(r.stmt, ci)
	if p == nil {
		return ""
	}
	return C.GoStringN((*C.char)(unsafe.Pointer(p)), C.sqlite3_column_bytes(r.stmt, ci))
}

// Close ends the query.
func (r *Rows) Close() error {
	r.stops.Do(func() {
		close(r.stop)
		r.wg.Wait()
		C.sqlite3_finalize(r.stmt)
	})
	return nil
}
