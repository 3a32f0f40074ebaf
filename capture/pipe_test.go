package capture

import (
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"path/filepath"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/source"
)

// The audit's pass (TraceThenCheck) hands the calls and copies to its
// consumers on a goroutine of their own (records.Pipe); TraceOf hands them
// on in the reader's goroutine. These tests hold the two alike: the same
// records in the same order, and the same error where a consumer fails, the
// export is damaged or the read is cancelled mid-stream.

// stream is one pass's record of what its consumer was given.
type stream struct {
	sum     hash.Hash // of every record, in order
	records int
	calls   int
	copies  int
}

// passOf reads path through TraceThenCheck (piped) or TraceOf (serial) into
// a consumer that sums every record it is given and calls at, where not
// nil, with each call and each copy as it comes (the nth of its kind, from
// 1); at's error is the consumer's.
func passOf(t *testing.T, ctx context.Context, path string, piped bool, at func(kind string, n int) error) (*stream, error) {
	t.Helper()
	src, err := source.Open(ctx, path, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	s := &stream{sum: sha256.New()}
	note := func(v ...any) {
		s.records++
		fmt.Fprintln(s.sum, v...)
	}
	feed := func(*CopyScan) records.Handler {
		return records.Handler{
			Meta:  func(m *records.Meta) error { note("meta", *m); return nil },
			Gap:   func(g records.Gap) error { note("gap", g); return nil },
			Range: func(r *records.Range) error { note("range", *r); return nil },
			Call: func(c *records.Call) error {
				note("call", callOf(c))
				if s.calls++; at != nil {
					return at("call", s.calls)
				}
				return nil
			},
			Op: func(o *records.Op) error {
				op := *o
				op.Call = nil
				note("op", op)
				if o.Call != nil {
					note("op's call", callOf(o.Call))
				}
				if o.Kind == records.OpCopy {
					if s.copies++; at != nil {
						return at("copy", s.copies)
					}
				}
				return nil
			},
			Sync:   func(y *records.Sync) error { note("sync", *y); return nil },
			Event:  func(e *records.EventRecord) error { note("event", *e); return nil },
			Graph:  func(g *records.GraphLaunch) error { note("graph", *g); return nil },
			Counts: func(c *records.Counts) error { note("counts", *c); return nil },
		}
	}
	if !piped {
		_, err = TraceOf(ctx, src, feed)
		return s, err
	}
	_, checked, err := TraceThenCheck(ctx, src, feed)
	if err == nil {
		err = checked()
	}
	return s, err
}

// callOf is a call's values and its stack's, without the stack's address.
func callOf(c *records.Call) []any {
	v := *c
	v.Stack = nil
	if c.Stack == nil {
		return []any{v}
	}
	return []any{v, *c.Stack}
}

// bothPasses reads path both ways and fails the test where they differ in
// what their consumers were given or in their error; it returns the
// serial pass and its error.
func bothPasses(t *testing.T, path string, at func(ctx context.Context, cancel func()) func(kind string, n int) error) (*stream, error) {
	t.Helper()
	run := func(piped bool) (*stream, error) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var f func(string, int) error
		if at != nil {
			f = at(ctx, cancel)
		}
		return passOf(t, ctx, path, piped, f)
	}
	serial, serr := run(false)
	for range 3 { // the pipe's timing differs from run to run
		piped, perr := run(true)
		if fmt.Sprint(perr) != fmt.Sprint(serr) {
			t.Errorf("%s: piped: %v\nserial: %v", path, perr, serr)
		}
		if serr == nil && (piped.records != serial.records || string(piped.sum.Sum(nil)) != string(serial.sum.Sum(nil))) {
			t.Errorf("%s: piped, %d records (%d calls, %d copies) given, not those of the serial pass (%d: %d calls, %d copies)",
				path, piped.records, piped.calls, piped.copies, serial.records, serial.calls, serial.copies)
		}
	}
	return serial, serr
}

// TestPipedPassAsSerial: on every shipped SQLite export the piped pass gives
// its consumer the records the serial one gives, in the same order.
func TestPipedPassAsSerial(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "captures", "*", "*.sqlite"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no shipped exports: %v", err)
	}
	for _, p := range paths {
		s, err := bothPasses(t, p, nil)
		if err == nil && s.copies == 0 {
			t.Errorf("%s: no copy given", p)
		}
	}
}

// TestPipedPassErrors: where the consumer refuses a call or a copy (the
// first, one a few batches in, the last), the export has a NULL where a
// copy's start belongs, or the read is cancelled mid-stream, the piped
// pass stops with the serial pass's error, named the same way.
func TestPipedPassErrors(t *testing.T) {
	path := filepath.Join("..", "testdata", "captures", "many-copies-small", "many-copies-small.sqlite")
	all, err := bothPasses(t, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if all.copies < 4*records.PipeBatch {
		t.Fatalf("%s: %d copies, too few to fill the pipe", path, all.copies)
	}
	refuse := func(kind string, n int) func(context.Context, func()) func(string, int) error {
		return func(context.Context, func()) func(string, int) error {
			return func(k string, i int) error {
				if k == kind && i == n {
					return fmt.Errorf("the consumer refuses %s %d", k, i)
				}
				return nil
			}
		}
	}
	for _, c := range []struct {
		kind string
		n    int
	}{{"call", 1}, {"call", 3*records.PipeBatch + 5}, {"call", all.calls}, {"copy", 1}, {"copy", 2*records.PipeBatch + 1}, {"copy", all.copies}} {
		if _, err := bothPasses(t, path, refuse(c.kind, c.n)); err == nil {
			t.Errorf("refusing %s %d: no error", c.kind, c.n)
		}
	}
	cancelAt := func(n int) func(context.Context, func()) func(string, int) error {
		return func(_ context.Context, cancel func()) func(string, int) error {
			return func(k string, i int) error {
				if k == "copy" && i == n {
					cancel()
				}
				return nil
			}
		}
	}
	if _, err := bothPasses(t, path, cancelAt(all.copies/2)); err == nil {
		t.Error("cancelled mid-stream: no error")
	}
	// An edited export: a copy's start NULL (its table rebuilt without
	// nsys's NOT NULL), a call's end a word.
	m := nsysdb.TableMemcpy
	broken := fixture.SQLite(t, path, `CREATE TABLE nullable AS SELECT * FROM `+m, `DROP TABLE `+m, `ALTER TABLE nullable RENAME TO `+m,
		`UPDATE `+m+` SET start = NULL WHERE rowid = 7000`)
	if _, err := bothPasses(t, broken, nil); err == nil {
		t.Error("a NULL start in the copies: no error")
	}
	broken = fixture.SQLite(t, path, `UPDATE `+nsysdb.TableRuntime+` SET "end" = 'late' WHERE rowid = 9000`)
	if _, err := bothPasses(t, broken, nil); err == nil {
		t.Error("a word for a call's end: no error")
	}
}
