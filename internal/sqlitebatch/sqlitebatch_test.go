//go:build cgo

package sqlitebatch

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
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

// TestMixedRowsAsDatabaseSQL: rows of one to four columns whose values are
// integers but for a few (text, a whole float, NULL further on), read in
// batches of any size, are the values database/sql scans, up to the error
// it meets, with its words: the values found at the stride of a batch's
// first row, and those converted on the row a batch stops at.
func TestMixedRowsAsDatabaseSQL(t *testing.T) {
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
	rows := []string{"1, 2, 3, 4", "5, '6', 7, 8", "9, 10, 11.0, 12", "13, 14, 15, 16", "-17, 18, 19, '20'", "21, 22, 23, 24", "NULL, 26, 27, 28"}
	for ncol := 1; ncol <= 4; ncol++ {
		for upTo := 1; upTo <= len(rows); upTo++ {
			q := `WITH t(a, b, c, d) AS (VALUES (` + strings.Join(rows[:upTo], `), (`) + `)) SELECT ` + strings.Join([]string{"a", "b", "c", "d"}[:ncol], ", ") + ` FROM t`
			var want []int64
			var werr error
			sr, err := db.Query(q)
			if err != nil {
				t.Fatal(err)
			}
			for sr.Next() {
				v := make([]int64, ncol)
				ptrs := make([]any, ncol)
				for i := range v {
					ptrs[i] = &v[i]
				}
				if werr = sr.Scan(ptrs...); werr != nil {
					break
				}
				want = append(want, v...)
			}
			sr.Close()
			for _, batch := range []int{1, 2, 3, 100} {
				r, err := c.Query(context.Background(), q)
				if err != nil {
					t.Fatal(err)
				}
				var got []int64
				var gerr error
				buf := make([]int64, ncol*batch)
				for {
					n, err := r.Next(context.Background(), buf)
					got = append(got, buf[:ncol*n]...)
					if gerr = err; err != nil || n == 0 {
						break
					}
				}
				r.Close()
				switch {
				case !slices.Equal(got, want):
					t.Errorf("%d columns, %d rows, batches of %d: %v, want %v", ncol, upTo, batch, got, want)
				case (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error():
					t.Errorf("%d columns, %d rows, batches of %d: %v, want %v", ncol, upTo, batch, gerr, werr)
				}
			}
		}
	}
}
