//go:build cgo

package sqlitefile

import (
	"context"
	"os"
	"sync"
	"testing"
)

// TestDBConnections opens a shipped export and counts what opens it: the
// handle, at most PoolSize connections however many steps ask at once,
// and one batch connection lent to one reader after another (a second
// reader while the first holds it gets its own, closed by done).
func TestDBConnections(t *testing.T) {
	path := "../../testdata/captures/train-pinned/train-pinned.sqlite"
	count, stop := CountOpens()
	defer stop()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	db, cleanup, err := Open(path, f)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	defer db.Close()
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			if err := db.Integrity(ctx, conn); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := count(path); n > 1+PoolSize {
		t.Errorf("the handle and the pool opened the file %d times, want %d at most", n, 1+PoolSize)
	}
	before := count(path)
	first, done, err := db.Batch()
	if err != nil {
		t.Fatal(err)
	}
	other, otherDone, err := db.Batch()
	if err != nil {
		t.Fatal(err)
	}
	if other == first {
		t.Error("a second reader was lent the batch connection the first holds")
	}
	otherDone()
	done()
	again, done, err := db.Batch()
	if err != nil {
		t.Fatal(err)
	}
	done()
	if again != first {
		t.Error("the next reader got a new batch connection, not the one given back")
	}
	if n := count(path) - before; n != 2 {
		t.Errorf("three readers one after another, two at once, opened %d batch connections, want 2", n)
	}
}
