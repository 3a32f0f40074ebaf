package predictions

import (
	"math"

	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// ReferenceTolerance is the lesson's check of the exercise against a
// reference run: the host-to-device pageable/pinned ratio at ExerciseBytes
// within this fraction of the reference's (ratios, not times, since
// another machine's link gives other times).
const ReferenceTolerance = 0.20

// ReferenceCheck is the exercise's check against a reference: the input's
// host-to-device pageable/pinned ratio at ExerciseBytes against the
// reference's, and the rows at that size where the input's pinned copy is
// slower than its pageable one (the lesson's sign of a "pinned" buffer that
// is not). It holds when the ratio is within ReferenceTolerance of the
// reference's and no pinned row is slower; it is unavailable when either
// input lacks the ratio.
type ReferenceCheck struct {
	// Reference is the reference input's path, GPU its GPU where named.
	Reference string
	GPU       string
	Verdict   Verdict
	// Ratio is the input's ratio and From its source; RefRatio and RefFrom
	// the reference's. Nil where the input has no such ratio.
	Ratio, RefRatio *float64
	From, RefFrom   Source
	// Deviation is Ratio / RefRatio - 1; nil where either ratio is.
	Deviation *float64
	// Slower are the input's rows at ExerciseBytes, either direction, whose
	// pinned copy is slower than the pageable one.
	Slower []SlowRow
	// Why says why the check cannot be made: which of the two lacks the
	// ratio. Empty unless the verdict is unavailable.
	Why []ReferenceWhy
}

// SlowRow is one direction's row at ExerciseBytes where the pinned copy
// took longer than the pageable one.
type SlowRow struct {
	Dir        vocab.Direction
	From       Source
	PinnedMs   float64
	PageableMs float64
}

// ReferenceWhy says that the input (Reference false) or the reference
// lacks the host-to-device ratio at ExerciseBytes, or, where NotPinned
// names groups, that the reference's ratio compares pageable with
// pageable: its trace shows those pinned groups' copies with a pageable
// host side (pinned-source-pageable). A reference whose pinned buffer is not pinned
// is refused rather than compared with a warning: its ratio (about 1x)
// says nothing of what pinning buys, and any verdict against it would be
// made from a number known to be wrong.
// Where Gate names one, the program's correctness gate of the input or
// the reference failed, and its numbers give no ratio (GateUntrusted).
type ReferenceWhy struct {
	Reference bool
	Path      string
	NotPinned []string
	Gate      string
}

// CheckReference checks r's exercise against ref, as the lesson asks.
func CheckReference(r, ref *Result) ReferenceCheck {
	rc := ReferenceCheck{Reference: ref.Input.Path, GPU: ref.Input.GPU, Verdict: Unavailable}
	gate, refGate := failedGate(r.Diagnostics), failedGate(ref.Diagnostics)
	rc.Ratio, rc.From = exerciseH2D(r, gate == "")
	rc.RefRatio, rc.RefFrom = exerciseH2D(ref, refGate == "")
	rc.Slower = slowerAt(r, ExerciseBytes)
	// The input's own pinned buffer not pinned is what the check is there
	// to show (its pinned rows slower, the ratio far below the
	// reference's): it is judged. The reference's is refused.
	if rc.Ratio == nil {
		rc.Why = append(rc.Why, ReferenceWhy{Path: r.Input.Path, Gate: gate})
	}
	if g := pinnedNotPinned(ref.Diagnostics); len(g) > 0 {
		rc.RefRatio = nil
		rc.Why = append(rc.Why, ReferenceWhy{Reference: true, Path: ref.Input.Path, NotPinned: g})
	} else if rc.RefRatio == nil {
		rc.Why = append(rc.Why, ReferenceWhy{Reference: true, Path: ref.Input.Path, Gate: refGate})
	}
	if len(rc.Why) > 0 {
		return rc
	}
	dev := *rc.Ratio / *rc.RefRatio - 1
	rc.Deviation = &dev
	rc.Verdict = verdictOf(atMost(math.Abs(dev), ReferenceTolerance) && len(rc.Slower) == 0)
	return rc
}

// exerciseH2D is a result's host-to-device pageable/pinned ratio at
// ExerciseBytes and its source: the trace's where it has the row, else the
// program's where program says its numbers may decide.
func exerciseH2D(r *Result, program bool) (*float64, Source) {
	rows := CopyRows.Of(r)
	for _, from := range []Source{SourceTrace, SourceProgram} {
		if from == SourceProgram && !program {
			continue
		}
		for _, c := range rows {
			if c.From == from && c.Direction == vocab.H2D && c.Bytes == ExerciseBytes && c.Ratio > 0 {
				return ptr(c.Ratio), from
			}
		}
	}
	return nil, ""
}

// failedGate names the first of the program's correctness gates that
// failed, "" where none did.
func failedGate(ds []diag.Diagnostic) string {
	for _, d := range ds {
		if g, ok := d.Detail.(GateFailed); ok {
			return g.Name
		}
	}
	return ""
}

// slowerAt lists, per direction, the row at bytes whose pinned copy is
// slower than its pageable one, from the source that gives that
// direction's row (the trace's first).
func slowerAt(r *Result, bytes int64) []SlowRow {
	rows := CopyRows.Of(r)
	var out []SlowRow
	for _, dir := range []vocab.Direction{vocab.H2D, vocab.D2H} {
		for _, from := range []Source{SourceTrace, SourceProgram} {
			var pg, pn *CopyRow
			for i := range rows {
				c := &rows[i]
				if c.From != from || c.Direction != dir || c.Bytes != bytes {
					continue
				}
				switch c.Source {
				case vocab.MemPageable:
					pg = c
				case vocab.MemPinned:
					pn = c
				}
			}
			if pg == nil || pn == nil {
				continue
			}
			if pn.Ms > pg.Ms {
				out = append(out, SlowRow{Dir: dir, From: from, PinnedMs: pn.Ms, PageableMs: pg.Ms})
			}
			break
		}
	}
	return out
}

// NotTheLesson says why the input is not a capture of the lesson's
// program, or is nil where it may be one: every claim and the exercise are
// unavailable from the trace alone, no numbers of the program are beside
// it, and part 1 found in the trace either no CUDA runtime call the lesson
// makes (NoCalls) or neither the lesson's NVTX ranges nor runs of its
// copies (NoRuns): an application's capture, for the audit.
func (r *Result) NotTheLesson() Why {
	if len(r.Claims) == 0 || r.Exercise.Verdict == vocab.Answered || r.Input.ProgramSource != "" {
		return nil
	}
	for _, c := range r.Claims {
		if c.Verdict != Unavailable {
			return nil
		}
		for _, w := range c.Why {
			if w.Source != SourceTrace {
				return nil
			}
		}
	}
	floor := r.Claim("1.floor")
	if floor == nil || len(floor.Why) != 1 {
		return nil
	}
	switch w := floor.Why[0].Why.(type) {
	case NoRuns, NoCalls:
		return w
	}
	return nil
}
