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

// nullable rebuilds a table of an export without its NOT NULL
// constraints (nsys declares them; an edited export may lack them), rows in
// their order.
func nullable(table string) []string {
	return []string{`CREATE TABLE nullable_copy AS SELECT * FROM ` + table, `DROP TABLE ` + table, `ALTER TABLE nullable_copy RENAME TO ` + table}
}

// A NULL where nsys always writes a value, and where it decides the answer
// (a copy's stream, a call's name, times, sizes, kinds), is refused with
// the table, the column and the first row named, not read as 0 or left out.
func TestNullColumns(t *testing.T) {
	const oneCopy = `WHERE rowid = 128`
	cases := []struct{ name, stmt, table, want string }{
		{"NULL streamId", `UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET streamId = NULL ` + oneCopy, "CUPTI_ACTIVITY_KIND_MEMCPY", "column streamId is NULL in 1 row (the first: rowid 128)"},
		{"NULL start", `UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET start = NULL ` + oneCopy, "CUPTI_ACTIVITY_KIND_MEMCPY", "column start is NULL in 1 row (the first: rowid 128)"},
		{"NULL bytes on every copy", `UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = NULL`, "CUPTI_ACTIVITY_KIND_MEMCPY", "column bytes is NULL in 207 rows (the first: rowid 1)"},
		{"NULL nameId", `UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = NULL WHERE rowid = 164`, "CUPTI_ACTIVITY_KIND_RUNTIME", "column nameId is NULL in 1 row (the first: rowid 164): API calls without a name"},
	}
	h := records.Handler{Call: func(*records.Call) error { return nil }, Op: func(*records.Op) error { return nil }}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := fixture.SQLite(t, trainPinned, append(nullable(tc.table), tc.stmt)...)
			_, err := Read(context.Background(), open(t, p), p, records.Selection{}, h)
			var ie *inputerr.Error
			if !errors.As(err, &ie) || ie.Where != "table "+tc.table || !strings.Contains(ie.Problem, tc.want) {
				t.Errorf("got %v, want table %s: %q", err, tc.table, tc.want)
			}
		})
	}
}
