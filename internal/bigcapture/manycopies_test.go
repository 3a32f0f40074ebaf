package bigcapture

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

var manySource = filepath.Join("..", "..", ManySource)

// TestMain runs the tests, then removes the captures they shared.
func TestMain(m *testing.M) {
	code := m.Run()
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

// shared holds the captures sharedMany made, by number of copies, in
// sharedDir.
var (
	shared    fixture.Shared[int, *ManyResult]
	sharedDir string
)

// sharedMany is ManyCopies' capture of n copies with its CSV reports and
// NVIDIA's rule CSV, made on first use in a folder the package's tests
// share (they only read it): the SQLite export is the same with the CSV
// reports beside it or without.
func sharedMany(t *testing.T, n int) *ManyResult {
	t.Helper()
	return shared.Get(n, func() *ManyResult {
		if sharedDir == "" {
			d, err := os.MkdirTemp("", "bigcapture-shared-")
			if err != nil {
				t.Fatal(err)
			}
			sharedDir = d
		}
		out, err := os.MkdirTemp(sharedDir, strconv.Itoa(n)+"-")
		if err != nil {
			t.Fatal(err)
		}
		res, err := ManyCopies(ManyConfig{Source: manySource, OutDir: out, Copies: n, CSV: true, Rule: true})
		if err != nil {
			t.Fatal(err)
		}
		return res
	})
}

// realShape is the shape of the 600,000-copy capture many_copies made on
// the H200 (go run ./internal/bigcapture/cmd/bigcapture -shape on it; the
// 55 MB export itself is not in git).
const realShape = "testdata/many-copies-600k.shape.json"

// TestManyCopiesShapeOfTheReal600k: the generated 600,000-copy capture has
// the real one's tables, columns and row counts, and its calls, copies,
// ranges and synchronisations by kind. nsys's own buffer flushes
// (PROFILER_OVERHEAD), which nsyscheck never reads, are as many as the
// source's among its batches.
func TestManyCopiesShapeOfTheReal600k(t *testing.T) {
	b, err := os.ReadFile(realShape)
	if err != nil {
		t.Fatal(err)
	}
	var want Shape
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	res, err := ManyCopies(ManyConfig{Source: manySource, OutDir: t.TempDir(), Copies: 600_000})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ShapeOf(res.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range got.Differences(&want, tabOverhead) {
		t.Error(d)
	}
	if res.Batches != 600 {
		t.Errorf("%d batches, want 600", res.Batches)
	}
}

// TestManyCopiesRepeatsTheSource: as many copies as the source holds give
// the source's rows back, every column; twice as many give each batch
// twice, its calls, copies and synchronisation as long as before, after
// the one before and with correlation ids of their own, the rows in start
// order; the program's last calls and the trace's stop follow.
func TestManyCopiesRepeatsTheSource(t *testing.T) {
	src := openRO(t, manySource)
	one := sharedMany(t, 20_000)
	same := openRO(t, one.SQLite)
	for _, table := range []string{tabRuntime, tabMemcpy, nsysdb.TableSync, tabNVTX, nsysdb.TableDiagnostic, nsysdb.TableAnalysis} {
		q := `SELECT * FROM ` + table + ` ORDER BY rowid`
		if s, g := dump(t, src, q), dump(t, same, q); !reflect.DeepEqual(s, g) {
			t.Errorf("%s: %d rows differ from the source's %d", table, len(g), len(s))
		}
	}

	two := sharedMany(t, 40_000)
	big := openRO(t, two.SQLite)
	for _, table := range []string{tabRuntime, tabMemcpy, nsysdb.TableSync, tabNVTX} {
		q := `SELECT count(*), sum("end" - start) FROM ` + table
		var n0, d0, n1, d1 int64
		if err := src.QueryRow(q).Scan(&n0, &d0); err != nil {
			t.Fatal(err)
		}
		if err := big.QueryRow(q).Scan(&n1, &d1); err != nil {
			t.Fatal(err)
		}
		extra := int64(0)
		if table == tabRuntime {
			extra = 9 // the calls before and after the batches, once
		}
		if n1-extra != 2*(n0-extra) {
			t.Errorf("%s: %d rows, want %d", table, n1, 2*(n0-extra)+extra)
		}
		if table != tabRuntime && d1 != 2*d0 {
			t.Errorf("%s: %d ns in all, want twice the source's %d", table, d1, d0)
		}
		if n := count(t, big, `SELECT count(*) FROM (SELECT start, lag(start) OVER (ORDER BY rowid) AS p FROM `+table+`) WHERE start < p`); n != 0 {
			t.Errorf("%s: %d rows out of start order", table, n)
		}
	}
	if n := count(t, big, `SELECT count(*) - count(DISTINCT correlationId) FROM `+tabRuntime); n != 0 {
		t.Errorf("%d calls share a correlation id", n)
	}
	if n := count(t, big, `SELECT count(*) FROM `+tabMemcpy+` m JOIN `+tabRuntime+` r USING (correlationId) WHERE m.start < r.start`); n != 0 {
		t.Errorf("%d copies start before their calls", n)
	}
	if n := count(t, big, `SELECT count(*) FROM `+tabMemcpy+` m JOIN `+tabRuntime+` r USING (correlationId)`); n != 40_000 {
		t.Errorf("%d copies join their calls, want 40000", n)
	}
	var lastCall, stop int64
	if err := big.QueryRow(`SELECT max("end") FROM ` + tabRuntime).Scan(&lastCall); err != nil {
		t.Fatal(err)
	}
	if err := big.QueryRow(`SELECT stopTime FROM ` + nsysdb.TableAnalysis).Scan(&stop); err != nil {
		t.Fatal(err)
	}
	if stop < lastCall {
		t.Errorf("the trace stops at %d, before its last call ends at %d", stop, lastCall)
	}
	if got := dump(t, big, `SELECT text FROM `+nsysdb.TableDiagnostic+` WHERE text LIKE 'Number of % events collected%' ORDER BY text`); !slices.Equal(got,
		[]string{"Number of CUDA events collected: \t80050.", "Number of NVTX events collected: \t40."}) {
		t.Errorf("nsys's counts say %q", got)
	}
}

// TestManyCopiesCSV: the CSV reports of as many copies as the source holds
// are the source's, byte for byte; of twice as many, twice their rows, the
// ranges numbered on.
func TestManyCopiesCSV(t *testing.T) {
	one := sharedMany(t, 20_000)
	base := manySource[:len(manySource)-len(".sqlite")]
	for _, r := range append(manyReports, ruleReport) {
		want, err := os.ReadFile(base + "_" + r.key + ".csv")
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(one.CSVDir, "many-20000_"+r.key+".csv")
		if r.key == ruleReport.key {
			out = one.RuleCSV
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from the source's report", out)
		}
	}
	two := sharedMany(t, 40_000)
	for key, rows := range map[string]int{nsysdb.ReportAPITrace: 40_049, nsysdb.ReportGPUTrace: 40_001, nsysdb.ReportNVTXTrace: 40} {
		lines := csvLines(t, filepath.Join(two.CSVDir, "many-40000_"+key+".csv"))
		if len(lines)-1 != rows {
			t.Errorf("%s: %d rows, want %d", key, len(lines)-1, rows)
		}
		if key == nsysdb.ReportNVTXTrace {
			if last := lines[len(lines)-1]; last[10] != "40" || last[12] != ":40" {
				t.Errorf("the last range is numbered %s (%s), want 40", last[10], last[12])
			}
		}
	}
}

// TestManyCopiesSteps: a step range around every 10 copy calls, inside its
// batch's range.
func TestManyCopiesSteps(t *testing.T) {
	res, err := ManyCopies(ManyConfig{Source: manySource, OutDir: t.TempDir(), Copies: 8_000, StepEvery: 10})
	if err != nil {
		t.Fatal(err)
	}
	db := openRO(t, res.SQLite)
	if res.Steps != 800 || count(t, db, `SELECT count(*) FROM `+tabNVTX+` WHERE text = 'step'`) != 800 {
		t.Errorf("%d step ranges, want 800", res.Steps)
	}
	if n := count(t, db, `SELECT count(*) FROM `+tabNVTX+` s WHERE text = 'step' AND NOT EXISTS (SELECT 1 FROM `+tabNVTX+
		` b WHERE b.text LIKE 'batch-%' AND b.start <= s.start AND b."end" >= s."end")`); n != 0 {
		t.Errorf("%d steps outside a batch", n)
	}
	if n := count(t, db, `SELECT count(*) FROM `+tabRuntime+` r JOIN StringIds v ON v.id = r.nameId WHERE v.value LIKE 'cudaMemcpyAsync%' AND NOT EXISTS (SELECT 1 FROM `+tabNVTX+
		` s WHERE s.text = 'step' AND s.start <= r.start AND s."end" >= r."end")`); n != 0 {
		t.Errorf("%d copy calls outside a step", n)
	}
	if _, err := ManyCopies(ManyConfig{Source: manySource, OutDir: t.TempDir(), Copies: 8_000, StepEvery: 7}); err == nil {
		t.Error("steps of 7 calls in batches of 1000 were made")
	}
	if _, err := ManyCopies(ManyConfig{Source: manySource, OutDir: t.TempDir(), Copies: 8_500}); err == nil {
		t.Error("8500 copies in batches of 1000 were made")
	}
}

// csvLines reads a CSV file's records, its header first.
func csvLines(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
