package capture

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/records"
)

// shippedSQLite is the shipped H200 capture's export, which has a
// synchronisation table.
var shippedSQLite = filepath.Join("..", "testdata", "captures", "h200-pinned", "pinned.sqlite")

// asyncCalls selects the cudaMemcpyAsync calls' name ids.
const asyncCalls = `(SELECT id FROM StringIds WHERE value LIKE 'cudaMemcpyAsync%')`

// asyncCopies selects the copies of the cudaMemcpyAsync calls.
const asyncCopies = `correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN ` + asyncCalls + `)`

// TestCrossRecordDamage: each damage a check across records finds, in a
// real export, is refused by verify's reading and the audit's alike, with
// an error that names the file, the table and the problem.
func TestCrossRecordDamage(t *testing.T) {
	for _, c := range []struct {
		name, stmt string
		// verify and audit: what each error holds; the audit reads no
		// kernels, and no calls but its copies'.
		verify, audit []string
	}{
		{"async calls twice", `INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN ` + asyncCalls,
			[]string{"table CUPTI_ACTIVITY_KIND_RUNTIME", "correlation id 476", "another API call of process 22 has the same correlation id"},
			// each copy joins both of its calls
			[]string{"table CUPTI_ACTIVITY_KIND_MEMCPY joined to CUPTI_ACTIVITY_KIND_RUNTIME", "correlation id 476", "a second copy of the cudaMemcpyAsync call"}},
		{"every copy twice", `INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY SELECT * FROM CUPTI_ACTIVITY_KIND_MEMCPY`,
			[]string{"table CUPTI_ACTIVITY_KIND_MEMCPY", "correlation id 128", "a second copy of the cudaMemcpy call"},
			[]string{"table CUPTI_ACTIVITY_KIND_MEMCPY", "correlation id 128", "a second copy of the cudaMemcpy call"}},
		{"a copy twice, the second on a stream of its own", `INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind)
				SELECT start, end, deviceId, contextId, 99, correlationId, globalPid, bytes, copyKind, srcKind, dstKind FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE ` + asyncCopies + ` LIMIT 1;
				INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (99, 0, 1, 22, 1, 0, 2)`,
			[]string{"correlation id 476", "a second copy of the cudaMemcpyAsync call"},
			[]string{"correlation id 476", "a second copy of the cudaMemcpyAsync call"}},
		{"copies, one on a stream of its own, that overlap on their stream", `UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET start = start + 30000000, end = end + 30000000 WHERE rowid = 1`,
			[]string{"stream 7 of process 22, device 0", "two copies", "overlap in time"},
			[]string{"stream 7 of process 22, device 0", "two copies", "overlap in time"}},
		{"a copy whose call failed", `UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET returnValue = 1 WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN ` + asyncCalls + `)`,
			[]string{"correlation id 476", "the cudaMemcpyAsync call that issued it returned error 1, yet the copy ran"},
			[]string{"correlation id 476", "the cudaMemcpyAsync call that issued it returned error 1, yet the copy ran"}},
		{"a call after the trace stopped", `UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = start + 10000000000, end = end + 10000000000 WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId NOT IN ` + asyncCalls + `)`,
			[]string{"table CUPTI_ACTIVITY_KIND_RUNTIME, correlation id 624", "after the trace stopped (3204708108 ns, ANALYSIS_DETAILS)"},
			[]string{"table CUPTI_ACTIVITY_KIND_RUNTIME, correlation id 624", "after the trace stopped (3204708108 ns, ANALYSIS_DETAILS)"}},
		{"copies after the trace stopped", `UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET start = start + 10000000000, end = end + 10000000000 WHERE ` + asyncCopies,
			[]string{"table CUPTI_ACTIVITY_KIND_MEMCPY, correlation id 476", "after the trace stopped (3204708108 ns, ANALYSIS_DETAILS)"},
			[]string{"table CUPTI_ACTIVITY_KIND_MEMCPY, correlation id 476", "after the trace stopped (3204708108 ns, ANALYSIS_DETAILS)"}},
		{"a second trace joined, 1 ns later", `INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue)
				SELECT start + 1, end + 1, eventClass, globalTid, correlationId + 1000000, nameId, returnValue FROM CUPTI_ACTIVITY_KIND_RUNTIME;
			INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind)
				SELECT start + 1, end + 1, deviceId, contextId, streamId, correlationId + 1000000, globalPid, bytes, copyKind, srcKind, dstKind FROM CUPTI_ACTIVITY_KIND_MEMCPY`,
			[]string{"table CUPTI_ACTIVITY_KIND_RUNTIME", "thread 22/22", "two API calls", "overlap in time"},
			[]string{"table CUPTI_ACTIVITY_KIND_MEMCPY", "stream 7 of process 22, device 0", "two copies", "overlap in time"}},
		{"copies that start before their calls", `UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET start = start - 100000, end = end - 100000 WHERE ` + asyncCopies,
			[]string{"table CUPTI_ACTIVITY_KIND_MEMCPY", "memory copy HtoD, correlation id 498", "before the cudaMemcpyAsync call that issued it starts"},
			[]string{"table CUPTI_ACTIVITY_KIND_MEMCPY", "memory copy HtoD, correlation id 498", "before the cudaMemcpyAsync call that issued it starts"}},
		{"copies that end after the synchronisation that waited for them", `UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET end = end + 50000000 WHERE ` + asyncCopies,
			[]string{"table CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "stream 13 of process 22, device 0", "after the stream synchronisation (correlation id 477) that waited for it ended"},
			[]string{"table CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "stream 13 of process 22, device 0", "after the stream synchronisation (correlation id 477) that waited for it ended"}},
		{"a blocking copy that ends 0.5 ms after its call returned", `UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET end = end + 500000 WHERE correlationId = 471`,
			[]string{"table CUPTI_ACTIVITY_KIND_MEMCPY", "memory copy DtoH, correlation id 471", "497678 ns after the blocking cudaMemcpy call that issued it returned (2345391412 ns)"},
			[]string{"table CUPTI_ACTIVITY_KIND_MEMCPY joined to CUPTI_ACTIVITY_KIND_RUNTIME", "memory copy DtoH, correlation id 471", "497678 ns after the blocking cudaMemcpy call that issued it returned (2345391412 ns)"}},
		{"every synchronisation twice", `INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SELECT * FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`,
			[]string{"table CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "correlation id 150 of process 22", "a second synchronisation record of the call"},
			[]string{"table CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "correlation id 150 of process 22", "a second synchronisation record of the call"}},
		{"pinned copies of 256 MiB in 1 ns", `UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET end = start + 1 WHERE bytes = 268435456`,
			[]string{"table CUPTI_ACTIVITY_KIND_MEMCPY", "268435456 bytes in 1 ns: impossible: 2.684e+08 GB/s over a link of 63.02 GB/s (PCIe 5.0 x16 of the NVIDIA H200"},
			[]string{"table CUPTI_ACTIVITY_KIND_MEMCPY", "268435456 bytes in 1 ns: impossible: 2.684e+08 GB/s over a link of 63.02 GB/s (PCIe 5.0 x16 of the NVIDIA H200"}},
		{"copies and their calls 20 times shorter: 1 MiB at 974 GB/s over an H200's PCIe 5.0 x16",
			`UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = start + (end - start) / 20 WHERE correlationId BETWEEN 224 AND 301;
			UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET end = start + (end - start) / 20 WHERE correlationId BETWEEN 224 AND 301`,
			[]string{"memory copy HtoD, correlation id 224", "impossible: 974.5 GB/s over a link of 63.02 GB/s (PCIe 5.0 x16 of the NVIDIA H200"},
			[]string{"memory copy HtoD, correlation id 224", "impossible: 974.5 GB/s over a link of 63.02 GB/s (PCIe 5.0 x16 of the NVIDIA H200"}},
		{"device copies 4 times shorter: 8.5 TB/s from an H200's HBM3e", `UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET end = start + (end - start) / 4 WHERE copyKind = (SELECT id FROM ENUM_CUDA_MEMCPY_OPER WHERE name LIKE '%DTOD')`,
			[]string{"memory copy DtoD", "GB/s from a memory of 4800 GB/s (HBM3e of the NVIDIA H200"},
			[]string{"memory copy DtoD", "GB/s from a memory of 4800 GB/s (HBM3e of the NVIDIA H200"}},
		{"device copies of 100 TB/s", `UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET end = start + 1000 WHERE copyKind = (SELECT id FROM ENUM_CUDA_MEMCPY_OPER WHERE name LIKE '%DTOD')`,
			[]string{"memory copy DtoD", "from a memory of 4800 GB/s (HBM3e of the NVIDIA H200"},
			[]string{"memory copy DtoD", "from a memory of 4800 GB/s (HBM3e of the NVIDIA H200"}},
		{"an NVTX range moved to straddle the end of the one after it", `UPDATE NVTX_EVENTS SET end = end + 200000000 WHERE text = 'h2d-pinned'`,
			[]string{"table NVTX_EVENTS", "thread 22/22", "overlap without one holding the other"},
			[]string{"table NVTX_EVENTS", "thread 22/22", "overlap without one holding the other"}},
		{"every kernel twice", `INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL`,
			[]string{"table CUPTI_ACTIVITY_KIND_KERNEL", "another kernel of process 22 has the same correlation id"}, nil},
		{"a kernel before its launch call", `UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start - 2000000000, "end" = "end" - 2000000000 WHERE correlationId = 527`,
			[]string{"table CUPTI_ACTIVITY_KIND_KERNEL", "kernel scaleCopy, correlation id 527", "before the cudaLaunchKernel call that issued it starts"}, nil},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			p := fixture.SQLite(t, shippedSQLite, c.stmt)
			_, verr := Load(p, Options{APINames: predictionAPIs, ProgramThread: true})
			_, _, aerr := streamCopies(p, Options{})
			for _, r := range []struct {
				what string
				err  error
				want []string
			}{{"verify's reading", verr, c.verify}, {"the audit's", aerr, c.audit}} {
				if r.want == nil {
					continue
				}
				var ie *inputerr.Error
				if !errors.As(r.err, &ie) || ie.Path != p {
					t.Errorf("%s: %v, want an error naming %s", r.what, r.err, p)
					continue
				}
				for _, w := range r.want {
					if !strings.Contains(r.err.Error(), w) {
						t.Errorf("%s: %v\nlacks %q", r.what, r.err, w)
					}
				}
			}
		})
	}
}

// TestCrossRecordCSV: two reports' rows in one file, without the second
// header, and a copy faster than the link of the GPU the reports name, as
// the CSV reports give them.
func TestCrossRecordCSV(t *testing.T) {
	shipped := filepath.Join("..", "testdata", "captures", "h200-pinned")
	copyCSV := func(t *testing.T, edit func(name string, b []byte) []byte) string {
		dir := t.TempDir()
		m, _ := filepath.Glob(filepath.Join(shipped, "*.csv"))
		for _, p := range m {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)), edit(filepath.Base(p), b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	joined := copyCSV(t, func(name string, b []byte) []byte {
		if name != "pinned_cuda_api_trace.csv" {
			return b
		}
		_, body, _ := strings.Cut(string(b), "\n")
		return append(b, body...)
	})
	if _, err := LoadCSVDir(joined, Options{}); err == nil || !strings.Contains(err.Error(), "pinned_cuda_api_trace.csv: data row 475 (CUDA API call cuModuleGetLoadingMode)") ||
		!strings.Contains(err.Error(), "another API call of process 22 has the same correlation id") {
		t.Errorf("two traces in one report: %v", err)
	}
	fast := copyCSV(t, func(name string, b []byte) []byte {
		if name != "pinned_cuda_gpu_trace.csv" {
			return b
		}
		return []byte(strings.Replace(string(b), "907990569,33046671,128,", "907990569,1,128,", 1))
	})
	if _, _, err := streamCopies(fast, Options{}); err == nil || !strings.Contains(err.Error(), "pinned_cuda_gpu_trace.csv: data row 1 (memory copy HtoD)") ||
		!strings.Contains(err.Error(), "over a link of 63.02 GB/s (PCIe 5.0 x16 of the NVIDIA H200") {
		t.Errorf("a copy of 268 MB in 1 ns: %v", err)
	}
}

// TestCrossRecordCancel: a cancelled context stops a read within
// recordsPerCheck records, whatever the consumer does with them.
func TestCrossRecordCancel(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	seen := 0
	h, _ := validating(ctx, records.Handler{Call: func(*records.Call) error {
		if seen++; seen == 10 {
			cancel(errors.New("stop"))
		}
		return nil
	}}, FormatSQLite)
	var err error
	for i := int64(1); i <= 5*recordsPerCheck && err == nil; i++ {
		err = h.Call(&records.Call{Name: "cudaFree", Start: 10 * i, End: 10*i + 5, Corr: i, PID: 1, TID: 1})
	}
	if err == nil || err.Error() != "stop" || seen > recordsPerCheck {
		t.Errorf("after %d records: %v", seen, err)
	}
}

func TestSpans(t *testing.T) {
	s := &spans{}
	for _, p := range [][2]int64{{50, 60}, {0, 10}, {10, 20}, {30, 45}} {
		s.add(p[0], p[1])
	}
	if a, b, ok := s.overlap(); ok {
		t.Errorf("touching spans overlap: %v %v", a, b)
	}
	if c, ok := s.before(30); !ok || c.end != 20 {
		t.Errorf("before(30) = %v, %v", c, ok)
	}
	if c, ok := s.before(0); ok {
		t.Errorf("before(0) = %v", c)
	}
	s.add(12, 15) // inside [10, 20]
	if a, b, ok := s.overlap(); !ok || a.start != 10 || b.start != 12 {
		t.Errorf("overlap = %v %v %v", a, b, ok)
	}
	z := &spans{}
	z.add(5, 5)
	z.add(5, 5)
	if _, _, ok := z.overlap(); !ok {
		t.Error("two empty spans at one time: no overlap found")
	}
	var c corrSet
	if c.add(1, 300) || c.add(2, 300) || !c.add(1, 300) || c.add(1, 301) {
		t.Error("corrSet")
	}
}

// TestCorrSetSparse: ids spread so far apart that a page each would take
// more than a list go to the list, found twice once sorted, in memory that
// grows with the ids, not their spread.
func TestCorrSetSparse(t *testing.T) {
	var c corrSet
	for i := int64(0); i < 100000; i++ {
		c.add(7, i<<20)
	}
	if c.list == nil || len(c.pages) != 0 || len(c.list) != 100000 {
		t.Fatalf("100,000 sparse ids: %d pages, list %d", len(c.pages), len(c.list))
	}
	if _, dup := c.dup(); dup {
		t.Fatal("a duplicate among distinct ids")
	}
	c.add(7, 5<<20)
	if pc, dup := c.dup(); !dup || pc != [2]int64{7, 5 << 20} {
		t.Errorf("dup = %v %v", pc, dup)
	}
	var dense corrSet
	for i := int64(1); i <= 100000; i++ {
		dense.add(7, i)
	}
	if dense.list != nil || len(dense.pages) > 400 {
		t.Errorf("100,000 dense ids: %d pages, list %v", len(dense.pages), dense.list != nil)
	}
}

func TestNesting(t *testing.T) {
	open := int64(math.MaxInt64)
	for _, c := range []struct {
		rs   [][2]int64
		bad  bool
		name string
	}{
		{[][2]int64{{0, 100}, {10, 20}, {20, 30}, {40, 100}, {100, 110}}, false, "nested and touching"},
		{[][2]int64{{0, open}, {10, 20}, {30, open}}, false, "open ranges hold the later ones"},
		{[][2]int64{{0, 100}, {50, 150}}, true, "straddling"},
		{[][2]int64{{0, 100}, {10, open}}, true, "an open range inside a closed one"},
		{[][2]int64{{5, 10}, {5, 20}}, false, "pushed at once"},
	} {
		if _, _, bad := nesting(c.rs); bad != c.bad {
			t.Errorf("%s: %v, want %v", c.name, bad, c.bad)
		}
	}
}

// TestSpansLog: the log kept for records in start order answers every
// question as the sorted columns do, whatever the records (runs one after
// another, touching, overlapping, starting together), across the blocks of
// its index and after a record out of order turns it into columns.
func TestSpansLog(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 1 + rng.IntN(3*spanBlockLen)
		log, cols := &spans{}, &spanColumns{}
		starts := make([]int64, n)
		var at int64
		for i := range starts {
			switch rng.IntN(20) {
			case 0: // starts with the one before
			case 1:
				at += 1 + rng.Int64N(1<<40) // a long gap
			default: // steps and durations of a few sizes, so that ends tie
				at += 500 * rng.Int64N(4)
			}
			starts[i] = at
		}
		outOfOrder := trial%5 == 4
		if outOfOrder {
			k := rng.IntN(n)
			starts[k] = rng.Int64N(starts[k] + 1)
		}
		for i, start := range starts {
			end := start + 500*rng.Int64N(6)
			if trial%3 == 0 && i+1 < n && starts[i+1] >= start { // one at a time, or touching
				end = start + rng.Int64N(starts[i+1]-start+1)
			}
			log.add(start, end)
			cols.add(start, end)
		}
		a, b, ok := log.overlap()
		i, j := cols.overlap()
		if ok != (i >= 0) || ok && (a != cols.at(i) || b != cols.at(j)) {
			t.Fatalf("trial %d: overlap %v %v %v, columns %d %d", trial, a, b, ok, i, j)
		}
		for range 50 {
			q := rng.Int64N(at + 2)
			c, ok := log.before(q)
			k := cols.before(q)
			if ok != (k >= 0) || ok && c != cols.at(k) {
				t.Fatalf("trial %d: before(%d) = %v %v, columns %d", trial, q, c, ok, k)
			}
		}
		if !outOfOrder && log.cols != nil {
			t.Fatalf("trial %d: records in start order turned into columns", trial)
		}
	}
}

// TestCrossing: a stream's copies against its kernels, in both forms of
// the kernels' spans (in order, and out of order), against every pair.
func TestCrossing(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var seen [2]int
	for trial := range 300 {
		copies, kernels := &spans{}, &spans{}
		var cs, ks []span
		var at int64
		for range 1 + rng.IntN(2*spanBlockLen) { // copies one after another
			at += 1 + rng.Int64N(1000)
			c := span{at, at + rng.Int64N(1000)}
			at = c.end
			copies.add(c.start, c.end)
			cs = append(cs, c)
		}
		for range rng.IntN(1 + rng.IntN(2)*spanBlockLen) { // none to a few, or many
			s := rng.Int64N(at + 1)
			k := span{s, s + rng.Int64N(3)}
			if trial%2 == 0 { // kernels in start order: the log's form
				if n := len(ks); n > 0 && k.start < ks[n-1].start {
					k = span{ks[n-1].start, ks[n-1].start + rng.Int64N(50)}
				}
			}
			kernels.add(k.start, k.end)
			ks = append(ks, k)
		}
		want := false
		for _, c := range cs {
			for _, k := range ks {
				if k.start < c.end && k.end > c.start {
					want = true
				}
			}
		}
		c, k, ok := crossing(copies, kernels)
		if ok {
			seen[1]++
		} else {
			seen[0]++
		}
		if ok != want {
			t.Fatalf("trial %d: crossing ok %v, want %v", trial, ok, want)
		}
		if ok && !(k.start < c.end && k.end > c.start) {
			t.Fatalf("trial %d: crossing gave copy %v and kernel %v, which do not overlap", trial, c, k)
		}
	}
	if seen[0] < 20 || seen[1] < 20 {
		t.Errorf("trials without and with an overlap: %v, want both at least 20", seen)
	}
}
