package capture

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/internal/golden"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// refSQLite is the real H200 capture's SQLite export (Nsight Systems 2025.3).
var refSQLite = filepath.Join("..", "testdata", "reference", "h200-ref", "ref.sqlite")

// sqLoad loads path and fails the test on error.
func sqLoad(t testing.TB, path string, opts Options) *Capture {
	t.Helper()
	c, err := LoadSQLite(path, opts)
	if err != nil {
		t.Fatalf("LoadSQLite(%s): %v", path, err)
	}
	return c
}

// sqWantError loads path and checks for an *inputerr.Error whose message names
// the file and contains every fragment.
func sqWantError(t *testing.T, path string, fragments ...string) *inputerr.Error {
	t.Helper()
	c, err := LoadSQLite(path, Options{})
	if err == nil {
		t.Fatalf("LoadSQLite(%s) = %d calls, want an error", path, len(c.Calls))
	}
	ie, ok := err.(*inputerr.Error)
	if !ok {
		t.Fatalf("error is %T, want *inputerr.Error: %v", err, err)
	}
	msg := err.Error()
	if !strings.Contains(msg, path) {
		t.Errorf("error does not name the file %s: %s", path, msg)
	}
	for _, f := range fragments {
		if !strings.Contains(msg, f) {
			t.Errorf("error lacks %q: %s", f, msg)
		}
	}
	return ie
}

// sqliteSummary renders a capture loaded from SQLite as readable, stable
// text: metadata, missing facts, API calls per name, the first and last
// calls, copies per kind/source/destination/size, kernels per name and every
// NVTX range.
func sqliteSummary(c *Capture) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "format: %s\n", c.Format)
	fmt.Fprintf(&b, "nsys: %s\nschema: %s\ngpu: %s\ndriver: %s\ncudaDriver: %s\nos: %s\n",
		c.Meta.NsysVersion, c.Meta.SchemaVersion, c.Meta.GPU, c.Meta.Driver, c.Meta.CUDADriver, c.Meta.OS)
	b.WriteString("missing:\n")
	for _, g := range c.Missing {
		fmt.Fprintf(&b, "  %s: %s\n", g.Fact, g.Reason)
	}

	type agg struct{ n, total int64 }
	calls := map[string]*agg{}
	for _, a := range c.Calls {
		g := calls[a.Name]
		if g == nil {
			g = &agg{}
			calls[a.Name] = g
		}
		g.n++
		g.total += a.Duration()
	}
	fmt.Fprintf(&b, "calls: %d\n", len(c.Calls))
	for _, n := range sqKeys(calls) {
		fmt.Fprintf(&b, "  %-32s count=%-4d totalNs=%d\n", n, calls[n].n, calls[n].total)
	}
	printCall := func(i int) {
		a := c.Calls[i]
		fmt.Fprintf(&b, "  call[%d] %s start=%d end=%d result=%d corr=%d pid=%d tid=%d thread=%q\n",
			i, a.Name, a.Start, a.End, a.Result, a.CorrelationID, a.PID, a.TID, a.Thread)
	}
	for i := 0; i < 5 && i < len(c.Calls); i++ {
		printCall(i)
	}
	for i := max(5, len(c.Calls)-5); i < len(c.Calls); i++ {
		printCall(i)
	}

	copies := map[string]*agg{}
	for _, m := range c.Memcpys.All() {
		k := fmt.Sprintf("%-5s %-8s -> %-8s %10d bytes", m.Kind, m.Src, m.Dst, m.Bytes)
		g := copies[k]
		if g == nil {
			g = &agg{}
			copies[k] = g
		}
		g.n++
		g.total += m.Duration()
	}
	fmt.Fprintf(&b, "memcpys: %d\n", c.Memcpys.Len())
	for _, k := range sqKeys(copies) {
		fmt.Fprintf(&b, "  %s count=%-3d totalNs=%d\n", k, copies[k].n, copies[k].total)
	}

	kernels := map[string]*agg{}
	for _, k := range c.Kernels {
		g := kernels[k.Name]
		if g == nil {
			g = &agg{}
			kernels[k.Name] = g
		}
		g.n++
		g.total += k.Duration()
	}
	fmt.Fprintf(&b, "kernels: %d\n", len(c.Kernels))
	for _, n := range sqKeys(kernels) {
		fmt.Fprintf(&b, "  %s count=%d totalNs=%d\n", n, kernels[n].n, kernels[n].total)
	}

	fmt.Fprintf(&b, "ranges: %d\n", len(c.Ranges))
	for _, r := range c.Ranges {
		fmt.Fprintf(&b, "  %-24s domain=%q start=%d end=%d open=%v pid=%d tid=%d\n",
			r.Name, r.Domain, r.Start, r.End, r.Open, r.PID, r.TID)
	}
	fmt.Fprintf(&b, "summaries: api=%d mem=%d range=%d\n", len(c.APISummary), len(c.MemSummary), len(c.RangeSummary))
	return []byte(b.String())
}

func sqKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func TestSQLiteGolden(t *testing.T) {
	c := sqLoad(t, refSQLite, Options{})
	assertGolden(t, "h200-ref.sqlite.golden", sqliteSummary(c))
}

func TestLoadSQLiteReference(t *testing.T) {
	c := sqLoad(t, refSQLite, Options{})
	if c.Format != FormatSQLite || c.Path != refSQLite || len(c.Files) != 1 || c.Files[0] != refSQLite {
		t.Errorf("format/path/files = %s %s %v", c.Format, c.Path, c.Files)
	}
	wantMeta := Metadata{NsysVersion: "2025.3.2.0", SchemaVersion: "3.20.3", GPU: "NVIDIA H200",
		Driver: "580.159.04", CUDADriver: "13000", OS: "Ubuntu 24.04.3 LTS"}
	if c.Meta != wantMeta {
		t.Errorf("meta = %+v, want %+v", c.Meta, wantMeta)
	}
	count := map[string]int{}
	for _, a := range c.Calls {
		count[a.Name]++
		if a.PID != 22 || a.TID != 22 || a.Thread != "ref" {
			t.Fatalf("call %+v: want pid 22, tid 22, thread ref", a)
		}
	}
	if count["cudaMemcpyAsync"] != 22 || count["cudaMemcpy"] != 267 || count["cudaLaunchKernel"] != 28 {
		t.Errorf("counts = %v", count)
	}
	if len(c.Calls) != 444 || c.Memcpys.Len() != 289 || len(c.Kernels) != 28 {
		t.Errorf("calls %d memcpys %d kernels %d, want 444 289 28", len(c.Calls), c.Memcpys.Len(), len(c.Kernels))
	}
	var names []string
	for _, r := range c.Ranges {
		names = append(names, r.Name)
		if r.Open || r.End <= r.Start || r.Domain != "" || r.PID != 22 || r.TID != 22 {
			t.Errorf("range %+v", r)
		}
	}
	want := "h2d-pageable h2d-pinned d2h-pageable d2h-pinned async-pageable async-pinned kernel-device-resident kernel-zero-copy"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("ranges = %s, want %s", got, want)
	}
	kinds := map[string]int{}
	for _, m := range c.Memcpys.All() {
		kinds[fmt.Sprintf("%s %s %s", m.Kind, m.Src, m.Dst)]++
		if m.PID != 22 || m.Device != 0 || m.Bytes <= 0 || m.CorrelationID == 0 {
			t.Fatalf("memcpy %+v", m)
		}
	}
	wantKinds := map[string]int{
		"HtoD pageable device": 77, "HtoD pinned device": 78,
		"DtoH device pageable": 69, "DtoH device pinned": 65,
	}
	for k, n := range wantKinds {
		if kinds[k] != n {
			t.Errorf("%s copies = %d, want %d (all: %v)", k, kinds[k], n, kinds)
		}
	}
	for _, k := range c.Kernels {
		if k.Name != "scaleCopy" || k.PID != 22 {
			t.Fatalf("kernel %+v", k)
		}
	}
	for _, f := range []records.Fact{records.FactAPITrace, records.FactMemcpy, records.FactMemcpyBytes, records.FactMemoryKinds, records.FactCorrelation,
		records.FactKernels, records.FactNVTX, records.FactNVTXSummary, records.FactProcessScope, records.FactAPISummary} {
		if !c.Has(f) {
			t.Errorf("fact %s missing: %s", f, c.Why(f))
		}
	}
	if c.Has(records.FactProgram) {
		t.Error("an export cannot hold the program's numbers")
	}
	if len(c.APISummary)+len(c.MemSummary)+len(c.RangeSummary) != 0 {
		t.Error("summaries are not computed for SQLite")
	}
	sqCheckSorted(t, c)
}

func sqCheckSorted(t *testing.T, c *Capture) {
	t.Helper()
	if !sort.SliceIsSorted(c.Calls, func(i, j int) bool { return c.Calls[i].Start < c.Calls[j].Start }) ||
		!sort.SliceIsSorted(c.Memcpys.Slice(), func(i, j int) bool { return c.Memcpys.At(i).Start < c.Memcpys.At(j).Start }) ||
		!sort.SliceIsSorted(c.Kernels, func(i, j int) bool { return c.Kernels[i].Start < c.Kernels[j].Start }) ||
		!sort.SliceIsSorted(c.Ranges, func(i, j int) bool { return c.Ranges[i].Start < c.Ranges[j].Start }) {
		t.Error("lists are not sorted by start")
	}
}

func TestLoadSQLiteAPIFilter(t *testing.T) {
	c := sqLoad(t, refSQLite, Options{APINames: []string{"cudaMemcpyAsync", "cudaMemcpy"}})
	count := map[string]int{}
	for _, a := range c.Calls {
		count[a.Name]++
	}
	if len(count) != 2 || count["cudaMemcpyAsync"] != 22 || count["cudaMemcpy"] != 267 {
		t.Errorf("filtered counts = %v", count)
	}
	sqCheckSorted(t, c)
	// The filter does not touch the GPU side.
	if c.Memcpys.Len() != 289 || len(c.Ranges) != 8 {
		t.Errorf("memcpys %d ranges %d", c.Memcpys.Len(), len(c.Ranges))
	}

	for _, names := range [][]string{{"cudaMemcpyAsyn"}, {"cudamemcpy"}, {"cudaMemcpy_v3020"}, {"cuda%"}, {"nothing"}} {
		c := sqLoad(t, refSQLite, Options{APINames: names})
		if len(c.Calls) != 0 {
			t.Errorf("APINames %v: %d calls, want 0", names, len(c.Calls))
		}
	}
	c = sqLoad(t, refSQLite, Options{APINames: []string{"cuKernelGetName"}})
	if len(c.Calls) != 28 {
		t.Errorf("cuKernelGetName: %d calls, want 28", len(c.Calls))
	}
}

func TestLoadSQLiteReadOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my captures 'day 53'")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, `run "1" ?#%20&x=y.sqlite`)
	fixture.Copy(t, refSQLite, path)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	orig, _ := os.ReadFile(path)
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })

	c := sqLoad(t, path, Options{})
	if len(c.Calls) != 444 || c.Path != path {
		t.Errorf("calls %d path %s", len(c.Calls), c.Path)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(orig, after) {
		t.Error("loading changed the file's bytes")
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !info.ModTime().Equal(old) {
		t.Errorf("mtime changed: %v -> %v", old, info.ModTime())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("loading left files beside the export: %v", entries)
	}
}

func TestLoadSQLiteBadFiles(t *testing.T) {
	dir := t.TempDir()
	ref, err := os.ReadFile(refSQLite)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rep, err := os.ReadFile(filepath.Join("..", "testdata", "reference", "h200-ref", "ref.nsys-rep"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, problem string
	}{
		{"text", write("notes.sqlite", []byte("Time (%),Total Time (ns)\n1,2\n")), "not an SQLite database"},
		{"zeros", write("zeros.sqlite", make([]byte, 8192)), "only zero bytes"},
		{"empty", write("empty.sqlite", nil), "the file is empty"},
		{"short", write("short.sqlite", ref[:10]), "truncated"},
		{"header only", write("header.sqlite", ref[:100]), "truncated"},
		{"truncated half", write("half.sqlite", ref[:len(ref)/2]), "truncated"},
		{"truncated page", write("page.sqlite", ref[:len(ref)-4096]), "truncated"},
		{"truncated odd", write("odd.sqlite", ref[:len(ref)-1000]), "truncated"},
		{"report", write("ref.sqlite", rep), "Nsight Systems report"},
		{"missing", filepath.Join(dir, "nope.sqlite"), "no such file"},
		{"folder", dir, "folder"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ie := sqWantError(t, tc.path, tc.problem)
			if ie.Path != tc.path {
				t.Errorf("Path = %s", ie.Path)
			}
		})
	}
	// Every error except a missing file or a folder tells how to export again.
	ie := sqWantError(t, filepath.Join(dir, "zeros.sqlite"))
	if !strings.Contains(ie.Hint, "nsys export --type sqlite") {
		t.Errorf("hint = %q", ie.Hint)
	}
}

// A copy whose header page count is stale (so SQLite cannot tell it is
// short) must still fail clearly when a table's pages are gone, not load as
// an empty model or panic.
func TestLoadSQLiteTruncatedBody(t *testing.T) {
	ref, err := os.ReadFile(refSQLite)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{4096 * 8, 4096 * 20, 4096 * 40, len(ref) - 4096} {
		b := append([]byte(nil), ref[:cut]...)
		b[95]++ // version-valid-for no longer matches: the page count is not trusted
		path := filepath.Join(t.TempDir(), "cut.sqlite")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := LoadSQLite(path, Options{})
		if err == nil {
			// Some cuts may keep every table we read intact; then the
			// model must be complete, never partly empty.
			if len(c.Calls) != 444 || c.Memcpys.Len() != 289 || len(c.Kernels) != 28 || len(c.Ranges) != 8 {
				t.Errorf("cut at %d: loaded a partial model: %d calls %d copies %d kernels %d ranges",
					cut, len(c.Calls), c.Memcpys.Len(), len(c.Kernels), len(c.Ranges))
			}
			continue
		}
		t.Logf("cut at %d: %v", cut, err)
		if !inputerr.Is(err) || !strings.Contains(err.Error(), path) {
			t.Errorf("cut at %d: %v", cut, err)
		}
	}
}

func TestLoadSQLiteMissingTables(t *testing.T) {
	t.Run("runtime", func(t *testing.T) {
		p := fixture.SQLite(t, refSQLite, "DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME")
		sqWantError(t, p, "CUPTI_ACTIVITY_KIND_RUNTIME", "no CUDA API trace", "nsys profile -t cuda,nvtx")
	})
	t.Run("strings", func(t *testing.T) {
		p := fixture.SQLite(t, refSQLite, "DROP TABLE StringIds")
		sqWantError(t, p, "StringIds", "no string table")
	})
	t.Run("memcpy", func(t *testing.T) {
		p := fixture.SQLite(t, refSQLite, "DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY")
		c := sqLoad(t, p, Options{})
		if c.Memcpys.Len() != 0 || len(c.Calls) != 444 {
			t.Errorf("memcpys %d calls %d", c.Memcpys.Len(), len(c.Calls))
		}
		for _, f := range []records.Fact{records.FactMemcpy, records.FactMemcpyBytes, records.FactMemoryKinds} {
			if c.Has(f) || !strings.Contains(c.Why(f), "CUPTI_ACTIVITY_KIND_MEMCPY") || !strings.Contains(c.Why(f), "-t cuda") {
				t.Errorf("fact %s: %q", f, c.Why(f))
			}
		}
		if !c.Has(records.FactKernels) || !c.Has(records.FactNVTX) {
			t.Error("kernels and NVTX are still there")
		}
		if why := c.Why(records.FactMemcpy); !strings.Contains(why, "though it traced CUDA") || !strings.Contains(why, "did not keep them") {
			t.Errorf("traced with CUDA: %q", why)
		}
		// Where nsys says it did not trace CUDA, that is why.
		p = fixture.SQLite(t, refSQLite, "DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY",
			"UPDATE META_DATA_CAPTURE SET value = 'false' WHERE name LIKE '%:COLLECT_CUDA_TRACE'")
		if why := sqLoad(t, p, Options{}).Why(records.FactMemcpy); !strings.Contains(why, "nsys did not trace CUDA (nsys profile -t without cuda)") {
			t.Errorf("not traced: %q", why)
		}
	})
	t.Run("kernel", func(t *testing.T) {
		p := fixture.SQLite(t, refSQLite, "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL")
		c := sqLoad(t, p, Options{})
		if len(c.Kernels) != 0 || c.Has(records.FactKernels) || !strings.Contains(c.Why(records.FactKernels), "CUPTI_ACTIVITY_KIND_KERNEL") {
			t.Errorf("kernels %d why %q", len(c.Kernels), c.Why(records.FactKernels))
		}
		if !c.Has(records.FactMemcpy) {
			t.Error("memcpy lost")
		}
	})
	t.Run("nvtx", func(t *testing.T) {
		p := fixture.SQLite(t, refSQLite, "DROP TABLE NVTX_EVENTS")
		c := sqLoad(t, p, Options{})
		for _, f := range []records.Fact{records.FactNVTX, records.FactNVTXSummary} {
			if c.Has(f) || !strings.Contains(c.Why(f), "NVTX_EVENTS") || !strings.Contains(c.Why(f), "nvtx") {
				t.Errorf("fact %s: %q", f, c.Why(f))
			}
		}
	})
	t.Run("metadata", func(t *testing.T) {
		p := fixture.SQLite(t, refSQLite, "DROP TABLE META_DATA_EXPORT", "DROP TABLE TARGET_INFO_GPU",
			"DROP TABLE TARGET_INFO_SYSTEM_ENV", "DROP TABLE ThreadNames")
		c := sqLoad(t, p, Options{})
		if c.Meta != (Metadata{}) || len(c.Calls) != 444 || c.Calls[0].Thread != "" {
			t.Errorf("meta %+v calls %d", c.Meta, len(c.Calls))
		}
	})
	t.Run("copy enum", func(t *testing.T) {
		p := fixture.SQLite(t, refSQLite, "DROP TABLE ENUM_CUDA_MEMCPY_OPER")
		sqWantError(t, p, "ENUM_CUDA_MEMCPY_OPER")
	})
	t.Run("event type enum", func(t *testing.T) {
		p := fixture.SQLite(t, refSQLite, "DROP TABLE ENUM_NSYS_EVENT_TYPE")
		c := sqLoad(t, p, Options{})
		if c.Has(records.FactNVTX) || len(c.Ranges) != 0 {
			t.Errorf("NVTX without event types: %d ranges, why %q", len(c.Ranges), c.Why(records.FactNVTX))
		}
	})
	t.Run("empty database", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "empty.sqlite")
		fixture.Exec(t, p, "CREATE TABLE x(a)", "DROP TABLE x", "VACUUM")
		sqWantError(t, p, "no tables")
	})
}

// recreate returns statements that rebuild table with only the given
// columns, rows in the given order.
func recreate(table, cols, order string) []string {
	return []string{
		fmt.Sprintf(`CREATE TABLE tmp_copy AS SELECT %s FROM %s ORDER BY %s`, cols, table, order),
		"DROP TABLE " + table,
		"ALTER TABLE tmp_copy RENAME TO " + table,
	}
}

func TestLoadSQLiteMissingColumn(t *testing.T) {
	p := fixture.SQLite(t, refSQLite, recreate("CUPTI_ACTIVITY_KIND_RUNTIME",
		`start, "end", eventClass, globalTid, correlationId, returnValue, callchainId`, "start")...)
	ie := sqWantError(t, p, "table CUPTI_ACTIVITY_KIND_RUNTIME", "column nameId is missing", "3.20.3")
	if ie.Where != "table CUPTI_ACTIVITY_KIND_RUNTIME" {
		t.Errorf("Where = %q", ie.Where)
	}

	// Without correlation ids and thread ids the calls still load, and the
	// capture says what it lacks.
	p = fixture.SQLite(t, refSQLite, recreate("CUPTI_ACTIVITY_KIND_RUNTIME", `start, "end", nameId, returnValue`, "start")...)
	c := sqLoad(t, p, Options{})
	if len(c.Calls) != 444 || c.Has(records.FactCorrelation) || c.Has(records.FactProcessScope) {
		t.Errorf("calls %d missing %v", len(c.Calls), c.Missing)
	}
}

func TestLoadSQLiteMemcpyWithoutKinds(t *testing.T) {
	p := fixture.SQLite(t, refSQLite, recreate("CUPTI_ACTIVITY_KIND_MEMCPY",
		`start, "end", deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind`, "start")...)
	c := sqLoad(t, p, Options{})
	if c.Memcpys.Len() != 289 || !c.Has(records.FactMemcpy) || !c.Has(records.FactMemcpyBytes) || c.Has(records.FactMemoryKinds) {
		t.Fatalf("memcpys %d missing %v", c.Memcpys.Len(), c.Missing)
	}
	if !strings.Contains(c.Why(records.FactMemoryKinds), "srcKind") {
		t.Errorf("why = %q", c.Why(records.FactMemoryKinds))
	}
	for _, m := range c.Memcpys.All() {
		if m.Src != vocab.MemUnknown || m.Dst != vocab.MemUnknown || (m.Kind != vocab.CopyHtoD && m.Kind != vocab.CopyDtoH) {
			t.Fatalf("memcpy %+v", m)
		}
	}
}

// Enum ids are read from the file, never assumed.
func TestLoadSQLiteEnumsFromFile(t *testing.T) {
	p := fixture.SQLite(t, refSQLite,
		"UPDATE ENUM_CUDA_MEMCPY_OPER SET id = id + 100",
		"UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET copyKind = copyKind + 100",
		"UPDATE ENUM_CUDA_MEM_KIND SET id = 50 - id",
		"UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET srcKind = 50 - srcKind, dstKind = 50 - dstKind",
		"UPDATE ENUM_NSYS_EVENT_TYPE SET id = id + 1000",
		"UPDATE NVTX_EVENTS SET eventType = eventType + 1000",
	)
	got := sqliteSummary(sqLoad(t, p, Options{}))
	want := sqliteSummary(sqLoad(t, refSQLite, Options{}))
	if !bytes.Equal(got, want) {
		t.Errorf("renumbered enums change the result:\n%s", golden.FirstDiff(string(want), string(got)))
	}
}

// Newer exports add _V2, _V3 ... tables; the highest one wins.
// Of the versions of one table, the one that holds rows is read: the
// highest when the lower ones are empty, a lower one when the higher ones
// are; two that hold rows, or a view of the name, are refused.
func TestLoadSQLiteVersionedTables(t *testing.T) {
	p := fixture.SQLite(t, refSQLite,
		"ALTER TABLE CUPTI_ACTIVITY_KIND_RUNTIME RENAME TO CUPTI_ACTIVITY_KIND_RUNTIME_V3",
		"CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME_V2 AS SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME_V3 LIMIT 0",
		"CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME AS SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME_V3 LIMIT 0",
		"ALTER TABLE StringIds RENAME TO StringIds_V2",
		"CREATE TABLE NVTX_EVENTS_V10 AS SELECT * FROM NVTX_EVENTS LIMIT 0",
	)
	c := sqLoad(t, p, Options{})
	if len(c.Calls) != 444 || len(c.Ranges) != 8 {
		t.Errorf("calls %d ranges %d, want 444 and 8", len(c.Calls), len(c.Ranges))
	}

	both := fixture.SQLite(t, refSQLite,
		"CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME_V2 AS SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 3")
	sqWantError(t, both, "CUPTI_ACTIVITY_KIND_RUNTIME_V2 and CUPTI_ACTIVITY_KIND_RUNTIME hold rows", "two exports were merged")

	view := fixture.SQLite(t, refSQLite,
		`CREATE VIEW CUPTI_ACTIVITY_KIND_RUNTIME_V9 AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n AS start FROM r`)
	sqWantError(t, view, "table CUPTI_ACTIVITY_KIND_RUNTIME_V9", "a view, not a table")
}

// Row order in the file does not matter.
func TestLoadSQLiteRowOrder(t *testing.T) {
	var stmts []string
	stmts = append(stmts, recreate("CUPTI_ACTIVITY_KIND_RUNTIME", "*", "start DESC")...)
	stmts = append(stmts, recreate("CUPTI_ACTIVITY_KIND_MEMCPY", "*", "random()")...)
	stmts = append(stmts, recreate("CUPTI_ACTIVITY_KIND_KERNEL", "*", "start DESC")...)
	stmts = append(stmts, recreate("NVTX_EVENTS", "*", "start DESC")...)
	got := sqliteSummary(sqLoad(t, fixture.SQLite(t, refSQLite, stmts...), Options{}))
	want := sqliteSummary(sqLoad(t, refSQLite, Options{}))
	if !bytes.Equal(got, want) {
		t.Errorf("row order changes the result:\n%s", golden.FirstDiff(string(want), string(got)))
	}
}

func TestLoadSQLiteNVTXVariants(t *testing.T) {
	p := fixture.SQLite(t, refSQLite,
		// an open range, a range named through StringIds, and one in a named domain
		`UPDATE NVTX_EVENTS SET "end" = NULL WHERE text = 'kernel-zero-copy'`,
		`INSERT INTO StringIds (id, value) VALUES (9001, 'from-string-table')`,
		`UPDATE NVTX_EVENTS SET text = NULL, textId = 9001 WHERE text = 'h2d-pinned'`,
		`INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId)
		 SELECT 5, id, 'lesson', 281475345809430, 7 FROM ENUM_NSYS_EVENT_TYPE WHERE name = 'NvtxDomainCreate'`,
		`UPDATE NVTX_EVENTS SET domainId = 7 WHERE text = 'd2h-pinned'`,
		// other NVTX event types are not ranges
		`INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid)
		 SELECT 6, id, 'a mark', 281475345809430 FROM ENUM_NSYS_EVENT_TYPE WHERE name = 'NvtxMark'`,
	)
	c := sqLoad(t, p, Options{})
	if len(c.Ranges) != 8 {
		t.Fatalf("%d ranges, want 8", len(c.Ranges))
	}
	by := map[string]Range{}
	for _, r := range c.Ranges {
		by[r.Name] = r
	}
	if r := by["kernel-zero-copy"]; !r.Open || r.End != 0 {
		t.Errorf("open range = %+v", r)
	}
	if _, ok := by["from-string-table"]; !ok {
		t.Errorf("textId range not named: %v", c.Ranges)
	}
	if r := by["d2h-pinned"]; r.Domain != "lesson" {
		t.Errorf("domain = %q", r.Domain)
	}
	if r := by["h2d-pageable"]; r.Domain != "" || r.Open {
		t.Errorf("default domain range = %+v", r)
	}
}

// TestLoadSQLiteBigFiltered builds an export with a large runtime table and
// checks, in a child process, that a filtered load keeps peak memory small.
// NSYSCHECK_BIG_ROWS sets the row count (default 300000; e.g. 10000000).
func TestLoadSQLiteBigFiltered(t *testing.T) {
	if path := os.Getenv("NSYSCHECK_BIG_CHILD"); path != "" {
		sqBigChild(path)
		return
	}
	if testing.Short() {
		t.Skip("builds a large export")
	}
	if runtime.GOOS != "linux" {
		t.Skip("peak RSS is read from Linux rusage")
	}
	rows := 300000
	if s := os.Getenv("NSYSCHECK_BIG_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		rows = n
	}
	p := fixture.SQLite(t, refSQLite,
		"DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME",
		"PRAGMA journal_mode = OFF",
		fmt.Sprintf(`INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME
		   (start, "end", eventClass, globalTid, correlationId, nameId, returnValue)
		 WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < %d)
		 SELECT (i * 7919) %% %d * 100, (i * 7919) %% %d * 100 + 50, 1, 281475345809430, i + 1,
		   CASE WHEN i %% 1000 = 0 THEN (SELECT id FROM StringIds WHERE value = 'cudaMemcpyAsync_v3020')
		     ELSE (SELECT id FROM StringIds WHERE value = 'cudaEventRecord_v3020') END, 0
		 FROM n`, rows, rows, rows),
	)
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadSQLiteBigFiltered$")
	cmd.Env = append(os.Environ(), "NSYSCHECK_BIG_CHILD="+p)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	peak := ru.Maxrss * 1024
	info, _ := os.Stat(p)
	t.Logf("%d runtime rows (%d MiB export): filtered load peak RSS %.1f MiB; %s",
		rows, info.Size()>>20, float64(peak)/(1<<20), strings.TrimSpace(string(out)))
	if peak > 128<<20 {
		t.Errorf("peak RSS %d MiB, want far below 256 MiB", peak>>20)
	}
	if !strings.Contains(string(out), fmt.Sprintf("calls=%d ", (rows+999)/1000)) {
		t.Errorf("child output: %s", out)
	}
}

func sqBigChild(path string) {
	start := time.Now()
	c, err := LoadSQLite(path, Options{APINames: []string{"cudaMemcpyAsync"}})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	for i := 1; i < len(c.Calls); i++ {
		if c.Calls[i].Start < c.Calls[i-1].Start || c.Calls[i].Name != "cudaMemcpyAsync" {
			fmt.Println("calls out of order or unfiltered")
			os.Exit(1)
		}
	}
	fmt.Printf("calls=%d in %v\n", len(c.Calls), time.Since(start).Round(time.Millisecond))
}
