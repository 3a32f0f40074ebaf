package nsyssqlite

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/records"
)

// A name an ENUM_* table defines at two ids is refused, naming the table
// and both ids, whether the enum is one every reading needs (copy kinds,
// memory kinds, NVTX event types) or one read only where the export has
// it (synchronisation kinds, nsys's message levels): which of the ids the
// records mean by it is unclear, and a record of the other would be read
// as what it is not. The shipped export reads.
func TestEnumNameAtTwoIDs(t *testing.T) {
	const shipped = "../testdata/captures/h200-pinned/pinned.sqlite"
	h := auditHandler()
	h.Range = func(*records.Range) error { return nil }
	h.Diag = func(*records.NsysDiag) error { return nil }
	read := func(p string) error {
		_, err := Read(context.Background(), open(t, p), p, records.Selection{JoinCalls: true}, h)
		return err
	}
	if err := read(shipped); err != nil {
		t.Fatalf("the shipped export: %v", err)
	}
	cases := []struct {
		table, stmt, want string
	}{
		{"ENUM_CUDA_MEMCPY_OPER", `UPDATE ENUM_CUDA_MEMCPY_OPER SET name = 'CUDA_MEMCPY_KIND_HTOD' WHERE id = 2`,
			"CUDA_MEMCPY_KIND_HTOD is defined at two ids, 1 and 2, so which of them the records mean by it is unclear"},
		{"ENUM_CUDA_MEM_KIND", `UPDATE ENUM_CUDA_MEM_KIND SET name = 'CUDA_MEMOPR_MEMORY_KIND_PINNED' WHERE id = 0`,
			"CUDA_MEMOPR_MEMORY_KIND_PINNED is defined at two ids, 0 and 1"},
		{"ENUM_NSYS_EVENT_TYPE", `UPDATE ENUM_NSYS_EVENT_TYPE SET name = 'NvtxPushPopRange' WHERE id = 70`,
			"NvtxPushPopRange is defined at two ids, 59 and 70"},
		{"ENUM_CUPTI_SYNC_TYPE", `UPDATE ENUM_CUPTI_SYNC_TYPE SET name = 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE' WHERE id = 3`,
			"CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE is defined at two ids, 1 and 3"},
		{"ENUM_DIAGNOSTIC_SEVERITY_LEVEL", `UPDATE ENUM_DIAGNOSTIC_SEVERITY_LEVEL SET name = (SELECT name FROM ENUM_DIAGNOSTIC_SEVERITY_LEVEL ORDER BY id LIMIT 1) WHERE id = (SELECT max(id) FROM ENUM_DIAGNOSTIC_SEVERITY_LEVEL)`,
			"is defined at two ids"},
	}
	for _, tc := range cases {
		t.Run(tc.table, func(t *testing.T) {
			p := fixture.SQLite(t, shipped, tc.stmt)
			err := read(p)
			var ie *inputerr.Error
			if !errors.As(err, &ie) || ie.Path != p || ie.Where != "table "+tc.table || !strings.Contains(ie.Problem, tc.want) || !strings.Contains(ie.Hint, "export it again") {
				t.Errorf("got %v, want table %s: %q", err, tc.table, tc.want)
			}
		})
	}
}
