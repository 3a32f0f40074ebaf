package audit

import (
	"context"
	"database/sql"
	"math"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"github.com/nsyscheck/nsyscheck/capture"

	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/source"

	"github.com/nsyscheck/nsyscheck/vocab"
)

// The real captures: a PyTorch DataLoader training loop on the H200, with
// pin_memory off and on (testdata/captures/train-*).
var (
	trainPageable = filepath.Join("..", "testdata", "captures", "train-pageable")
	trainPinned   = filepath.Join("..", "testdata", "captures", "train-pinned")
)

func auditPath(t *testing.T, path string) *Audit {
	t.Helper()
	a := NewAccumulator()
	src, err := source.Open(context.Background(), path, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	scan, err := capture.TraceOf(context.Background(), src, a.Handler)
	if err != nil {
		t.Fatal(err)
	}
	return a.Finish(scan, Replayed{})
}

type sqlSums struct {
	n, bytes, host, sync int64
}

// plainSQL sums the host-to-device copies of one memory kind with one
// query of its own, independent of the loader: copies joined to their
// runtime calls, the call's duration as host time, and the 80% rule.
func plainSQL(t *testing.T, db, memKind string) sqlSums {
	t.Helper()
	conn, err := sql.Open("sqlite3", nsysdb.ReadOnlyURI(db))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var s sqlSums
	err = conn.QueryRow(`
		SELECT count(*), ifnull(sum(m.bytes), 0), ifnull(sum(r."end" - r.start), 0),
		       ifnull(sum(s.value LIKE 'cudaMemcpy%Async%' AND (r."end" - r.start) >= 0.8 * (m."end" - m.start)), 0)
		FROM CUPTI_ACTIVITY_KIND_MEMCPY m
		JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = m.correlationId
		JOIN StringIds s ON s.id = r.nameId
		WHERE m.copyKind = (SELECT id FROM ENUM_CUDA_MEMCPY_OPER WHERE name = 'CUDA_MEMCPY_KIND_HTOD')
		  AND m.srcKind = (SELECT id FROM ENUM_CUDA_MEM_KIND WHERE name = ?)`, memKind).Scan(&s.n, &s.bytes, &s.host, &s.sync)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRealCapturesAgainstPlainSQL(t *testing.T) {
	for _, c := range []struct {
		dir, db string
	}{{trainPageable, "train-pageable.sqlite"}, {trainPinned, "train-pinned.sqlite"}} {
		db := filepath.Join(c.dir, c.db)
		au := auditPath(t, db)
		for _, k := range []struct {
			kind string
			host HostMemory
		}{{"CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", Pageable}, {"CUDA_MEMOPR_MEMORY_KIND_PINNED", Pinned}} {
			want := plainSQL(t, db, k.kind)
			got := au.Sum(vocab.CopyHtoD, k.host, "")
			if got.Count != want.n || got.Bytes != want.bytes || got.HostNs != want.host {
				t.Errorf("%s %s HtoD: audit %+v, plain SQL %+v", db, k.host, got, want)
			}
			if k.host == Pageable {
				if f := au.Finding(FindingSecretlySync); f.Count != want.sync {
					t.Errorf("%s: %d secretly synchronous, plain SQL %d", db, f.Count, want.sync)
				}
			}
		}
	}
}

// TestRealCSVMatchesSQLite reads the same capture from its CSV reports and
// its SQLite export: the same classes, counts and host times (bytes differ
// only by the CSV's rounding to 1 kB).
func TestRealCSVMatchesSQLite(t *testing.T) {
	for _, dir := range []string{trainPageable, trainPinned} {
		m, _ := filepath.Glob(filepath.Join(dir, "*_cuda_gpu_trace.csv"))
		if len(m) != 1 {
			t.Fatalf("%s: no cuda_gpu_trace report", dir)
		}
		fromCSV := auditPath(t, m[0])
		dbs, _ := filepath.Glob(filepath.Join(dir, "*.sqlite"))
		fromDB := auditPath(t, dbs[0])
		if fromCSV.Copies != fromDB.Copies || fromCSV.APICalls != fromDB.APICalls ||
			len(fromCSV.Totals) != len(fromDB.Totals) {
			t.Fatalf("%s: CSV %d copies %d calls, SQLite %d copies %d calls", dir, fromCSV.Copies, fromCSV.APICalls, fromDB.Copies, fromDB.APICalls)
		}
		for i, tc := range fromCSV.Totals {
			td := fromDB.Totals[i]
			if tc.Direction != td.Direction || tc.HostMemory != td.HostMemory || tc.Count != td.Count || tc.HostNs != td.HostNs ||
				tc.GPUNs != td.GPUNs || math.Abs(float64(tc.Bytes-td.Bytes)) > float64(tc.Count)*500 {
				t.Errorf("%s: CSV %+v, SQLite %+v", dir, tc, td)
			}
		}
		for _, id := range []string{FindingSecretlySync, FindingNoOverlap} {
			if fromCSV.Finding(id).Count != fromDB.Finding(id).Count {
				t.Errorf("%s %s: CSV %d, SQLite %d", dir, id, fromCSV.Finding(id).Count, fromDB.Finding(id).Count)
			}
		}
	}
}
