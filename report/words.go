package report

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/coverage"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/fleet"
	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/predictions"
	"github.com/nsyscheck/nsyscheck/privacy"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// The words of every typed detail a result carries are made here and only
// here: the renderers of every format and the JSON's transfer types call
// these functions.

// diagView is a diagnostic as every renderer shows it: what it noticed
// (Message) and what to do about it (Advice, "" where nothing), which a
// renderer says once for the diagnostics beside each other that share it.
type diagView struct {
	Level   diag.Level
	Code    diag.Code
	Message string
	Advice  string
}

// Full is the diagnostic's message with its advice, standing alone.
func (d diagView) Full() string {
	if d.Advice == "" {
		return d.Message
	}
	return d.Message + "; " + d.Advice
}

// diagViews words the diagnostics.
func diagViews(ds []diag.Diagnostic) []diagView {
	out := make([]diagView, len(ds))
	for i, d := range ds {
		out[i] = diagView{Level: d.Level, Code: d.Code(), Message: noticedWords(d.Detail), Advice: detailAdvice(d.Detail)}
		if hidden := coverage.HidesCopies(ds); len(hidden) > 0 && statesNone(d.Detail) {
			out[i].Message += "; " + hiddenWords(hidden)
		}
	}
	return out
}

// detailAdvice is what to do about a diagnostic: the lesson's advice, or
// how to capture what the capture cannot show.
func detailAdvice(d diag.Detail) string {
	if a := lessonAdvice(d); a != "" {
		return a
	}
	return coverageAdvice(d)
}

// statesNone reports whether a diagnostic says something is not there (NVIDIA's
// rule flagging no copy), which a capture that may lack copies cannot vouch for.
func statesNone(d diag.Detail) bool {
	switch d := d.(type) {
	case diag.NsysRuleAlone:
		return d.Flagged == 0
	case diag.NsysRule:
		return d.Flagged == 0
	}
	return false
}

// DiagnosticText is what a diagnostic noticed and what to do about it, in
// the words every format shows.
func DiagnosticText(d diag.Diagnostic) string { return detailWords(d.Detail) }

// detailWords is what a diagnostic noticed and what to do about it.
func detailWords(d diag.Detail) string {
	return diagView{Message: noticedWords(d), Advice: detailAdvice(d)}.Full()
}

// noticedWords is what a diagnostic noticed, in words.
func noticedWords(d diag.Detail) string {
	switch d := d.(type) {
	case diag.Note:
		return d.Text
	}
	if s, ok := lessonDetailWords(d); ok {
		return s
	}
	if s, ok := pipelineWords(d); ok {
		return s
	}
	if s, ok := coverageWords(d); ok {
		return s
	}
	switch d := d.(type) {
	case fleet.Finding:
		return findingWords(d)
	case privacy.Exposure:
		return exposureWords(d)
	}
	// A detail without words of its own still shows its values.
	return fmt.Sprintf("%+v", d)
}

// relationWord is a comparison's relation as the output spells it: ">=",
// "<", "=", or "within 2x of" (the factor's).
func relationWord(c predictions.Comparison) string {
	switch c.Relation {
	case predictions.AtLeast:
		return ">="
	case predictions.Below:
		return "<"
	case predictions.Equal:
		return "="
	case predictions.Within:
		return fmt.Sprintf("within %gx of", c.Factor)
	}
	return "?"
}

// span is a Within comparison's interval, low and high.
func span(c predictions.Comparison) (lo, hi float64) {
	iv := c.Interval()
	return *iv.Low, *iv.High
}

// threadID names a thread as the output does: "pid/tid".
func threadID(t vocab.Thread) string { return fmt.Sprintf("%d/%d", t.PID, t.TID) }

// pipelineWords is what a diagnostic the pipeline adds noticed, in words;
// ok is false for a detail that is not the pipeline's.
func pipelineWords(d diag.Detail) (string, bool) {
	switch d := d.(type) {
	case diag.NsysRule:
		other := ""
		if d.Unmatched > 0 {
			other = fmt.Sprintf(", %d matching no call of the program's thread", d.Unmatched)
		}
		verdict, reading := "disagrees with", "nsyscheck's reading of part 2 (the pageable group copies from pageable memory, the pinned group does not)"
		if d.Agrees {
			verdict = "agrees with"
		}
		if d.ByCopyRecords {
			reading = "the copy records, which show the pinned group copying from pageable memory too (see pinned-source-pageable)"
		}
		return fmt.Sprintf("NVIDIA's %s rule (%s) flags %s from pageable memory: %d of the %d timed pageable calls, %d of the %d timed pinned calls, %d other (e.g. warm-ups)%s; it %s %s",
			d.Rule, d.File, counted(d.Flagged, "copy", "copies"), d.PageableHit, d.Pageable, d.PinnedHit, d.Pinned, d.Other, other, verdict, reading), true
	case diag.NsysRuleAlone:
		if d.NoCopyRecords {
			return fmt.Sprintf("NVIDIA's %s rule (%s) flags %s from pageable memory; this input has no GPU memory-copy records to match them with (verify the SQLite export to compare)",
				d.Rule, d.File, counted(d.Flagged, "copy", "copies")), true
		}
		return fmt.Sprintf("NVIDIA's %s rule (%s) flags %s from pageable memory; the trace gave no part 2 groups to compare them with",
			d.Rule, d.File, counted(d.Flagged, "copy", "copies")), true
	case diag.NsysRuleUnread:
		return d.Err, true
	case diag.PCIeLink:
		s := fmt.Sprintf("GPU link PCIe Gen%d x%d (now Gen%d x%d), rated %.1f GB/s per direction", d.GenMax, d.WidthMax, d.GenNow, d.WidthNow, d.RatedGBps)
		parts := make([]string, len(d.Pinned))
		for i, p := range d.Pinned {
			parts[i] = fmt.Sprintf("pinned %s at %s %.1f GB/s = %.0f%%", strings.ToUpper(p.Dir), sizeName(d.PinnedBytes), p.GBps, 100*p.GBps/d.RatedGBps)
		}
		if len(parts) > 0 {
			s += ": " + strings.Join(parts, ", ")
		}
		return s, true
	case diag.ResidentVsCopy:
		return fmt.Sprintf("device-resident kernel %.0f GB/s (%s) = %.0f%% of the device-to-device cudaMemcpy bandwidth %.0f GB/s measured in the same run",
			d.KernelGBps, d.From, 100*d.KernelGBps/d.DeviceGBps, d.DeviceGBps), true
	case diag.ScanFailed:
		return fmt.Sprintf("could not scan %s for exposed environment or processes: %s", d.File, d.Err), true
	case diag.SharedGPU:
		gpu := "the GPU"
		if d.GPU >= 0 {
			gpu = fmt.Sprintf("GPU %d", d.GPU)
		}
		return fmt.Sprintf("%s was shared: %s; bandwidth and timing verdicts were measured beside that work and may be disturbed (run again on an idle GPU to trust them)",
			gpu, d.Seen), true
	case diag.TraceLost:
		s := TraceLossText(d.Loss) + ", although the program ran to the end and wrote its own results; nsys traced with -t " + d.Trace + ", " +
			"so the flags are not the cause: another profiler or CUPTI client (a second nsys or Nsight session, DCGM profiling metrics) " +
			"was probably attached at the same time and took the trace"
		if d.Shared {
			s += " (other work was seen on the GPU: see " + string(diag.CodeSharedGPU) + ")"
		}
		if len(d.Own) > 0 {
			s += "; verdicts resting on the program's own numbers only: " + strings.Join(d.Own, ", ")
		}
		if len(d.None) > 0 {
			s += "; unavailable without the trace: " + strings.Join(d.None, ", ")
		}
		return s + "; run again when no other profiler is active", true
	}
	return "", false
}

// TraceLossText says what a capture's CUDA trace lost.
func TraceLossText(l diag.TraceLoss) string {
	switch {
	case l.NoTrace:
		return "the export holds no CUDA API trace at all (no " + l.Lacks + ")"
	case l.NoCalls:
		return "the API trace holds no CUDA calls"
	}
	parts := make([]string, len(l.Short))
	for i, s := range l.Short {
		parts[i] = fmt.Sprintf("%d %s calls where the program timed %d", s.Held, s.API, s.Timed)
	}
	return "the API trace is truncated: it holds " + strings.Join(parts, ", ")
}

// exposureWords says what a capture file exposes; values are masked.
func exposureWords(e privacy.Exposure) string {
	var s string
	switch e.Kind {
	case privacy.ExposesCredential:
		f := e.Findings[0]
		fix := "nsyscheck scrub writes a copy without it"
		switch l := strings.ToLower(e.File); {
		case strings.HasSuffix(l, ".csv"):
			// scrub rewrites SQLite exports, not CSV reports.
			fix = "scrub cleans the SQLite export, not its CSV reports: export them again from the scrubbed copy"
		case strings.HasSuffix(l, ".json"), strings.HasSuffix(l, ".txt"):
			// nor the lesson program's own files.
			fix = "scrub cleans the SQLite export, not the program's own files: remove it from " + filepath.Base(e.File) + " before sharing"
		}
		s = fmt.Sprintf("%s %s=%s in %s looks like a credential; do not share this capture as it is (%s)",
			f.Kind, f.Label(), f.Masked, f.Where, fix)
	case privacy.ExposesEnvironment:
		s = fmt.Sprintf("%s outside the allowlist recorded in %s: %s", plural(len(e.Findings), "environment variable"), e.Where, findingNames(e.Findings, 12, true))
	case privacy.ExposesProcesses:
		s = fmt.Sprintf("%s other than the profiled program and nsys recorded in %s (a snapshot of the machine): %s",
			counted(len(e.Findings), "process", "processes"), e.Where, findingNames(e.Findings, 10, false))
	default:
		var secrets, rest []privacy.Finding
		for _, f := range e.Findings {
			if f.Kind == privacy.KindSecret {
				secrets = append(secrets, f)
			} else {
				rest = append(rest, f)
			}
		}
		s = fmt.Sprintf("%s (stale bytes no query shows, readable by anyone with the file): %s", privacy.UnusedPages, plural(stringsTold(e.Findings), "string"))
		if len(secrets) > 0 {
			s += fmt.Sprintf(", %d of them credential-like: %s", stringsTold(secrets), findingNames(secrets, 8, true))
		}
		if len(rest) > 0 {
			s += "; environment: " + findingNames(rest, 8, false)
		}
	}
	return e.File + ": " + s
}

// stringsTold is how many strings findings tell: one a finding, and each
// hit of a finding that counts values past the scan's cap
// (privacy.OtherValues).
func stringsTold(fs []privacy.Finding) int {
	n := len(fs)
	for _, f := range fs {
		if f.Masked == privacy.OtherValues {
			n += f.More
		}
	}
	return n
}

// findingNames names findings, at most limit of them, with their masked
// values where asked, a process's place, a raw hit's offset; the rest by
// the strings they tell (stringsTold).
func findingNames(fs []privacy.Finding, limit int, withValues bool) string {
	var parts []string
	for i, f := range fs {
		if i == limit {
			// What is left out, in the strings the findings tell, as the
			// count before the list is (a finding of the values past the
			// scan's cap tells many).
			parts = append(parts, fmt.Sprintf("and %d more", stringsTold(fs[limit:])))
			break
		}
		s := f.Label()
		if withValues && f.Masked != "" {
			s += "=" + f.Masked
		}
		switch {
		case f.Kind == privacy.KindProcess:
			s += " (" + f.Where + ")"
		case f.InRawBytes():
			s += fmt.Sprintf(" at offset %d", f.Offset)
			if f.More > 0 {
				s += fmt.Sprintf(" (+%d more)", f.More)
			}
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// Refused is the words of an audit's refusal: an *audit.Refusal's reader
// error with each limit the capture says it had, by its code and in words
// (how to capture it whole); any other error as it is.
func Refused(err error) error {
	var r *audit.Refusal
	if !errors.As(err, &r) {
		return err
	}
	var ie *inputerr.Error
	if !errors.As(r.Err, &ie) {
		return err
	}
	worded := *ie
	for _, d := range r.Limits {
		worded.Problem += fmt.Sprintf("; %s: %s", d.Code(), DiagnosticText(d))
	}
	return &worded
}
