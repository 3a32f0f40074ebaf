package predictions

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/vocab"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/capture"
)

// structureCaptures are the shipped H200 captures of programs that follow
// the lesson without being kernels/pinned.cu, with the number of timed runs
// per group their sources make (testdata/programs).
var structureCaptures = []struct {
	dir   string
	timed int
}{
	{"other-counts", 7},  // variants.sh: 2 warm-ups + 7 timed, 3 extra async copies
	{"broken-pin", 10},   // variants.sh: the "pinned" buffer from malloc
	{"torch-lesson", 10}, // torch_lesson.py: 3 warm-ups + 10 timed
}

// routes loads one shipped capture three ways: its SQLite export, its
// .nsys-rep (through the export beside it; no nsys is run), and its CSV
// reports (through one report, so that the folder's SQLite export is not
// picked). Each route attaches the program's numbers beside it, if any.
func routes(t *testing.T, dir string) map[string]*capture.Capture {
	t.Helper()
	d := filepath.Join("..", "testdata", "captures", dir)
	opts := capture.Options{APINames: Names(), ProgramThread: true, Nsys: filepath.Join(t.TempDir(), "no-nsys-here")}
	out := map[string]*capture.Capture{}
	for route, file := range map[string]string{
		"sqlite":   dir + ".sqlite",
		"nsys-rep": dir + ".nsys-rep",
		"csv":      dir + "_cuda_api_trace.csv",
	} {
		c, err := capture.Load(filepath.Join(d, file), opts)
		if err != nil {
			t.Fatalf("%s: %v", route, err)
		}
		out[route] = c
	}
	if f := out["nsys-rep"].Format; f != capture.FormatNsysRep {
		t.Errorf("the .nsys-rep route read %s", f)
	}
	if f := out["csv"].Format; f != capture.FormatCSV {
		t.Errorf("the CSV route read %s", f)
	}
	return out
}

func readExpect(t *testing.T, dir string) (claims map[string]Verdict, preds map[string]Verdict) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "captures", dir, "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Claims      map[string]Verdict `json:"claims"`
		Predictions map[string]Verdict `json:"predictions"`
	}
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatal(err)
	}
	return e.Claims, e.Predictions
}

// TestStructureCapturesRoutesAgree checks that the SQLite export, the
// .nsys-rep and the CSV reports of each new capture give the verdicts in its
// expect.json, never "unavailable", with the same measured numbers and the
// same timed calls.
func TestStructureCapturesRoutesAgree(t *testing.T) {
	for _, sc := range structureCaptures {
		t.Run(sc.dir, func(t *testing.T) {
			claims, preds := readExpect(t, sc.dir)
			rs := map[string]*Result{}
			for route, c := range routes(t, sc.dir) {
				r := Evaluate(c)
				rs[route] = r
				wantVerdicts(t, r, claims)
				for _, p := range r.Predictions {
					if want := preds[string(rune('0'+p.ID))]; p.Verdict != want {
						t.Errorf("%s: prediction %d = %s, want %s", route, p.ID, p.Verdict, want)
					}
				}
				for _, cl := range r.Claims {
					if cl.Verdict == Unavailable {
						t.Errorf("%s: %s unavailable: %+v", route, cl.ID, cl.Why)
					}
				}
			}
			ref := rs["sqlite"]
			for _, route := range []string{"nsys-rep", "csv"} {
				r := rs[route]
				for _, cl := range ref.Claims {
					o := r.Claim(cl.ID)
					if cl.Measured == nil || o.Measured == nil || !near(*cl.Measured, *o.Measured, 1e-12) {
						t.Errorf("%s: %s measured %v, sqlite %v", route, cl.ID, deref(o.Measured), deref(cl.Measured))
					}
				}
				if len(CopyRows.Of(r)) != len(CopyRows.Of(ref)) || len(AsyncRows.Of(r)) != len(AsyncRows.Of(ref)) || len(KernelRows.Of(r)) != len(KernelRows.Of(ref)) {
					t.Fatalf("%s: %d/%d/%d rows, sqlite %d/%d/%d", route, len(CopyRows.Of(r)), len(AsyncRows.Of(r)), len(KernelRows.Of(r)),
						len(CopyRows.Of(ref)), len(AsyncRows.Of(ref)), len(KernelRows.Of(ref)))
				}
				for i := range CopyRows.Of(ref) {
					a, b := CopyRows.Of(ref)[i], CopyRows.Of(r)[i]
					if a.Bytes != b.Bytes || a.Ms != b.Ms || fmt.Sprint(a.CorrelationIDs) != fmt.Sprint(b.CorrelationIDs) {
						t.Errorf("%s: copy row %d: %+v, sqlite %+v", route, i, b, a)
					}
				}
				for i := range AsyncRows.Of(ref) {
					if AsyncRows.Of(ref)[i].CallMs != AsyncRows.Of(r)[i].CallMs || AsyncRows.Of(ref)[i].CompletionMs != AsyncRows.Of(r)[i].CompletionMs || AsyncRows.Of(ref)[i].Bytes != AsyncRows.Of(r)[i].Bytes {
						t.Errorf("%s: async row %d: %+v, sqlite %+v", route, i, AsyncRows.Of(r)[i], AsyncRows.Of(ref)[i])
					}
				}
				for i := range KernelRows.Of(ref) {
					if KernelRows.Of(ref)[i].MsPerLaunch != KernelRows.Of(r)[i].MsPerLaunch {
						t.Errorf("%s: kernel row %d: %+v, sqlite %+v", route, i, KernelRows.Of(r)[i], KernelRows.Of(ref)[i])
					}
				}
			}
		})
	}
}

// TestStructureCapturesIndependentSQL recomputes each new capture's
// measured values with plain SQL on its SQLite export — the groups as
// what the lesson's NVTX ranges hold, the last N operations of each, a
// copy made as cudaMemcpyAsync timed to the end of the next
// cudaStreamSynchronize — and compares them with the verdicts' numbers.
func TestStructureCapturesIndependentSQL(t *testing.T) {
	for _, sc := range structureCaptures {
		t.Run(sc.dir, func(t *testing.T) {
			path := filepath.Join("..", "testdata", "captures", sc.dir, sc.dir+".sqlite")
			db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&immutable=1")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			meanOf := func(q string, args ...any) float64 {
				t.Helper()
				rows, err := db.Query(q, args...)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				var s float64
				n := 0
				for rows.Next() {
					var v float64
					if err := rows.Scan(&v); err != nil {
						t.Fatal(err)
					}
					s += v
					n++
				}
				if n != sc.timed {
					t.Fatalf("query gave %d rows, want %d: %s %v", n, sc.timed, q, args)
				}
				return s / float64(n)
			}
			// One copy operation per row: its duration on the thread.
			const copies = `
WITH r AS (SELECT start, end, globalTid FROM NVTX_EVENTS WHERE text = ?),
c AS (SELECT rt.start, rt.end, rt.correlationId, rt.globalTid, s.value AS name
      FROM CUPTI_ACTIVITY_KIND_RUNTIME rt JOIN StringIds s ON s.id = rt.nameId, r
      WHERE s.value LIKE 'cudaMemcpy%' AND rt.globalTid = r.globalTid AND rt.start >= r.start AND rt.end <= r.end)
SELECT CASE WHEN c.name LIKE 'cudaMemcpyAsync%' THEN
         (SELECT sy.end FROM CUPTI_ACTIVITY_KIND_RUNTIME sy JOIN StringIds ss ON ss.id = sy.nameId
          WHERE ss.value LIKE 'cudaStreamSynchronize%' AND sy.globalTid = c.globalTid AND sy.start >= c.end
          ORDER BY sy.start LIMIT 1)
       ELSE c.end END - c.start
FROM c JOIN CUPTI_ACTIVITY_KIND_MEMCPY m ON m.correlationId = c.correlationId
WHERE m.bytes = ? AND m.copyKind = 1
ORDER BY c.start DESC LIMIT ?`
			top := int64(256 << 20)
			floor := meanOf(copies, "h2d-pageable", top, sc.timed) / meanOf(copies, "h2d-pinned", top, sc.timed)

			// Part 2: the calls each async range holds.
			const async = `
WITH r AS (SELECT start, end, globalTid FROM NVTX_EVENTS WHERE text = ?)
SELECT %s FROM CUPTI_ACTIVITY_KIND_RUNTIME c JOIN StringIds s ON s.id = c.nameId
  JOIN CUPTI_ACTIVITY_KIND_MEMCPY m ON m.correlationId = c.correlationId, r
WHERE s.value LIKE 'cudaMemcpyAsync%' AND c.globalTid = r.globalTid AND c.start >= r.start AND c.end <= r.end`
			const completion = `(SELECT sy.end FROM CUPTI_ACTIVITY_KIND_RUNTIME sy JOIN StringIds ss ON ss.id = sy.nameId
  WHERE ss.value LIKE 'cudaStreamSynchronize%' AND sy.globalTid = c.globalTid AND sy.start >= c.end ORDER BY sy.start LIMIT 1) - c.start`
			q := func(expr string) string { return strings.Replace(async, "%s", expr, 1) }
			share := map[string]float64{}
			calls := map[string]float64{}
			bytes := map[string]float64{}
			for _, src := range []string{"pageable", "pinned"} {
				r := "async-" + src
				call := meanOf(q("c.end - c.start"), r)
				share[src] = call / meanOf(q(completion), r)
				calls[src] = call * float64(sc.timed)
				bytes[src] = meanOf(q("m.bytes"), r) * float64(sc.timed)
			}

			// Part 3: the kernels launched in each kernel range, the last N.
			const kernels = `
WITH r AS (SELECT start, end, globalTid FROM NVTX_EVENTS WHERE text = ?)
SELECT k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k
  JOIN CUPTI_ACTIVITY_KIND_RUNTIME c ON c.correlationId = k.correlationId, r
WHERE c.globalTid = r.globalTid AND c.start >= r.start AND c.end <= r.end
ORDER BY c.start DESC LIMIT ?`
			factor := meanOf(kernels, "kernel-zero-copy", sc.timed) / meanOf(kernels, "kernel-device-resident", sc.timed)

			want := map[string]float64{
				"1.floor": floor, "2.pageable": share["pageable"], "2.pinned": share["pinned"], "3.factor": factor,
				"4.calltime": calls["pageable"] / calls["pinned"], "4.bytes": bytes["pageable"] / bytes["pinned"],
			}
			for route, c := range routes(t, sc.dir) {
				r := Evaluate(c)
				for id, w := range want {
					cl := r.Claim(id)
					if cl.Measured == nil || !near(*cl.Measured, w, 1e-9) {
						t.Errorf("%s: %s measured %v, plain SQL %.6g", route, id, cl.Measured, w)
					}
				}
			}
			t.Logf("plain SQL: 1.floor %.4g, 2.pageable %.4g, 2.pinned %.4g, 3.factor %.4g, 4.calltime %.4g, 4.bytes %.4g (pageable %.0f B, pinned %.0f B)",
				floor, share["pageable"], share["pinned"], factor, calls["pageable"]/calls["pinned"], want["4.bytes"], bytes["pageable"], bytes["pinned"])
		})
	}
}

// TestStructureCapturesDiagnostics checks that each new capture's
// deviations from the lesson are named, not turned into "unavailable".
func TestStructureCapturesDiagnostics(t *testing.T) {
	type want struct {
		level diag.Level
		what  string
		is    func(d diag.Detail) bool
	}
	for dir, wants := range map[string][]want{
		"other-counts": {
			{diag.Info, "h2d-pageable holds 9 x 1 MiB", func(d diag.Detail) bool {
				s, ok := d.(RangeShape)
				return ok && s.Range == "h2d-pageable" && s.Counts[0] == SizeCount{Bytes: mib, N: 9}
			}},
			{diag.Info, "async-pageable holds 7 calls", func(d diag.Detail) bool {
				return d == AsyncRangeCount{Range: "async-pageable", N: 7, Thread: vocab.Thread{PID: 22, TID: 22}}
			}},
			{diag.Info, "19 calls, 5 outside the ranges", func(d diag.Detail) bool {
				s, ok := d.(AsyncOutside)
				return ok && s.N == 19 && s.Outside == 5
			}},
		},
		"broken-pin": {
			{diag.Error, "async-pinned copies pageable", func(d diag.Detail) bool {
				s, ok := d.(PinnedPageable)
				return ok && s.Group == "async-pinned" && s.Dir == vocab.H2D
			}},
			{diag.Error, "h2d-pinned copies pageable", func(d diag.Detail) bool {
				s, ok := d.(PinnedPageable)
				return ok && s.Group == "h2d-pinned" && s.Dir == vocab.H2D
			}},
		},
		"torch-lesson": {
			{diag.Warning, "the transcript set aside", func(d diag.Detail) bool {
				s, ok := d.(SiblingSetAside)
				return ok && strings.HasSuffix(s.Path, "torch-lesson.transcript.txt")
			}},
			{diag.Info, "h2d-pageable's 65 copies made as cudaMemcpyAsync + synchronize", func(d diag.Detail) bool { return d == CopySyncRange{Range: "h2d-pageable", N: 65} }},
			{diag.Info, "285 cudaMemcpyAsync calls", func(d diag.Detail) bool {
				s, ok := d.(AsyncOutside)
				return ok && s.N == 285
			}},
			{diag.Info, "the ranges' kernel vectorized_elementwise_kernel", func(d diag.Detail) bool {
				s, ok := d.(KernelRangeShape)
				return ok && s.Kernel == "vectorized_elementwise_kernel"
			}},
		},
	} {
		for route, c := range routes(t, dir) {
			r := Evaluate(c)
			for _, w := range wants {
				found := false
				for _, d := range r.Diagnostics {
					if d.Level == w.level && w.is(d.Detail) {
						found = true
					}
				}
				if !found {
					t.Errorf("%s %s: no %s diagnostic saying %s: %+v", dir, route, w.level, w.what, r.Diagnostics)
				}
			}
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
