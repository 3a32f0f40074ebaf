package predictions

import (
	"database/sql"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/vocab"

	_ "github.com/mattn/go-sqlite3"

	"github.com/nsyscheck/nsyscheck/capture"
)

const (
	refDir   = "../testdata/reference/h200-ref"
	ref2022  = "../testdata/reference/h200-ref-nsys2022-csv"
	lessonT4 = "../testdata/measurements/lesson-t4.json"
)

func TestLessonT4(t *testing.T) {
	c, err := capture.Load(lessonT4, capture.Options{APINames: Names()})
	if err != nil {
		t.Fatal(err)
	}
	r := Evaluate(c)
	wantVerdicts(t, r, map[string]Verdict{
		"1.floor": Held, "1.growth": Died, "2.pageable": Held, "2.pinned": Held,
		"3.factor": Died, "4.calltime": Held, "4.bytes": Held,
	})
	want := map[int]Verdict{1: Died, 2: Held, 3: Died, 4: Held}
	for _, p := range r.Predictions {
		if p.Verdict != want[p.ID] {
			t.Errorf("prediction %d = %s, want %s", p.ID, p.Verdict, want[p.ID])
		}
	}
	check := func(id string, measured, bound, tol float64) {
		t.Helper()
		c := r.Claim(id)
		if c.Measured == nil || math.Abs(*c.Measured-measured) > tol || math.Abs(c.Compare.Bound-bound) > tol {
			t.Errorf("%s: measured %v bound %v, want about %v and %v", id, c.Measured, c.Compare.Bound, measured, bound)
		}
	}
	check("1.floor", 2.72, 1.3, 0.005)
	check("1.growth", 0, 0.6, 1e-9)
	check("2.pageable", 0.994, 0.8, 0.0005)
	check("2.pinned", 0.0011, 0.1, 0.0001)
	check("3.factor", 9.91, 19.9, 0.05) // the lesson: 9.92x measured vs 19.9x predicted
	check("4.calltime", 1724.2, 5, 0.1) // the lesson rounds to ~1,717x
	check("4.bytes", 1, 1, 0)
	if r.Exercise.Verdict != vocab.Unanswered || len(r.Exercise.Why) != 1 || r.Exercise.Why[0].Why != (ProgramNoCopies{Program: programOf(c), Dir: vocab.D2H}) {
		t.Errorf("exercise %+v", r.Exercise)
	}
	if r.AllHeld() {
		t.Error("AllHeld with predictions 1 and 3 dead")
	}
}

// The reference capture's verdicts, computed: checked here so that a golden
// rewrite cannot silently change them.
func TestReferenceVerdicts(t *testing.T) {
	c, err := capture.Load(filepath.Join(refDir, "ref.sqlite"), capture.Options{APINames: Names()})
	if err != nil {
		t.Fatal(err)
	}
	r := Evaluate(c)
	wantVerdicts(t, r, allVerdicts(Held))
	for _, cl := range r.Claims {
		if cl.From != SourceTrace {
			t.Errorf("%s decided by %s, want the trace", cl.ID, cl.From)
		}
	}
	// Part 2's pageable share from the trace vs the transcript (99.8%).
	if s := *r.Claim("2.pageable").Measured; math.Abs(s-0.998) > 0.001 {
		t.Errorf("2.pageable share %v", s)
	}
	// Bytes per launch come from the transcript (the reference build moves
	// 64 MiB per launch in all), not the bundled program's design.
	if k := KernelRows.Of(r)[0]; k.Bytes != 64*mib || !(k.BytesFrom.Given || k.BytesFrom.Implied) {
		t.Errorf("kernel bytes %d from %+v, want the program's numbers", k.Bytes, k.BytesFrom)
	}
	if r.Exercise.Answer != "host-to-device" {
		t.Errorf("exercise %+v", r.Exercise)
	}

	csv, err := capture.LoadCSVDir(refDir, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rc := Evaluate(csv)
	wantVerdicts(t, rc, map[string]Verdict{"1.floor": Unavailable, "2.pageable": Held, "2.pinned": Held,
		"3.factor": Unavailable, "4.calltime": Held, "4.bytes": Unavailable})
	// The CSV and SQLite traces hold the same calls: same part 2 numbers.
	for _, id := range []string{"2.pageable", "2.pinned", "4.calltime"} {
		if a, b := *r.Claim(id).Measured, *rc.Claim(id).Measured; math.Abs(a-b) > 1e-9*math.Abs(a) {
			t.Errorf("%s: sqlite %v, csv %v", id, a, b)
		}
	}
}

// noNVTXCopy copies ref.sqlite and drops its NVTX table, as a capture made
// with -t cuda would lack it.
func noNVTXCopy(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "ref.sqlite")
	in, err := os.Open(filepath.Join(refDir, "ref.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", dst)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("DROP TABLE NVTX_EVENTS"); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestReferenceWithoutNVTX(t *testing.T) {
	path := noNVTXCopy(t)
	c, err := capture.LoadSQLite(path, capture.Options{APINames: Names()})
	if err != nil {
		t.Fatal(err)
	}
	if c.Has(records.FactNVTX) {
		t.Fatal("the copy still has NVTX ranges")
	}
	r := Evaluate(c)
	withC, err := capture.LoadSQLite(filepath.Join(refDir, "ref.sqlite"), capture.Options{APINames: Names()})
	if err != nil {
		t.Fatal(err)
	}
	with := Evaluate(withC)
	for _, cl := range with.Claims {
		o := r.Claim(cl.ID)
		if o.Verdict != cl.Verdict {
			t.Errorf("%s: %s without NVTX (%+v), %s with", cl.ID, o.Verdict, o.Why, cl.Verdict)
			continue
		}
		if math.Abs(*o.Measured-*cl.Measured) > 1e-9*math.Abs(*cl.Measured) {
			t.Errorf("%s: measured %v without NVTX, %v with", cl.ID, *o.Measured, *cl.Measured)
		}
		if !foundWithoutNVTX(o.Evidence) {
			t.Errorf("%s evidence does not say the groups were found without NVTX", cl.ID)
		}
	}
	if r.Exercise.Verdict != vocab.Answered || *r.Exercise.D2HRatio != *with.Exercise.D2HRatio {
		t.Errorf("exercise without NVTX %+v", r.Exercise)
	}
}

// The shipped captures of the bundled program, with and without NVTX, must
// answer the same.
func TestShippedCaptures(t *testing.T) {
	var rs []*Result
	for _, dir := range []string{"../testdata/captures/h200-pinned", "../testdata/captures/h200-pinned-nonvtx"} {
		c, err := capture.Load(filepath.Join(dir, "pinned.sqlite"), capture.Options{APINames: Names()})
		if err != nil {
			t.Fatal(err)
		}
		r := Evaluate(c)
		for _, cl := range r.Claims {
			if cl.Verdict == Unavailable {
				t.Errorf("%s: %s unavailable: %+v", dir, cl.ID, cl.Why)
			}
		}
		rs = append(rs, r)
	}
}

// foundWithoutNVTX reports whether the evidence says its groups were found
// without NVTX ranges: by runs of copies, by the copies' records or by
// order.
func foundWithoutNVTX(ev []Evidence) bool {
	var without func(f Fact) bool
	without = func(f Fact) bool {
		switch f := f.(type) {
		case SweepByRuns, AsyncByCopies, AsyncByOrder, KernelsByOrder:
			return true
		case AsyncMethod:
			return without(f.Groups)
		case CallsMethod:
			return without(f.Groups)
		case BytesMethod:
			return without(f.Groups)
		case GrowthRatios:
			return without(f.Method)
		}
		return false
	}
	for _, e := range ev {
		if without(e.Fact) {
			return true
		}
	}
	return false
}
