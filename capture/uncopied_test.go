package capture

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/source"
)

// traceScan reads path as the audit does (TraceOf, every call read).
func traceScan(t *testing.T, path string) (*CopyScan, error) {
	t.Helper()
	var opts Options
	src, err := source.Open(opts.context(), path, opts.sourceOptions(nsysdb.KindUnknown))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	return TraceOf(opts.context(), src, func(*CopyScan) records.Handler {
		return records.Handler{Call: func(*records.Call) error { return nil }, Op: func(*records.Op) error { return nil }}
	})
}

// Calls of copy APIs that no copy record joins are missing data: more than
// UncopiedShare of them refuse the audit, fewer are counted for a warning;
// a copy call made inside a stream capture makes no copy and counts not.
func TestUncopiedCalls(t *testing.T) {
	scan, err := traceScan(t, shippedSQLite)
	if err != nil || len(scan.Uncopied) != 0 || scan.CopyCalls != 305 {
		t.Fatalf("the shipped capture: %v, %+v", err, scan)
	}
	// Every async call's copy deleted: 22 of 305, refused.
	_, err = traceScan(t, fixture.SQLite(t, shippedSQLite, `DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE `+asyncCopies))
	var ie *inputerr.Error
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "22 of the 305 copy calls in CUPTI_ACTIVITY_KIND_RUNTIME have no copy record (22 cudaMemcpyAsync)") {
		t.Errorf("22 of 305 without copies: %v", err)
	}
	// Four of 305 (1.3%) refused; one (0.3%) counted.
	if _, err := traceScan(t, fixture.SQLite(t, shippedSQLite, `DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE rowid IN (SELECT rowid FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE `+asyncCopies+` LIMIT 4)`)); err == nil {
		t.Errorf("4 of 305 without copies: no error")
	}
	scan, err = traceScan(t, fixture.SQLite(t, shippedSQLite, `DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE `+asyncCopies+`)`))
	if err != nil || len(scan.Uncopied) != 1 || scan.Uncopied[0] != (APICount{API: "cudaMemcpyAsync", Calls: 1}) {
		t.Errorf("1 of 305 without copies: %v, %+v", err, scan)
	}
	// graph-whole records two cudaMemcpyAsync calls into its graph inside a
	// stream capture: no copy record, and none expected (10 of its 12 copy
	// calls ran).
	scan, err = traceScan(t, filepath.Join("..", "testdata", "captures", "graph-whole", "graph-whole.sqlite"))
	if err != nil || len(scan.Uncopied) != 0 || scan.CopyCalls != 10 {
		t.Errorf("calls inside a stream capture: %v, %+v", err, scan)
	}
}
