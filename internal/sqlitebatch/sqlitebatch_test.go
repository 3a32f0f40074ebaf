//go:build cgo

package sqlitebatch

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"

	_ "github.com/mattn/go-sqlite3"
)

func uri(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return "file:" + abs + "?mode=ro&immutable=1"
}

// TestRowsAsDatabaseSQL: the rows read in batches (of any size) are those
// database/sql scans, in its order.
func TestRowsAsDatabaseSQL(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "captures", "many-copies-small", "many-copies-small.sqlite")
	const q = `SELECT start, "end", ifnull(correlationId, 0), ifnull(globalTid, 0), nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME`
	db, err := sql.Open("sqlite3", uri(t, path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for rows.Next() {
		v := make([]int64, 5)
		if err := rows.Scan(&v[0], &v[1], &v[2], &v[3], &v[4]); err != nil {
			t.Fatal(err)
		}
		want = append(want, v...)
	}
	rows.Close()
	c, err := Open(uri(t, path))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, batch := range []int{1, 7, 1024, 100000} {
		r, err := c.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Columns(), []string{"start", "end", "ifnull(correlationId, 0)", "ifnull(globalTid, 0)", "nameId"}) {
			t.Errorf("columns %q", r.Columns())
		}
		var got []int64
		buf := make([]int64, 5*batch)
		for {
			n, err := r.Next(context.Background(), buf)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			got = append(got, buf[:5*n]...)
		}
		r.Close()
		if !slices.Equal(got, want) {
			t.Errorf("batches of %d: %d values, want database/sql's %d", batch, len(got), len(want))
		}
	}
}

// TestValuesAsScan: a value that is not an integer is converted, or
// refused with the words of database/sql's Scan into an *int64.
func TestValuesAsScan(t *testing.T) {
	c, err := Open("file::memory:?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	db, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, v := range []string{"7", "'12'", "2.0", "1e308", "'twenty-two'", "x'3132'", "NULL", "1.5", "1e6"} {
		q := `SELECT 1, ` + v
		var a, b int64
		werr := db.QueryRow(q).Scan(&a, &b)
		r, err := c.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]int64, 2)
		n, gerr := r.Next(context.Background(), out)
		r.Close()
		switch {
		case werr == nil && (gerr != nil || n != 1 || out[1] != b):
			t.Errorf("%s: %d rows %v, %v; want %d", v, n, out, gerr, b)
		case werr != nil && (gerr == nil || gerr.Error() != werr.Error()):
			t.Errorf("%s: %v, want %v", v, gerr, werr)
		}
	}
}

// TestInterrupt: a cancelled context stops a query that steps on without
// a row to give.
func TestInterrupt(t *testing.T) {
	c, err := Open("file::memory:?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r, err := c.Query(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n WHERE i < 0`)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cancel()
	if _, err := r.Next(ctx, make([]int64, 8)); err == nil {
		t.Error("a cancelled query went on")
	}
}

// TestMemStatusOff: SQLite's memory statistics, counted under one mutex of
// the whole process, are off before the first connection opens.
func TestMemStatusOff(t *testing.T) {
	if memStatusOff != 0 {
		t.Fatalf("sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) returned %d", memStatusOff)
	}
}
