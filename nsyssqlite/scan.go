package nsyssqlite

import (
	"context"
	"fmt"
	"runtime/trace"

	"github.com/nsyscheck/nsyscheck/internal/sqlitebatch"
)

// batchRows is how many rows a batch of ints carries from the goroutine
// that steps a query to the one that consumes it.
const batchRows = 1024

// intBatch is one batch of rows of integer columns, row after row.
type intBatch struct {
	v   []int64
	n   int // rows
	err error
}

// ints runs query, each of whose n columns is an integer, and hands each
// row's values to row, in the caller's goroutine, while another goroutine
// steps the query on a connection of its own (sqlitebatch: a batch of rows
// per call into SQLite, without database/sql's conversions): SQLite's work
// and the consumer's run side by side, two batches apart at most. A value
// that is no integer is an error, in Scan's words. An error of row stops the
// query and is returned; so is the query's own, and ctx's once it is
// cancelled (the query is interrupted).
func (r *reader) ints(query string, n int, row func(v []int64) error) error {
	bc, err := r.batchConn()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	rows, err := bc.Query(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	if len(rows.Columns()) != n {
		return fmt.Errorf("the query gives %d columns, not %d", len(rows.Columns()), n)
	}
	free := make(chan *intBatch, 2)
	full := make(chan *intBatch, 2)
	for range 2 {
		free <- &intBatch{v: make([]int64, n*batchRows)}
	}
	go func() {
		defer close(full)
		defer trace.StartRegion(ctx, "sqlite steps").End()
		for {
			var b *intBatch
			select {
			case b = <-free:
			case <-ctx.Done():
				full <- &intBatch{err: ctx.Err()}
				return
			}
			b.n, b.err = rows.Next(ctx, b.v)
			full <- b
			if b.n == 0 || b.err != nil {
				return
			}
		}
	}()
	var failed error
	for b := range full {
		if failed == nil {
			for k := 0; k < b.n && failed == nil; k++ {
				failed = row(b.v[k*n : (k+1)*n])
			}
			if failed == nil {
				failed = b.err
			}
			if failed != nil {
				cancel() // the stepping goroutine stops at its next batch
			}
		}
		select {
		case free <- b:
		default:
		}
	}
	return failed
}

// batchConn is the reader's connection for ints: the database's batch
// connection (sqlitefile.DB.Batch), taken once and given back when the
// read ends.
func (r *reader) batchConn() (*sqlitebatch.Conn, error) {
	if r.batch != nil {
		return r.batch, nil
	}
	bc, done, err := r.db.Batch()
	if err != nil {
		return nil, err
	}
	r.batch, r.batchDone = bc, done
	return bc, nil
}
