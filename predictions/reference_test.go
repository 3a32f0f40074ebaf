package predictions

import (
	"math"
	"testing"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/vocab"
)

const captures = "../testdata/captures/"

// loadResult evaluates a shipped capture.
func loadResult(t *testing.T, path string) *Result {
	t.Helper()
	c, err := capture.Load(path, capture.Options{APINames: Names()})
	if err != nil {
		t.Fatal(err)
	}
	return Evaluate(c)
}

// TestCheckReference checks the exercise against a reference on the
// shipped captures: each ratio is the capture's own exercise ratio, the
// deviation their quotient, and the verdict the lesson's 20 percent.
func TestCheckReference(t *testing.T) {
	h200 := loadResult(t, captures+"h200-pinned/pinned.sqlite")
	for _, tc := range []struct {
		name, path string
		ref        *Result
		verdict    Verdict
		dev        float64 // about, from the ratios the captures' exercise prints
		slower     []vocab.Direction
	}{
		// The same program on the same machine, ported to PyTorch: 6.22x
		// against 6.12x.
		{"torch-lesson", captures + "torch-lesson/torch-lesson.sqlite", h200, Held, 6.2247/6.1220 - 1, nil},
		// Another run of the program with other counts: its pageable
		// copies ran slower that day, 8.45x against 6.12x, 38% above.
		{"other-counts", captures + "other-counts/other-counts.sqlite", h200, Died, 8.4482/6.1220 - 1, nil},
		// The "pinned" buffer from malloc: 1.00x, and its pinned
		// host-to-device row at 64 MiB slower than the pageable one.
		{"broken-pin", captures + "broken-pin/broken-pin.sqlite", h200, Died, 0.9993/6.1220 - 1, []vocab.Direction{vocab.H2D}},
		// The lesson's own T4 table as the reference: 6.12x against 2.69x.
		{"h200 against T4", captures + "h200-pinned/pinned.sqlite", loadResult(t, lessonT4), Died, 6.1220/(14.692/5.462) - 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := loadResult(t, tc.path)
			rc := CheckReference(r, tc.ref)
			if rc.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s (%+v)", rc.Verdict, tc.verdict, rc)
			}
			if rc.Ratio == nil || rc.RefRatio == nil || rc.Deviation == nil {
				t.Fatalf("ratios missing: %+v", rc)
			}
			if r.Exercise.H2DRatio != nil && *rc.Ratio != *r.Exercise.H2DRatio {
				t.Errorf("ratio %v, the exercise's %v", *rc.Ratio, *r.Exercise.H2DRatio)
			}
			if got := *rc.Ratio / *rc.RefRatio - 1; got != *rc.Deviation {
				t.Errorf("deviation %v, ratios give %v", *rc.Deviation, got)
			}
			if math.Abs(*rc.Deviation-tc.dev) > 0.001 {
				t.Errorf("deviation %.4f, want about %.4f", *rc.Deviation, tc.dev)
			}
			within := math.Abs(*rc.Deviation) <= ReferenceTolerance
			if within != (tc.verdict == Held) && len(tc.slower) == 0 {
				t.Errorf("deviation %.3f, verdict %s", *rc.Deviation, rc.Verdict)
			}
			var dirs []vocab.Direction
			for _, s := range rc.Slower {
				dirs = append(dirs, s.Dir)
				if !(s.PinnedMs > s.PageableMs) {
					t.Errorf("slower row %+v is not slower", s)
				}
			}
			if len(dirs) != len(tc.slower) || len(dirs) > 0 && dirs[0] != tc.slower[0] {
				t.Errorf("slower rows %v, want %v", dirs, tc.slower)
			}
			if rc.Reference != tc.ref.Input.Path {
				t.Errorf("reference %q, want %q", rc.Reference, tc.ref.Input.Path)
			}
		})
	}
}

// A reference without the host-to-device row at 64 MiB, or an input
// without it, leaves the check unavailable and says which.
func TestCheckReferenceUnavailable(t *testing.T) {
	h200 := loadResult(t, captures+"h200-pinned/pinned.sqlite")
	train := loadResult(t, captures+"train-pinned/train-pinned.sqlite")
	rc := CheckReference(train, h200)
	if rc.Verdict != Unavailable || len(rc.Why) != 1 || rc.Why[0].Reference || rc.Deviation != nil {
		t.Errorf("input without the ratio: %+v", rc)
	}
	rc = CheckReference(h200, train)
	if rc.Verdict != Unavailable || len(rc.Why) != 1 || !rc.Why[0].Reference || rc.RefRatio != nil {
		t.Errorf("reference without the ratio: %+v", rc)
	}
}

// A capture whose pinned buffer is not pinned (broken-pin: the trace shows
// its pinned groups copying pageable memory) answers no exercise, and is
// refused as a reference; checked against a good reference it still
// dies, which is how the check shows a broken buffer.
func TestPinnedNotPinned(t *testing.T) {
	h200 := loadResult(t, captures+"h200-pinned/pinned.sqlite")
	broken := loadResult(t, captures+"broken-pin/broken-pin.sqlite")
	ex := broken.Exercise
	if ex.Verdict != vocab.Unanswered || ex.H2DRatio != nil || ex.Answer != "" || len(ex.Why) != 1 {
		t.Fatalf("broken-pin's exercise: %+v", ex)
	}
	if why, ok := ex.Why[0].Why.(PinnedNotPinned); !ok || len(why.Groups) != 2 || why.Groups[0] != "h2d-pinned" || why.Groups[1] != "d2h-pinned" {
		t.Errorf("broken-pin's exercise unanswered for %#v, want the h2d-pinned and d2h-pinned groups", ex.Why[0].Why)
	}
	if h200.Exercise.Verdict != vocab.Answered {
		t.Errorf("h200-pinned's exercise: %+v", h200.Exercise)
	}
	rc := CheckReference(h200, broken)
	if rc.Verdict != Unavailable || rc.RefRatio != nil || rc.Deviation != nil || len(rc.Why) != 1 || !rc.Why[0].Reference || len(rc.Why[0].NotPinned) != 2 {
		t.Errorf("broken-pin as the reference: %+v", rc)
	}
	if rc := CheckReference(broken, h200); rc.Verdict != Died || rc.Ratio == nil || len(rc.Slower) == 0 {
		t.Errorf("broken-pin against h200-pinned: %+v", rc)
	}
}

// NotTheLesson tells an application's capture, where no part finds the
// lesson's program, from the program's captures, whatever they lack.
func TestNotTheLesson(t *testing.T) {
	for path, want := range map[string]Why{
		captures + "train-pinned/train-pinned.sqlite":       NoRuns{Kind: "HtoD", Thread: vocab.Thread{PID: 22, TID: 22}},
		captures + "driver-pageable/driver-pageable.sqlite": NoCalls{},
		captures + "h200-pinned/pinned.sqlite":              nil,
		captures + "broken-pin/broken-pin.sqlite":           nil,
		captures + "h200-pinned/pinned.transcript.txt":      nil,
		lessonT4: nil,
	} {
		if got := loadResult(t, path).NotTheLesson(); got != want {
			t.Errorf("%s: NotTheLesson %#v, want %#v", path, got, want)
		}
	}
}
