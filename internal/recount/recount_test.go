package recount_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"github.com/nsyscheck/nsyscheck/internal/recount"
)

func countText(t *testing.T, db *sql.DB) string {
	t.Helper()
	var s string
	if err := db.QueryRow(`SELECT text FROM DIAGNOSTIC_EVENT WHERE text LIKE 'Number of CUDA events collected%'`).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func openCopy(t *testing.T, src string) *sql.DB {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "copy.sqlite")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// On every shipped export nsys's own count is the records the export
// holds (call stacks' rows aside, as in torch-prefetch-backtrace), so
// recounting leaves the message as nsys wrote it; after an edit it
// follows the records.
func TestCUDAEvents(t *testing.T) {
	files, err := filepath.Glob("../../testdata/captures/*/*.sqlite")
	if err != nil || len(files) < 20 {
		t.Fatalf("shipped exports: %v, %d", err, len(files))
	}
	for _, f := range files {
		db := openCopy(t, f)
		before := countText(t, db)
		if err := recount.CUDAEvents(db); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if after := countText(t, db); after != before {
			t.Errorf("%s: recounted %q, nsys wrote %q", f, after, before)
		}
	}
	db := openCopy(t, "../../testdata/captures/h200-pinned/pinned.sqlite")
	if _, err := db.Exec(`DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid % 4 = 0`); err != nil {
		t.Fatal(err)
	}
	if err := recount.CUDAEvents(db); err != nil {
		t.Fatal(err)
	}
	if got, want := countText(t, db), "Number of CUDA events collected: \t802."; got != want {
		t.Errorf("after 7 of 28 kernels deleted: %q, want %q", got, want)
	}
}
