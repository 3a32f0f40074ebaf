package nsysrule

import (
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
)

// TestListsIsTheRulesSQL: the rule's definition as the scan applies it
// (Lists, RowOf, SortRows) gives, over every pair of memory kinds and
// every copy API and near miss, the rows of the stand-in's SQL
// (testdata/programs/nsys-rule-standin.sh, which TestRuleStandIn holds to
// the real rule's output) run on the same copies: which copies, their
// columns, their sizes' rounding and their order. A memory kind or an API
// dropped from the definition, or one added, fails it.
func TestListsIsTheRulesSQL(t *testing.T) {
	script, err := os.ReadFile("../testdata/programs/nsys-rule-standin.sh")
	if err != nil {
		t.Fatal(err)
	}
	_, query, ok := strings.Cut(string(script), "<<'SQL'\n")
	if query, _, ok = strings.Cut(query, "\nSQL\n"); !ok {
		t.Fatal("no SQL heredoc in the stand-in")
	}
	db, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)`)
	exec(`CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT, label TEXT)`)
	exec(`CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INT, "end" INT, correlationId INT, globalTid INT, nameId INT)`)
	exec(`CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INT, "end" INT, srcKind INT, dstKind INT, bytes INT, globalPid INT,
		deviceId INT, contextId INT, greenContextId INT, streamId INT, correlationId INT)`)
	kinds := []struct{ name, label string }{
		{"PAGEABLE", "Pageable"}, {"PINNED", "Pinned"}, {"DEVICE", "Device"}, {"ARRAY", "Array"},
		{"MANAGED", "Managed"}, {"DEVICE_STATIC", "Device Static"}, {"MANAGED_STATIC", "Managed Static"}, {"UNKNOWN", "Unknown"},
	}
	for i, k := range kinds {
		exec(`INSERT INTO ENUM_CUDA_MEM_KIND VALUES (?, ?, ?)`, i, "CUDA_MEMOPR_MEMORY_KIND_"+k.name, k.label)
	}
	apis := []string{"cudaMemcpyAsync_v3020", "cudaMemcpyAsync", "cudaMemcpy2DAsync_v3020", "cudaMemcpy3DAsync_v3020",
		"cudaMemcpyToSymbolAsync_v3020", "cudaMemcpyFromSymbolAsync_v3020", "cudaMemcpyPeerAsync_v4000",
		"cudaMemcpyBatchAsync_v12080", "cudaMemcpyAsync_ptsz_v7000", "CUDAMEMCPYASYNC", "cudaMemcpy_v3020", "cudaMemcpy2D_v3020",
		"cuMemcpyHtoDAsync_v2", "cuMemcpyAsync", "cudaMemsetAsync_v3020", "cudaMemPrefetchAsync_v8000", "cudaGraphLaunch_v10000"}
	for i, a := range apis {
		exec(`INSERT INTO StringIds VALUES (?, ?)`, i+1, a)
	}
	const pid, gpid = 22, 22 << 24
	sizes := []int64{1, 500, 1500, 2500, 4096, 74000, 999999500, 67108864, 33554432, 3145728}
	var ops []*records.Op
	n := 0
	for ai, a := range apis {
		for src := range kinds {
			for dst := range kinds {
				n++
				start, dur, bytes := int64(1_000_000+n*1000), int64(100+(n*37)%500), sizes[n%len(sizes)]
				exec(`INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?, ?, ?)`, start-50, start+10, n, gpid+pid, ai+1)
				exec(`INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, ?, ?, ?, ?, 0, 1, NULL, 7, ?)`, start, start+dur, src, dst, bytes, gpid, n)
				ops = append(ops, &records.Op{Kind: records.OpCopy, Start: start, End: start + dur, Corr: int64(n), PID: pid, Bytes: bytes,
					Src: nsysdb.MemKindOf("CUDA_MEMOPR_MEMORY_KIND_" + kinds[src].name), Dst: nsysdb.MemKindOf("CUDA_MEMOPR_MEMORY_KIND_" + kinds[dst].name),
					Call: &records.Call{Name: nsysdb.StripAPIVersion(a), Start: start - 50, End: start + 10, Corr: int64(n), PID: pid, TID: pid}})
			}
		}
	}
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var want []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		want = append(want, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var listed []FlaggedCopy
	for _, o := range ops {
		if Lists(o) {
			listed = append(listed, RowOf(o))
		}
	}
	SortRows(listed)
	// The SQL's row, its columns as RowOf has them: the memory kinds the
	// records tell apart, the API without its suffix.
	label := func(l string) string { return memLabels[nsysdb.MemKindOf(strings.ReplaceAll(l, " ", "_"))] }
	sqlRow := func(line string) string {
		f := strings.Split(line, ",")
		mb, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		return fmt.Sprintf("%s,%s,%s,%s,%v,%s,%s", f[0], f[1], label(f[2]), label(f[3]), mb, f[5], nsysdb.StripAPIVersion(f[10]))
	}
	if len(want) < 100 || len(listed) != len(want) {
		t.Fatalf("the scan lists %d copies, the rule's SQL %d (of %d)", len(listed), len(want), n)
	}
	for i, f := range listed {
		got := fmt.Sprintf("%d,%d,%s,%s,%v,%d,%s", f.Duration, f.Start, f.SrcKind, f.DstKind, f.MB, f.PID, nsysdb.StripAPIVersion(f.API))
		if w := sqlRow(want[i]); got != w {
			t.Errorf("row %d: the scan's %s, the rule's SQL %s", i+1, got, w)
		}
	}
}

// TestAsyncCopyAPI: the rule's pattern as SQL's LIKE matches it.
func TestAsyncCopyAPI(t *testing.T) {
	for name, want := range map[string]bool{
		"cudaMemcpyAsync": true, "cudaMemcpy2DAsync": true, "cudamemcpyasync": true, "cudaMemcpyAsync_v3020": true,
		"cudaMemcpy": false, "cuMemcpyHtoDAsync": false, "cudaMemsetAsync": false, "cudaMemcpyAsyn": false, "": false,
		"xcudaMemcpyAsync": false,
	} {
		if got := AsyncCopyAPI(name); got != want {
			t.Errorf("AsyncCopyAPI(%q) = %v, want %v", name, got, want)
		}
	}
}
