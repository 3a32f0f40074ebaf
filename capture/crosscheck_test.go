package capture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/records"
)

// TestCrosscheckSQLiteCSV checks that the SQLite export and the nsys stats
// CSV reports of one capture give the same API-call list: names, order,
// start, end, result, ids and thread. cuda_api_trace writes whole
// nanoseconds, so nothing is rounded; the reference trace has no two calls
// with the same start, and Capture.Sort breaks ties by end and correlation
// id for both inputs alike, so the order is compared strictly. Row is the
// CSV data row and 0 for SQLite, so it is left out.
func TestCrosscheckSQLiteCSV(t *testing.T) {
	for _, tc := range []struct{ sqlite, csvDir string }{
		{"../testdata/reference/h200-ref/ref.sqlite", refCSV2025},
		{"../testdata/captures/h200-pinned/pinned.sqlite", "../testdata/captures/h200-pinned"},
		{"../testdata/captures/h200-pinned-nonvtx/pinned.sqlite", "../testdata/captures/h200-pinned-nonvtx"},
	} {
		t.Run(tc.csvDir, func(t *testing.T) { crosscheck(t, tc.sqlite, tc.csvDir) })
	}
}

func crosscheck(t *testing.T, sqlitePath, csvDir string) {
	db, err := LoadSQLite(sqlitePath, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := LoadCSVDir(csvDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(db.Calls) != len(cs.Calls) {
		t.Fatalf("sqlite has %d calls, csv %d", len(db.Calls), len(cs.Calls))
	}
	seen := map[int64]bool{}
	for _, c := range cs.Calls {
		if seen[c.Start] {
			t.Logf("two calls start at %d: the order then rests on Sort's tie-breakers", c.Start)
		}
		seen[c.Start] = true
	}
	for i := range db.Calls {
		a, b := db.Calls[i], cs.Calls[i]
		a.Row, b.Row = 0, 0
		if a != b {
			t.Errorf("call %d: sqlite %+v, csv %+v", i, a, b)
		}
	}
}

// TestCrosscheckGPUAndNVTXRecords checks that cuda_gpu_trace and
// nvtx_pushpop_trace give the same copies, kernels and ranges as the SQLite
// export of the same capture: by correlation id, the direction, memory kinds,
// bytes, start, end, stream and device of every copy and the base name,
// start and end of every kernel; every range's name, domain, times and
// thread; and each operation's process, which cuda_gpu_trace does not
// name, taken from the one process of the API trace's calls.
func TestCrosscheckGPUAndNVTXRecords(t *testing.T) {
	for _, dir := range []string{"h200-pinned", "h200-pinned-nonvtx", "h200-run", "other-counts", "broken-pin", "torch-lesson"} {
		t.Run(dir, func(t *testing.T) {
			d := "../testdata/captures/" + dir
			base := "pinned"
			if dir == "other-counts" || dir == "broken-pin" || dir == "torch-lesson" {
				base = dir
			}
			db, err := LoadSQLite(d+"/"+base+".sqlite", Options{})
			if err != nil {
				t.Fatal(err)
			}
			cs, err := LoadCSVDir(d, Options{})
			if err != nil {
				t.Fatal(err)
			}
			crosscheck(t, d+"/"+base+".sqlite", d)
			for _, f := range []records.Fact{records.FactMemcpy, records.FactMemcpyBytes, records.FactMemoryKinds, records.FactCorrelation, records.FactKernels} {
				if !cs.Has(f) {
					t.Errorf("the CSV folder lacks %s: %s", f, cs.Why(f))
				}
			}
			if db.Memcpys.Len() != cs.Memcpys.Len() || len(db.Kernels) != len(cs.Kernels) || len(db.Ranges) != len(cs.Ranges) {
				t.Fatalf("sqlite: %d copies, %d kernels, %d ranges; csv: %d, %d, %d",
					db.Memcpys.Len(), len(db.Kernels), len(db.Ranges), cs.Memcpys.Len(), len(cs.Kernels), len(cs.Ranges))
			}
			if db.Memcpys.Len() == 0 || len(db.Kernels) == 0 {
				t.Fatalf("nothing to compare: %d copies, %d kernels", db.Memcpys.Len(), len(db.Kernels))
			}
			byCorr := map[int64]Memcpy{}
			for _, m := range db.Memcpys.All() {
				byCorr[m.CorrelationID] = m
			}
			for _, m := range cs.Memcpys.All() {
				if w, ok := byCorr[m.CorrelationID]; !ok || w != m {
					t.Errorf("copy corr %d: sqlite %+v, csv %+v", m.CorrelationID, w, m)
				}
			}
			kern := map[int64]Kernel{}
			for _, k := range db.Kernels {
				kern[k.CorrelationID] = k
			}
			for _, k := range cs.Kernels {
				if w, ok := kern[k.CorrelationID]; !ok || w != k {
					t.Errorf("kernel corr %d: sqlite %+v, csv %+v", k.CorrelationID, w, k)
				}
			}
			for i := range db.Ranges {
				if db.Ranges[i] != cs.Ranges[i] {
					t.Errorf("range %d: sqlite %+v, csv %+v", i, db.Ranges[i], cs.Ranges[i])
				}
			}
		})
	}
}

// TestGPUAndNVTXTrace2022Names reads the per-record reports under their
// nsys 2022 names (gputrace, nvtxpptrace), with that generation's headers
// (no GreenCtx column, "Throughput (MBps)") and range names without the
// "domain:" prefix, and checks they give what the current reports give.
func TestGPUAndNVTXTrace2022Names(t *testing.T) {
	src := "../testdata/captures/other-counts"
	cur, err := LoadCSVDir(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copyAs := func(from, to string, edit func(string) string) {
		b, err := os.ReadFile(filepath.Join(src, from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), []byte(edit(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	same := func(s string) string { return s }
	copyAs("other-counts_cuda_api_trace.csv", "old_cudaapitrace.csv", same)
	copyAs("other-counts_cuda_gpu_trace.csv", "old_gputrace.csv", func(s string) string {
		lines := strings.Split(s, "\n")
		head := strings.Split(lines[0], ",")
		drop := -1
		for i, h := range head {
			if h == "GreenCtx" {
				drop = i
			}
		}
		if drop < 0 {
			t.Fatal("no GreenCtx column to drop")
		}
		for i, l := range lines {
			if l == "" {
				continue
			}
			// Cells before GreenCtx never hold quoted commas; the kernel
			// name after it may.
			cells := strings.SplitN(l, ",", drop+2)
			lines[i] = strings.Join(append(cells[:drop:drop], cells[drop+1]), ",")
		}
		return strings.Replace(strings.Join(lines, "\n"), "Throughput (MB/s)", "Throughput (MBps)", 1)
	})
	copyAs("other-counts_nvtx_pushpop_trace.csv", "old_nvtxpptrace.csv", func(s string) string {
		return strings.ReplaceAll(s, ",:", ",")
	})
	old, err := LoadCSVDir(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if old.Memcpys.Len() == 0 || old.Memcpys.Len() != cur.Memcpys.Len() || len(old.Kernels) != len(cur.Kernels) || len(old.Ranges) != len(cur.Ranges) {
		t.Fatalf("2022 names: %d copies, %d kernels, %d ranges; current: %d, %d, %d",
			old.Memcpys.Len(), len(old.Kernels), len(old.Ranges), cur.Memcpys.Len(), len(cur.Kernels), len(cur.Ranges))
	}
	for i := range cur.Memcpys.Len() {
		if old.Memcpys.At(i) != cur.Memcpys.At(i) {
			t.Errorf("copy %d: %+v, current %+v", i, old.Memcpys.At(i), cur.Memcpys.At(i))
		}
	}
	for i := range cur.Kernels {
		if old.Kernels[i] != cur.Kernels[i] {
			t.Errorf("kernel %d: %+v, current %+v", i, old.Kernels[i], cur.Kernels[i])
		}
	}
	for i := range cur.Ranges {
		if old.Ranges[i] != cur.Ranges[i] {
			t.Errorf("range %d: %+v, current %+v", i, old.Ranges[i], cur.Ranges[i])
		}
	}
}
