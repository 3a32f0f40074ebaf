//go:build !cgo

package sqlitebatch

import (
	"context"
	"errors"
)

// Available reports whether batches can be read in this build: not without
// cgo, which SQLite needs.
const Available = false

var errNoCgo = errors.New("sqlitebatch: this build has no SQLite (built without cgo)")

// Conn is one read-only connection.
type Conn struct{}

// Open fails: this build has no SQLite.
func Open(string) (*Conn, error) { return nil, errNoCgo }

// Close does nothing.
func (*Conn) Close() error { return nil }

// Rows is one query's rows.
type Rows struct{}

// Query fails: this build has no SQLite.
func (*Conn) Query(context.Context, string) (*Rows, error) { return nil, errNoCgo }

// Columns names no column.
func (*Rows) Columns() []string { return nil }

// Next reads nothing.
func (*Rows) Next(context.Context, []int64) (int, error) { return 0, errNoCgo }

// Close does nothing.
func (*Rows) Close() error { return nil }
