package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/nsyscheck/nsyscheck/coverage"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// The answer every format leads with: each prediction's verdict with the
// claims that decided it (a died claim with its number and what it
// needed), the exercise, the check against a reference, and what broke the
// lesson's premise (the error diagnostics) with what to do about it.

// summaryRow is one line of the answer: a label ("prediction 1",
// "exercise"), its verdict and what decided it; Notes are lines beneath it
// (the controls the input could not check).
type summaryRow struct {
	Label, Verdict, Text string
	Notes                []string
}

// summaryRows is the answer's rows for one result.
func summaryRows(r *predictions.Result) []summaryRow {
	var rows []summaryRow
	for _, p := range r.Predictions {
		var parts []string
		for _, id := range p.Claims {
			if c := r.Claim(id); c != nil {
				parts = append(parts, claimBrief(c))
			}
		}
		row := summaryRow{Label: fmt.Sprintf("prediction %d", p.ID), Verdict: string(p.Verdict),
			Text: topicOf(p.ID) + ": " + strings.Join(parts, ", ")}
		for _, u := range p.Unchecked {
			row.Notes = append(row.Notes, uncheckedWords(u))
		}
		rows = append(rows, row)
	}
	rows = append(rows, summaryRow{Label: "exercise", Verdict: string(r.Exercise.Verdict), Text: exerciseBrief(r)})
	if rc := r.Reference; rc != nil {
		rows = append(rows, summaryRow{Label: "reference", Verdict: string(rc.Verdict), Text: referenceWords(rc)})
	}
	return rows
}

// claimBrief is a claim's id and verdict, with the number that failed and
// what it needed where it died: "1.floor died (0.9707, needs >= 1.3)".
func claimBrief(c *predictions.Claim) string {
	s := fmt.Sprintf("%s %s", c.ID, c.Verdict)
	if c.Verdict == predictions.Died && c.Measured != nil {
		s += " (" + failedText(c) + ")"
	}
	if c.Control {
		// A control guards the comparison; it is not the claim.
		s += " (control)"
	}
	return s
}

// needsText is what a claim's test asks of its value: "needs >= 1.3",
// "needs 312.1 to 1248".
func needsText(c predictions.Comparison) string {
	if c.Relation == predictions.Within {
		lo, hi := span(c)
		return fmt.Sprintf("needs %s to %s", num(lo), num(hi))
	}
	return "needs " + relationWord(c) + " " + num(c.Bound)
}

// failedText is a died claim's value against what it needed, read as a
// failure: "0.9707, needs >= 1.3", never as the inequality it broke.
func failedText(c *predictions.Claim) string {
	return num(*c.Measured) + ", " + needsText(c.Compare)
}

// exerciseBrief is the exercise's answer in a line, or why there is none.
func exerciseBrief(r *predictions.Result) string {
	ex := r.Exercise
	if ex.Verdict != vocab.Answered || ex.H2DRatio == nil || ex.D2HRatio == nil {
		return sourceWhys(ex.Why)
	}
	// The ratios as the exercise's table gives them.
	ratios := fmt.Sprintf("pageable/pinned at %s h2d %s, d2h %s (%s)",
		sizeName(predictions.ExerciseBytes), ratioText(*ex.H2DRatio), ratioText(*ex.D2HRatio), ex.From)
	if ex.Answer == predictions.GainSame {
		return "pinning buys about the same both ways: " + ratios
	}
	return fmt.Sprintf("pinning buys more %s: %s", ex.Answer, ratios)
}

// referenceWords is the check against a reference in words: the two
// ratios, how far apart, the pinned rows slower than their pageable ones,
// or which input lacks the ratio.
func referenceWords(rc *predictions.ReferenceCheck) string {
	ref := rc.Reference
	if rc.GPU != "" {
		ref += ", " + rc.GPU
	}
	if rc.Verdict == predictions.Unavailable {
		var lack, notPinned, gates []string
		for _, w := range rc.Why {
			if len(w.NotPinned) > 0 {
				of := w.Path
				if w.Reference {
					of = "the reference " + w.Path
				}
				notPinned = append(notPinned, fmt.Sprintf("%s copies its %s groups from pageable memory (pinned-source-pageable)",
					of, strings.Join(w.NotPinned, " and ")))
				continue
			}
			if w.Gate != "" {
				of := w.Path
				if w.Reference {
					of = "the reference " + w.Path
				}
				gates = append(gates, fmt.Sprintf("%s: the program's correctness gate %q failed: its numbers give no ratio", of, w.Gate))
				continue
			}
			if w.Reference {
				lack = append(lack, "the reference "+w.Path)
			} else {
				lack = append(lack, w.Path)
			}
		}
		why := gates
		if len(notPinned) > 0 {
			why = append(why, strings.Join(notPinned, "; ")+": its pinned buffer is not pinned, and its ratio compares pageable with pageable")
		}
		if len(lack) > 0 {
			why = append(why, fmt.Sprintf("no h2d pageable/pinned ratio at %s in %s", sizeName(predictions.ExerciseBytes), strings.Join(lack, " nor in ")))
		}
		return strings.Join(why, "; ") + ", so no check against the reference"
	}
	dev := *rc.Deviation
	side := "above"
	if dev < 0 {
		side = "below"
	}
	s := fmt.Sprintf("h2d pageable/pinned at %s %s against the reference's %s, %s %s",
		sizeName(predictions.ExerciseBytes), ratioText(*rc.Ratio), ratioText(*rc.RefRatio), pctPlain(math.Abs(dev)), side)
	if math.Abs(dev) > predictions.ReferenceTolerance {
		s += fmt.Sprintf(" (needs within %s)", pctPlain(predictions.ReferenceTolerance))
	} else {
		s += fmt.Sprintf(" (within %s)", pctPlain(predictions.ReferenceTolerance))
	}
	if len(rc.Slower) > 0 {
		parts := make([]string, len(rc.Slower))
		for i, sr := range rc.Slower {
			parts[i] = fmt.Sprintf("%s (pinned %s ms, pageable %s ms, %s)", sr.Dir, msText(sr.PinnedMs), msText(sr.PageableMs), sr.From)
		}
		s += fmt.Sprintf("; pinned is slower than pageable at %s: %s, so your pinned buffer probably is not pinned",
			sizeName(predictions.ExerciseBytes), strings.Join(parts, ", "))
	}
	return s + "; reference: " + ref
}

// pctPlain is a fraction as a percentage with one decimal where it needs
// one: "38.0%", "20%".
func pctPlain(f float64) string {
	if f == math.Trunc(f*100)/100 {
		return fmt.Sprintf("%.0f%%", 100*f)
	}
	return fmt.Sprintf("%.1f%%", 100*f)
}

// notLessonWords says that the input is not a capture of the lesson's
// program, and the audit command that checks the lesson's rule on any
// program's copies, to be printed whole on its own line.
func notLessonWords(r *predictions.Result, why predictions.Why) (said, pointer, command string) {
	what := "none of the lesson's four parts is in its trace"
	if _, ok := why.(predictions.NoCalls); ok {
		what = "its trace has none of the lesson's CUDA runtime calls"
	}
	if hidden := coverage.HidesCopies(r.Diagnostics); len(hidden) > 0 {
		what += ", as far as it shows: " + hiddenWords(hidden)
	}
	return "not the lesson's program: " + what,
		"for the lesson's rule on this program's own copies:", "nsyscheck audit " + r.Input.Path
}

// splitCauses separates the diagnostics that say what broke the lesson's
// premise (errors: a "pinned" buffer that is pageable, a failed gate),
// shown beside the verdicts, from the rest.
func splitCauses(ds []diagView) (causes, rest []diagView) {
	for _, d := range ds {
		if d.Level == diag.Error || coverage.Hides(d.Code) {
			causes = append(causes, d)
		} else {
			rest = append(rest, d)
		}
	}
	return causes, rest
}

// adviceAfter gives, per diagnostic, the advice to say after it: each
// advice once, after the last diagnostic that carries it, unless said
// already holds it (it was said before); said is updated.
func adviceAfter(ds []diagView, said map[string]bool) []string {
	out := make([]string, len(ds))
	last := map[string]int{}
	for i, d := range ds {
		if d.Advice != "" {
			last[d.Advice] = i
		}
	}
	for a, i := range last {
		if !said[a] {
			out[i] = a
			said[a] = true
		}
	}
	return out
}

// sentence is text as a sentence: a capital first letter and a full stop.
func sentence(s string) string {
	if s == "" {
		return s
	}
	return capital(s) + "."
}

// capital is text with a capital first letter.
func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
