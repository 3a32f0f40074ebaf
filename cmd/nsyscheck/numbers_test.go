package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/check"
	"github.com/nsyscheck/nsyscheck/internal/golden"
	"github.com/nsyscheck/nsyscheck/predictions"
)

// The numbers every shipped and reference capture gives, read from the
// typed results rather than from any rendering: every verdict, measured
// value, bound and source of every claim, every prediction's verdict,
// the exercise, every table row and the diagnostics' codes and levels.
// testdata/numbers holds them; a change of wording leaves them alone, a
// change of a number shows here. Numbers are written in full precision.

// claimNumbers are one claim's numbers.
type claimNumbers struct {
	ID       string          `json:"id"`
	Verdict  string          `json:"verdict"`
	Measured *float64        `json:"measured"`
	Bound    float64         `json:"bound"`
	From     string          `json:"from,omitempty"`
	Control  bool            `json:"control,omitempty"`
	Sources  []sourceNumbers `json:"sources,omitempty"`
	Records  []string        `json:"records,omitempty"`
	// Why names, per source, the type of the reason it cannot answer.
	Why []string `json:"why,omitempty"`
	// Facts are the types of the evidence's facts, in order.
	Facts []string `json:"facts,omitempty"`
}

type sourceNumbers struct {
	Source   string   `json:"source"`
	Verdict  string   `json:"verdict"`
	Measured *float64 `json:"measured"`
	Bound    float64  `json:"bound"`
}

type predictionNumbers struct {
	ID        int      `json:"id"`
	Verdict   string   `json:"verdict"`
	Claims    []string `json:"claims"`
	Unchecked int      `json:"unchecked,omitempty"`
}

type exerciseNumbers struct {
	Verdict string   `json:"verdict"`
	H2D     *float64 `json:"h2d"`
	D2H     *float64 `json:"d2h"`
	Answer  string   `json:"answer,omitempty"`
	From    string   `json:"from,omitempty"`
}

// verifyNumbers are one input's numbers.
type verifyNumbers struct {
	Thread         string              `json:"thread,omitempty"`
	Claims         []claimNumbers      `json:"claims"`
	Predictions    []predictionNumbers `json:"predictions"`
	Exercise       exerciseNumbers     `json:"exercise"`
	Copies         []any               `json:"copies"`
	Async          []any               `json:"async"`
	Kernels        []any               `json:"kernels"`
	AsyncCalls     []any               `json:"asyncCalls"`
	DeviceCopyGBps float64             `json:"deviceCopyGBps"`
	Diagnostics    []string            `json:"diagnostics"`
}

// numbersOf reads the numbers out of a checked input's typed result.
func numbersOf(r *predictions.Result) verifyNumbers {
	n := verifyNumbers{DeviceCopyGBps: r.DeviceCopyGBps,
		Copies: []any{}, Async: []any{}, Kernels: []any{}, AsyncCalls: []any{}, Diagnostics: []string{}}
	if th := r.Input.Thread; th != nil {
		n.Thread = fmt.Sprintf("%d/%d", th.PID, th.TID)
	}
	for _, c := range r.Claims {
		cn := claimNumbers{ID: c.ID, Verdict: string(c.Verdict), Measured: c.Measured, Bound: c.Compare.Bound, From: string(c.From), Control: c.Control}
		for _, s := range c.Sources {
			cn.Sources = append(cn.Sources, sourceNumbers{Source: string(s.Source), Verdict: string(s.Verdict), Measured: s.Measured, Bound: s.Bound})
		}
		for _, e := range c.Evidence {
			for _, rec := range e.Records {
				cn.Records = append(cn.Records, recordsNumbers(rec))
			}
			cn.Facts = append(cn.Facts, fmt.Sprintf("%s %T", e.Source, e.Fact))
		}
		for _, w := range c.Why {
			cn.Why = append(cn.Why, fmt.Sprintf("%s %T", w.Source, w.Why))
		}
		n.Claims = append(n.Claims, cn)
	}
	for _, p := range r.Predictions {
		n.Predictions = append(n.Predictions, predictionNumbers{ID: p.ID, Verdict: string(p.Verdict), Claims: p.Claims, Unchecked: len(p.Unchecked)})
	}
	ex := r.Exercise
	n.Exercise = exerciseNumbers{Verdict: string(ex.Verdict), H2D: ex.H2DRatio, D2H: ex.D2HRatio, Answer: string(ex.Answer), From: string(ex.From)}
	for _, c := range predictions.CopyRows.Of(r) {
		n.Copies = append(n.Copies, []any{c.From, c.Direction, c.Source, c.Bytes, c.Ms, c.GBps, c.Ratio, c.Runs, c.CorrelationIDs})
	}
	for _, a := range predictions.AsyncRows.Of(r) {
		n.Async = append(n.Async, []any{a.From, a.Source, a.Bytes, a.CallMs, a.CompletionMs, a.Share, a.Runs, a.CorrelationIDs})
	}
	for _, k := range predictions.KernelRows.Of(r) {
		n.Kernels = append(n.Kernels, []any{k.From, k.Variant, k.Bytes, k.MsPerLaunch, k.GBps, k.Runs, k.CorrelationIDs})
	}
	for _, a := range predictions.CallRows.Of(r) {
		n.AsyncCalls = append(n.AsyncCalls, []any{a.From, a.PageableMs, a.PinnedMs, a.PageableCorrelationIDs, a.PinnedCorrelationIDs})
	}
	for _, d := range r.Diagnostics {
		n.Diagnostics = append(n.Diagnostics, fmt.Sprintf("%s %s %T", d.Level, d.Code(), d.Detail))
	}
	return n
}

// recordsNumbers names a group of records by its typed fields: group,
// table, the span of CSV data rows or correlation ids, and the count.
func recordsNumbers(r predictions.Records) string {
	g := r.Group
	s := fmt.Sprintf("%s %s %s %s", g.Dir, sizeOf(g.Bytes), g.Source, g.Variant)
	s = strings.Join(strings.Fields(s), " ") + " | " + r.Table
	if r.Rows != nil {
		s += fmt.Sprintf(" | rows %d..%d", r.Rows.First, r.Rows.Last)
	}
	if r.Corr != nil {
		s += fmt.Sprintf(" | corr %d..%d", r.Corr.First, r.Corr.Last)
	}
	return s + fmt.Sprintf(" | %d", r.Count)
}

func sizeOf(b int64) string {
	switch {
	case b == 0:
		return ""
	case b%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", b>>20)
	}
	return fmt.Sprintf("%d B", b)
}

// TestNumbers pins the numbers of every input TestPinnedNumbers reads, from
// the typed result of the pipeline verify runs (load, evaluate, enrich).
func TestNumbers(t *testing.T) {
	for _, in := range pinnedInputs {
		t.Run(in.name, func(t *testing.T) {
			path := in.path
			if in.csvFrom != "" {
				path = csvOnlyCopy(t, in.csvFrom)
			}
			ks, err := check.Paths([]string{path}, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			assertNumbers(t, in.name, numbersOf(ks[0].Result))
		})
	}
}

// assertNumbers compares v, as JSON with one row a line, with
// testdata/numbers/NAME.json.
func assertNumbers(t *testing.T, name string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, filepath.Join("testdata", "numbers", name+".json"), rowsPerLine(data))
}

// rowsPerLine lays compact JSON out with a line for each field of the top
// object and each element of the arrays it holds; what is deeper stays on
// its element's line.
func rowsPerLine(data []byte) []byte {
	var b bytes.Buffer
	depth, inString, escaped := 0, false, false
	for _, c := range data {
		if inString {
			b.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			b.WriteByte(c)
		case '{', '[':
			depth++
			b.WriteByte(c)
			if depth <= 2 {
				b.WriteString("\n" + strings.Repeat(" ", depth))
			}
		case '}', ']':
			if depth <= 2 {
				b.WriteString("\n" + strings.Repeat(" ", depth-1))
			}
			depth--
			b.WriteByte(c)
		case ',':
			b.WriteByte(c)
			if depth <= 2 {
				b.WriteString("\n" + strings.Repeat(" ", depth))
			}
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// auditNumbers are one audit's numbers.
type auditNumbers struct {
	APICalls     int64    `json:"apiCalls"`
	SpanNs       int64    `json:"spanNs"`
	Copies       int64    `json:"copies"`
	Unmatched    int64    `json:"unmatched"`
	Memsets      int64    `json:"memsets"`
	Totals       []any    `json:"totals"`
	Classes      []any    `json:"classes"`
	TopOffenders []string `json:"topOffenders"`
	Findings     []any    `json:"findings"`
	Prediction   []any    `json:"prediction"`
	Groups       []any    `json:"groups"`
	Regions      []any    `json:"regions"`
	Framework    string   `json:"framework"`
	Replay       []any    `json:"replay"`
	Rule         []any    `json:"rule"`
	Diagnostics  []string `json:"diagnostics"`
	Exposures    int      `json:"exposures"`
}

func auditNumbersOf(au *audit.Audit) auditNumbers {
	n := auditNumbers{APICalls: au.APICalls, SpanNs: au.SpanNs, Copies: au.Copies, Unmatched: au.Unmatched, Memsets: au.Memsets,
		Totals: []any{}, Classes: []any{}, TopOffenders: []string{}, Findings: []any{}, Groups: []any{}, Diagnostics: []string{},
		Exposures: len(au.Exposures)}
	for _, t := range au.Totals {
		n.Totals = append(n.Totals, []any{t.Direction, t.HostMemory, t.APIKind, t.Count, t.Bytes, t.HostNs, t.GPUNs})
	}
	for _, c := range au.Classes {
		n.Classes = append(n.Classes, []any{c.Label(), c.Count, c.Bytes, c.HostNs, c.GPUNs, c.GPUGBps, c.HostGBps, c.HostShare, c.SecretlySync})
	}
	for _, c := range au.TopOffenders {
		n.TopOffenders = append(n.TopOffenders, c.Label())
	}
	for _, f := range au.Findings {
		var ev []any
		for _, e := range f.Evidence {
			ev = append(ev, []any{e.CorrelationID, e.PID, e.TID, e.Bytes, e.CallStart, e.CallNs, e.GPUStart, e.GPUNs, e.Held})
		}
		n.Findings = append(n.Findings, []any{f.ID, f.Count, f.Bytes, f.HostNs, ev})
	}
	if p := au.Prediction; p != nil {
		n.Prediction = []any{p.Sources, p.Count, p.Bytes, p.BeforeNs, p.AfterNs, p.AfterLowNs, p.AfterHighNs,
			p.SavedNs, p.SavedLowNs, p.SavedHighNs, p.HtoD.BeforeNs, p.HtoD.PageableBeforeNs, p.HtoD.AfterNs, p.HtoD.AfterLowNs, p.HtoD.AfterHighNs, p.HtoD.Bytes}
		for _, g := range p.Groups {
			n.Groups = append(n.Groups, []any{g.Direction, g.APIKind, g.SizeBucket, g.Count, g.Bytes, g.BeforeNs, g.AfterNs, g.AfterLowNs, g.AfterHighNs, g.Source})
		}
	}
	n.Framework = string(au.Framework.Framework)
	for _, r := range au.Regions {
		mid, lo, hi := r.Predicted()
		n.Regions = append(n.Regions, []any{r.Name, r.Instances, r.Measure, r.MedianMs, r.SpanMs, r.ReplayMedianMs, r.ReplaySpanMs,
			mid, lo, hi, r.Overlap.Measured, r.Overlap.Predicted, r.HostShare.Measured, r.PageableShare})
	}
	if rp := au.Replay; rp != nil {
		n.Replay = []any{rp.PinBy.String(), rp.Recosted, rp.Uncosted, rp.Kept, rp.Forced, len(rp.Costs), au.PinAllocs.Calls, au.PinAllocs.HostNs}
	}
	if r := au.NVIDIA; r != nil {
		n.Rule = []any{r.Available, r.RuleCount, r.AuditCount, r.Both, r.Agree, len(r.OnlyRule), len(r.OnlyAudit)}
	}
	for _, d := range au.Diagnostics {
		n.Diagnostics = append(n.Diagnostics, string(d.Level)+" "+string(d.Code()))
	}
	return n
}

// tolerance is a region check's tolerance as the numbers name it.
type tolerance struct {
	Model     float64 `json:"model"`
	Fit       float64 `json:"fit"`
	NoiseLow  float64 `json:"noiseLow"`
	NoiseHigh float64 `json:"noiseHigh"`
}

// checkNumbers are the numbers of an audit's check after the fix.
func checkNumbers(c *audit.Check) []any {
	var classes []any
	for _, cc := range c.Classes {
		classes = append(classes, []any{cc.Class, cc.Status, cc.Before.Count, cc.Before.HostNs, cc.AfterPageable.Count, cc.AfterPinned.Count, cc.AfterPinned.HostNs})
	}
	var pairs []any
	for _, p := range c.Pairs {
		pairs = append(pairs, []any{p.Label, p.BeforeNs, p.AfterNs})
	}
	var regions []any
	for _, r := range c.Regions {
		regions = append(regions, []any{r.Name, r.Judged, r.Measure, r.AfterMedianMs, r.AfterSpanMs, r.BoundLowMs, r.BoundHighMs,
			tolerance{r.Tolerance.Model, r.Tolerance.Fit, r.Tolerance.NoiseLow, r.Tolerance.NoiseHigh}, r.Faster, r.Verdict, r.Why})
	}
	return []any{c.Verdict, c.HtoDBeforeNs, c.HtoDAfterNs, c.HtoDBytesBefore, c.HtoDBytesAfter, c.BytesChange,
		c.PredictedAfterNs, c.PredictedAfterLowNs, c.PredictedAfterHighNs, c.PredictedSavedNs, c.SavedNs, c.PredictionSources,
		c.PageableBefore.Count, c.PageableBefore.HostNs, c.PageableAfter.Count, c.PageableAfter.HostNs, c.PageableOtherAfter.Count,
		regions, c.PinAllocsBefore.Calls, c.PinAllocsAfter.Calls, c.PinAllocsAfter.HostNs, classes, pairs}
}

// TestAuditNumbers pins the numbers of the audit of every shipped capture
// that has an expected audit, and of the check of the PyTorch training
// loop's capture after the fix against the one before it.
func TestAuditNumbers(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := filepath.Join("..", "..", "testdata", "captures")
	out, err := check.Audit(context.Background(), filepath.Join(root, "train-pageable"), filepath.Join(root, "train-pinned"),
		check.AuditOptions{NoRule: true})
	if err != nil {
		t.Fatal(err)
	}
	assertNumbers(t, "audit.train-pageable", auditNumbersOf(out.Before))
	assertNumbers(t, "audit.train-pinned", auditNumbersOf(out.After))
	assertNumbers(t, "audit.check", checkNumbers(out.Check))
	for _, name := range []string{"train-pageable", "torch-lesson", "h200-pinned"} {
		// NVIDIA's rule from the CSV beside the capture, never from an nsys
		// that happens to be installed.
		one, err := check.Audit(context.Background(), filepath.Join(root, name), "", check.AuditOptions{Nsys: filepath.Join(t.TempDir(), "no-nsys")})
		if err != nil {
			t.Fatal(err)
		}
		assertNumbers(t, "audit."+name+".rule", auditNumbersOf(one.Before))
	}
}
