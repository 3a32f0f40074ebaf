package sqlitefile

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"path/filepath"
	"sync"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/nsyscheck/nsyscheck/internal/sqlitebatch"
)

// This file is the one place nsyscheck opens a capture's SQLite database:
// the pool of database/sql connections Open returns, and the batch
// connection a reader's long scans step on (OpenBatch). Each connection
// SQLite opens is one open of the file; CountOpens counts them.

// PoolSize is how many connections an opened database holds at most: the
// stream's, and one that the checks beside it (SQLite's integrity check,
// the checks over whole tables, the exposure scan) take in turn. A third
// user waits for one of them to be given back, so one verify or audit
// opens the file at most four times: the handle source holds, these two,
// and the stream's batch connection.
const PoolSize = 2

// connector opens connections of the SQLite driver to one database,
// counting each as an open of path.
type connector struct {
	dsn, path string
	drv       *sqlite3.SQLiteDriver
}

// Connect opens one connection.
func (c connector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err == nil {
		noteOpen(c.path)
	}
	return conn, err
}

// Driver is the SQLite driver.
func (c connector) Driver() driver.Driver { return c.drv }

// DB is an SQLite database opened for reading (Open): a pool of at most
// PoolSize database/sql connections, the batch connection the readers'
// long scans step on (Batch), opened once, and whether SQLite's
// integrity check passed on it (Integrity), run once.
type DB struct {
	*sql.DB
	path     string
	batchURI string // the same file, read only

	mu       sync.Mutex
	batch    *sqlitebatch.Conn
	lent     bool // batch is in use
	checked  bool // the integrity check passed
	checking sync.Mutex
}

// openDB opens the database the SQLite URI dsn names, a copy of path's
// or path itself, as a pool of at most PoolSize connections; batchURI
// names the same file for the batch connection.
func openDB(dsn, batchURI, path string) *DB {
	db := sql.OpenDB(connector{dsn: dsn, path: path, drv: &sqlite3.SQLiteDriver{}})
	db.SetMaxOpenConns(PoolSize)
	db.SetMaxIdleConns(PoolSize)
	return &DB{DB: db, path: path, batchURI: batchURI}
}

// Batch lends the database's batch connection (sqlitebatch), opened on the
// first call and kept for the next reader: one reader after another open
// the file once for their scans. Give it back with done; a second reader
// while the first holds it gets one of its own, closed by done.
func (d *DB) Batch() (c *sqlitebatch.Conn, done func(), err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lent {
		c, err := d.openBatch()
		if err != nil {
			return nil, nil, err
		}
		return c, func() { c.Close() }, nil
	}
	if d.batch == nil {
		if d.batch, err = d.openBatch(); err != nil {
			return nil, nil, err
		}
	}
	d.lent = true
	return d.batch, func() {
		d.mu.Lock()
		d.lent = false
		d.mu.Unlock()
	}, nil
}

// openBatch opens a batch connection to the database.
func (d *DB) openBatch() (*sqlitebatch.Conn, error) {
	c, err := sqlitebatch.Open(d.batchURI)
	if err == nil {
		noteOpen(d.path)
	}
	return c, err
}

// Integrity runs SQLite's integrity check (the function Integrity) on
// conn, one of d's connections, unless it passed on d before: a file read
// twice is checked once.
func (d *DB) Integrity(ctx context.Context, conn Querier) error {
	d.checking.Lock()
	defer d.checking.Unlock()
	if d.checked {
		return nil
	}
	if err := Integrity(ctx, conn, d.path); err != nil {
		return err
	}
	d.checked = true
	return nil
}

// Close closes the batch connection and the pool.
func (d *DB) Close() error {
	d.mu.Lock()
	if d.batch != nil {
		d.batch.Close()
		d.batch = nil
	}
	d.mu.Unlock()
	return d.DB.Close()
}

// opens counts the opens of each file while CountOpens is on (nil: off).
var opens struct {
	sync.Mutex
	n map[string]int
}

// noteOpen counts one open of path, when counting.
func noteOpen(path string) {
	opens.Lock()
	defer opens.Unlock()
	if opens.n != nil {
		opens.n[absPath(path)]++
	}
}

// absPath is path made absolute where it can be.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// CountOpens starts counting the opens of SQLite databases (the file
// handle Open is given, each connection of its pool, each batch
// connection), for tests that hold the count: count tells how many there
// were of path so far, stop ends counting.
func CountOpens() (count func(path string) int, stop func()) {
	opens.Lock()
	opens.n = map[string]int{}
	opens.Unlock()
	count = func(path string) int {
		opens.Lock()
		defer opens.Unlock()
		return opens.n[absPath(path)]
	}
	return count, func() {
		opens.Lock()
		opens.n = nil
		opens.Unlock()
	}
}
