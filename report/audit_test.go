package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/auditjson"
	"github.com/nsyscheck/nsyscheck/coverage"
	"github.com/nsyscheck/nsyscheck/diag"
	"github.com/nsyscheck/nsyscheck/framework"
	"github.com/nsyscheck/nsyscheck/internal/golden"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/timeline"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// fixture reads one of the audits of shipped captures the audit's path
// wrote (testdata/audits, kept by check's TestAuditFixtures).
func fixture(t *testing.T, name string) *audit.Output {
	t.Helper()
	out, ok, err := auditjson.ReadOutput(filepath.Join("testdata", "audits", name+".json"))
	if !ok || err != nil {
		t.Fatalf("fixture %s: %v %v", name, ok, err)
	}
	return out
}

// The report of the DataLoader pair: Markdown and HTML lead with the check
// of the regions, the HTML in tables with verdict badges, the plot drawn
// with each judged region's predicted and after time over its time before.
func TestAuditReport(t *testing.T) {
	out := fixture(t, "train")
	rep, err := BuildAudit(out)
	if err != nil {
		t.Fatal(err)
	}
	files, err := rep.Files()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sortedNames(AuditNames(out)), names(files); !slices.Equal(got, want) {
		t.Errorf("AuditNames = %v, Files holds %v", got, want)
	}
	for _, n := range []string{AuditMarkdownFile, AuditHTMLFile, "regions.png", "regions.svg"} {
		if len(files[n]) == 0 {
			t.Errorf("no %s", n)
		}
	}
	if img, err := png.Decode(bytes.NewReader(files["regions.png"])); err != nil || img.Bounds().Dx() < 500 {
		t.Errorf("regions.png: %v", err)
	}
	// Every bar is its row's number over the region's time before.
	judged := out.Before.Judged()
	pred, after := rep.Plot.Series[SeriesPredicted], rep.Plot.Series[SeriesAfter]
	if len(pred) != len(judged) || len(after) != len(judged) {
		t.Fatalf("series %v %v for %d regions", pred, after, len(judged))
	}
	for i, r := range judged {
		var rc *audit.RegionCheck
		for k := range out.Check.Regions {
			if out.Check.Regions[k].Name == r.Name {
				rc = &out.Check.Regions[k]
			}
		}
		mid, _, _ := r.Predicted()
		if math.Abs(pred[i].Y-mid/r.Time()) > 1e-12 || math.Abs(after[i].Y-rc.AfterMs()/r.Time()) > 1e-12 {
			t.Errorf("%s: bars %v and %v, rows %g and %g over %g", r.Name, pred[i], after[i], mid, rc.AfterMs(), r.Time())
		}
	}
	// A region not predicted has no bar predicted and no whisker: none
	// stands at its place.
	gone := judged[0]
	for i := range out.Before.Regions {
		if r := &out.Before.Regions[i]; r.Name == gone.Name {
			r.NotPredicted = &audit.NotPredicted{Uncosted: 1}
			r.PredictedMedianMs, r.PredictedSpanMs = 0, 0
		}
	}
	unpred, err := BuildAudit(out)
	if err != nil {
		t.Fatal(err)
	}
	pred = unpred.Plot.Series[SeriesPredicted]
	if len(pred) != len(judged)-1 || len(unpred.Plot.Series[SeriesAfter]) != len(judged) || !strings.Contains(unpred.Plot.Caption, "did not predict") {
		t.Errorf("%s not predicted: series %v, caption %q", gone.Name, unpred.Plot.Series, unpred.Plot.Caption)
	}
	for _, xy := range pred {
		if math.Round(xy.X) == 0 {
			t.Errorf("%s not predicted has a bar predicted: %v", gone.Name, xy)
		}
	}
	md := string(files[AuditMarkdownFile])
	check := strings.Index(md, "| region | time | before | predicted | bound | after | verdict |")
	classes := strings.Index(md, "| class |")
	if !strings.HasPrefix(md, "# Check of testdata/captures/train-pageable/train-pageable.sqlite against ") ||
		!strings.Contains(md, ": held\n") || check < 0 || classes < check || !strings.Contains(md, "![") {
		t.Errorf("audit.md does not lead with the check (at %d, classes at %d):\n%s", check, classes, md[:min(len(md), 800)])
	}
	html := string(files[AuditHTMLFile])
	for _, want := range []string{"<table>", `<span class="v v-held">held</span>`, "data:image/png;base64,", "<th>region</th>",
		"What to change (PyTorch)", "DataLoader(..., pin_memory=True)"} {
		if !strings.Contains(html, want) {
			t.Errorf("audit.html lacks %q", want)
		}
	}
	if strings.Contains(html, "<pre>") || strings.Contains(html, "| region |") {
		t.Error("audit.html holds Markdown, not HTML")
	}
	if strings.Index(html, "<h2>Regions</h2>") > strings.Index(html, "Classes by host time") {
		t.Error("audit.html does not lead with the regions")
	}
	// One capture: its regions pinned; no region: no plot, and why.
	oneOut := fixture(t, "train-pageable")
	one, err := BuildAudit(oneOut)
	if err != nil || one.Plot.PNG == nil || len(one.Plot.Series[SeriesAfter]) != 0 {
		t.Errorf("one capture: %+v %v", one.Plot.Series, err)
	}
	emptyOut := &audit.Output{Before: &audit.Audit{Capture: "x"}}
	empty, err := BuildAudit(emptyOut)
	if err != nil || empty.Plot.PNG != nil || empty.Plot.Skipped == "" {
		t.Errorf("empty audit plot = %+v, %v", empty.Plot, err)
	}
	// The names known before drawing are the files' names, plot or none.
	for name, c := range map[string]struct {
		out *audit.Output
		rep *AuditReport
	}{"one capture": {oneOut, one}, "no region": {emptyOut, empty}} {
		files, err := c.rep.Files()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := sortedNames(AuditNames(c.out)), names(files); !slices.Equal(got, want) {
			t.Errorf("%s: AuditNames = %v, Files holds %v", name, got, want)
		}
	}
}

// Every format of the pair's audit: the text and Markdown show the check's
// numbers, and the JSON, in the versioned envelope, reads back to the same.
func TestWriteAudit(t *testing.T) {
	out := fixture(t, "train")
	before, after := out.Before, out.After
	var text, md, js bytes.Buffer
	opts := WriteOptions{Version: "test", Text: TextOptions{Width: 1000}}
	if err := WriteAudit(&text, FormatText, out, opts); err != nil {
		t.Fatal(err)
	}
	step := out.Check.Regions[2]
	for _, want := range []string{"Check of " + before.Capture, "Audit of " + before.Capture, "Audit of " + after.Capture, ": HELD",
		auditMs(step.AfterMedianMs), "step: no faster", "Findings", "secretly-synchronous", "cudaHostAlloc"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q", want)
		}
	}
	if err := WriteAudit(&md, FormatMarkdown, out, opts); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| class |", "| step | median | 3.402 | 3.436 |", "| epoch | median | 1472 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if err := WriteAudit(&js, FormatJSON, out, opts); err != nil {
		t.Fatal(err)
	}
	var env struct {
		SchemaVersion int      `json:"schemaVersion"`
		Kind          string   `json:"kind"`
		Tool          Tool     `json:"tool"`
		Inputs        []string `json:"inputs"`
	}
	if err := json.Unmarshal(js.Bytes(), &env); err != nil {
		t.Fatal(err)
	}
	if env.SchemaVersion != SchemaVersion || env.Kind != KindAudit || env.Tool.Version != "test" ||
		strings.Join(env.Inputs, ",") != before.Capture+","+after.Capture {
		t.Errorf("envelope = %+v", env)
	}
	if strings.Contains(js.String(), `\u003c`) || !strings.Contains(js.String(), `"sizeBucket": "<4KiB"`) {
		t.Error("JSON is HTML-escaped")
	}
	// Read back and written again, the JSON is the same.
	p := filepath.Join(t.TempDir(), "audit.json")
	if err := os.WriteFile(p, js.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	back, ok, err := auditjson.ReadOutput(p)
	if !ok || err != nil {
		t.Fatalf("ReadOutput of WriteAudit's JSON: %v %v", ok, err)
	}
	var again bytes.Buffer
	if err := WriteAudit(&again, FormatJSON, back, opts); err != nil {
		t.Fatal(err)
	}
	if again.String() != js.String() {
		t.Errorf("the JSON read back writes otherwise:\n%s", golden.FirstDiff(js.String(), again.String()))
	}
	if err := WriteAudit(&js, "yaml", out, opts); err == nil {
		t.Error("WriteAudit accepted an unknown format")
	}
}

// TestAuditEnvelopeVersion: the version auditjson.ReadOutput reads is the one
// the envelope is written in.
func TestAuditEnvelopeVersion(t *testing.T) {
	if audit.EnvelopeVersion != SchemaVersion || audit.EnvelopeKind != KindAudit {
		t.Errorf("audit reads version %d kind %q; report writes %d %q", audit.EnvelopeVersion, audit.EnvelopeKind, SchemaVersion, KindAudit)
	}
}

// screen is the height of a terminal the answer must show on without
// scrolling.
const screen = 24

// TestAuditTextWidth renders the audits at 80 and 100 columns against
// goldens, and checks that every line fits (but a path, which is never
// broken), that the answer — the verdict and every row of the region
// table — is on the first screen at 80 columns, before any class, that
// each class key stands on a line of its own where the table would not
// fit, and that -v shows every evidence copy that is otherwise counted.
func TestAuditTextWidth(t *testing.T) {
	train := fixture(t, "train")
	alone := fixture(t, "train-pageable")
	for _, c := range []struct {
		name    string
		out     *audit.Output
		width   int
		verbose bool
		golden  bool // the face of the audit's text
	}{
		{"train-audit.80", train, 80, false, true}, {"train-audit.100", train, 100, false, false},
		{"pipeline-audit.80", fixture(t, "pipeline"), 80, false, true}, {"jax-audit.80", fixture(t, "jax"), 80, false, true},
		{"train-pageable-audit.80", alone, 80, false, true}, {"train-pageable-audit.verbose.100", alone, 100, true, true},
		{"train-pageable-fail-above-5.80", fixture(t, "train-pageable.fail-above-5"), 80, false, false},
		{"graph-whole-audit.80", fixture(t, "graph-whole"), 80, false, true}, {"managed-audit.80", fixture(t, "managed"), 80, false, true},
		{"graph-node-audit.80", fixture(t, "graph-node"), 80, false, false},
		{"torch-backtrace-audit.80", fixture(t, "torch-backtrace"), 80, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteAudit(&b, FormatText, c.out, WriteOptions{Text: TextOptions{Width: c.width, Verbose: c.verbose}}); err != nil {
				t.Fatal(err)
			}
			text := b.String()
			lines := strings.Split(text, "\n")
			for i, l := range lines {
				if n := utf8.RuneCountInString(l); n > c.width && !strings.Contains(l, "testdata/captures/") {
					t.Errorf("line %d is %d wide (> %d): %q", i+1, n, c.width, l)
				}
			}
			if c.width == 80 {
				first := strings.Join(lines[:min(screen, len(lines))], "\n")
				verdict := strings.ToUpper(buildAuditView(c.out, false).Verdict)
				if !strings.Contains(first, verdict) || strings.Contains(first, "Classes by host time") {
					t.Errorf("the first %d lines lack the verdict %q or show classes:\n%s", screen, verdict, first)
				}
				for _, r := range c.out.Before.Regions {
					if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(r.Name) + `\s`).MatchString(first) {
						t.Errorf("region %s not in the first %d lines:\n%s", r.Name, screen, first)
					}
				}
			}
			for _, au := range []*audit.Audit{c.out.Before, c.out.After} {
				if au == nil {
					continue
				}
				for _, cl := range au.Classes {
					if !strings.Contains(text, cl.Label()+"\n") && !strings.Contains(text, cl.Label()+"  ") {
						t.Errorf("class %q not shown", cl.Label())
					}
				}
				f := au.Finding(audit.FindingSecretlySync)
				if len(f.Evidence) <= auditShownEvidence {
					continue
				}
				shown := strings.Count(text, "correlation id ")
				hidden := strings.Contains(text, fmt.Sprintf("... %d more not shown: -v shows them", len(f.Evidence)-auditShownEvidence))
				if c.verbose != !hidden || (c.verbose && shown < len(f.Evidence)) {
					t.Errorf("verbose %v: %d evidence lines shown, the rest named: %v", c.verbose, shown, hidden)
				}
			}
			if c.golden {
				golden.Assert(t, filepath.Join("testdata", c.name+".golden.txt"), b.Bytes())
			}
		})
	}
}

// The check says what it found in so many words: the pipeline pair's
// overlap before, predicted and after; the DataLoader pair's steps no
// faster though their copy calls shrank, and its epoch faster than
// predicted with the work outside CUDA calls that explains it; the JAX
// pair unavailable, with what would show the staging; the gate; what each
// capture cannot show: the graphs traced whole or per node, the
// unified-memory migrations and what they cost.
func TestAuditTextSays(t *testing.T) {
	for name, want := range map[string][]string{
		"pipeline": {"What to change (the CUDA runtime)", "cudaMallocHost or cudaHostAlloc", "pass       0.00     0.30    0.24", "warmup: faster, 274.9 ms before, 27.08 ms after (-90.1%, its one instance); held", "pass: faster"},
		"train": {"step: no faster, 3.402 ms before, 3.420 ms after (median of 67 instances), though its copy calls held the host 0.762 ms per instance before and 0.054 ms after; held: every cost predicted it no faster (costs 3.435-3.439 ms: the pin thread's copy takes the copy calls' saved host time back on their thread), and it lies in the bound 3.162-3.678 ms of the predicted 3.436 ms",
			"as the capture after shows: its pt_data_pin thread made 124 CUDA calls",
			"epoch: unavailable: 1472 ms before, 883.2 ms after (its one instance), but loading device code (the first launches' modules and libraries) held the host 437.9 ms inside it before and 172.1 ms after",
			"so the time after cannot check the prediction 1475 ms (bound 1399-1550 ms)",
			"held: 1 of 2 judged regions lie in their predicted bound (1 decided by start-up); not faster after: step",
			"pinning cost the capture after", "cudaHostAlloc calls"},
		"jax": {"UNAVAILABLE", "cannot show what the fix changed", "--sample=process-tree", "What to change (JAX (XLA))",
			"no copy the capture holds is from pageable memory; what pinning would save may lie outside what the capture shows (see framework-staging)",
			"warning framework-staging: before and after: JAX (XLA) (kernel input_reduce_fusion, 53 launches) copies to the device from pinned memory only"},
		"cupy-pageable":   {"What to change (CuPy)", "cupyx.empty_pinned", "--python-backtrace=cuda"},
		"driver-pageable": {"What to change (the CUDA driver API)", "cuMemHostAlloc", "cuMemHostRegister"},
		"train-pageable.fail-above-5": {": FAIL", "--fail-above 5%: fails", "step 22.1%",
			"(21.6% of its region); pinning is predicted to make step no faster: 3.402 ms now, 3.436 ms pinned (3.435-3.439 ms at every cost): the pin thread's copy takes the copy calls' saved host time back on their thread"},
		"graph-whole": {": FAIL", "the capture may lack copies and kernels the run made (see cuda-graphs-whole)",
			"warning cuda-graphs-whole: 30 CUDA graph launches of 1 graph (5.3 ms on the GPU)", "profile with nsys profile --cuda-graph-trace=node"},
		"graph-node": {"info cuda-graph-nodes: 60 copies (251.7 MB) ran as nodes of 30 CUDA graph launches",
			"cudaGraphLaunch HtoD pinned 1MiB-16MiB pid 22/tid 22 stream 13 [launch]", "HtoD       pinned       graph  30", "CUDA graphs traced by node"},
		"managed": {": PASS", "info unified-memory: 16830 unified-memory migrations moved 1610.6 MB in 72.0 ms on the GPU with no call of the program",
			"8195 on page faults (85.3 MB in 21.7 ms, 3.9 GB/s)", "on page faults data moved 12x slower than prefetched",
			"unified-memory prefetch HtoD 1MiB-16MiB pid 22", "HtoD       managed      migration  14334", "cudaMemPrefetchAsync"},
	} {
		var b bytes.Buffer
		if err := WriteAudit(&b, FormatText, fixture(t, name), WriteOptions{Text: TextOptions{Width: 1000}}); err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: the text lacks %q", name, w)
			}
		}
	}
	// Where pinning saves a region's time, no class says otherwise.
	var b bytes.Buffer
	if err := WriteAudit(&b, FormatText, fixture(t, "pipeline"), WriteOptions{Text: TextOptions{Width: 1000}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "predicted to make") {
		t.Errorf("pipeline: a class says pinning saves nothing, though its pass is predicted 91%% faster")
	}
}

// Each framework's fix, in its own words, for its pageable copies; the
// source line, from call stacks the capture holds or how to get them.
func TestAuditAdvice(t *testing.T) {
	class := func(dir vocab.CopyKind) *audit.Class {
		return &audit.Class{ClassKey: audit.ClassKey{API: "cudaMemcpyAsync", APIKind: audit.Async, Direction: dir, HostMemory: audit.Pageable,
			SizeBucket: "1MiB-16MiB"}, Count: 3, HostNs: 3e6}
	}
	for fw, want := range map[framework.Name][]string{
		framework.PyTorch: {"DataLoader(..., pin_memory=True)", "tensor.pin_memory()", "non_blocking=True", "pin_memory=True), with out.copy_("},
		framework.CuPy:    {"cupyx.empty_pinned", "ndarray.get(out=pinned"},
		framework.JAX:     {`memory_kind="pinned_host"`, "device_put"},
		framework.Runtime: {"cudaMallocHost", "cudaHostAlloc", "cudaHostRegister"},
		framework.Driver:  {"cuMemHostAlloc", "cuMemHostRegister"},
		framework.Unknown: {"cudaMallocHost"},
	} {
		for _, backtraces := range []bool{false, true} {
			au := &audit.Audit{Capture: "x", Framework: framework.Detection{Framework: fw, Python: fw != framework.Runtime, Backtraces: backtraces},
				TopOffenders: []*audit.Class{class(vocab.CopyHtoD), class(vocab.CopyDtoH)}}
			a := adviceOf(au)
			var all []string
			for _, c := range a.Classes {
				all = append(all, c.Fix...)
			}
			text := strings.Join(all, "\n")
			for _, w := range want {
				if !strings.Contains(text, w) {
					t.Errorf("%s: the advice lacks %q:\n%s", fw, w, text)
				}
			}
			switch {
			case backtraces && !strings.Contains(a.Line, "holds the call stacks"):
				t.Errorf("%s with call stacks: %q", fw, a.Line)
			case !backtraces && !strings.Contains(a.Line, "--cudabacktrace=all"):
				t.Errorf("%s without call stacks: %q", fw, a.Line)
			case !backtraces && au.Framework.Python != strings.Contains(a.Line, "--python-backtrace=cuda"):
				t.Errorf("%s: %q", fw, a.Line)
			}
		}
	}
	if a := adviceOf(&audit.Audit{Framework: framework.Detection{Framework: framework.Runtime}}); a.None == "" || len(a.Classes) != 0 {
		t.Errorf("nothing to pin: %+v", a)
	}
}

// A capture that may lack copies the run made is no pass where none of its
// copies breaks the rule: the graph capture with its eager copies' finding
// taken away answers unavailable in every format, and no format says the
// run has nothing to pin.
func TestAuditHiddenIsUnavailable(t *testing.T) {
	out := fixture(t, "graph-whole")
	for i := range out.Before.Findings {
		out.Before.Findings[i].Count, out.Before.Findings[i].Evidence = 0, nil
	}
	out.Before.TopOffenders = nil
	if out.Answer() != audit.AnswerUnavailable || out.Passed() {
		t.Fatalf("answer %s, passed %v", out.Answer(), out.Passed())
	}
	for _, f := range []string{FormatText, FormatMarkdown} {
		var b bytes.Buffer
		if err := WriteAudit(&b, f, out, WriteOptions{Text: TextOptions{Width: 1000}}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"unavailable", "no copy breaks the lesson's rule, as far as the capture shows: the capture may lack copies and kernels the run made (see cuda-graphs-whole)",
			"among the copies the capture holds", "cuda-graphs-whole"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s lacks %q", f, want)
			}
		}
		if strings.Contains(b.String(), "nothing to pin") {
			t.Errorf("%s says there is nothing to pin", f)
		}
	}
	rep, err := BuildAudit(out)
	if err != nil {
		t.Fatal(err)
	}
	html, err := rep.HTML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), `<span class="v v-unavailable">unavailable</span>`) || !strings.Contains(string(html), "warning cuda-graphs-whole") {
		t.Error("the HTML lacks the unavailable badge or the warning")
	}
}

// A verdict badge is drawn from the cell's verdict, not its text: a region
// named like a verdict is plain text, and a region not judged has no badge.
func TestAuditBadgesAreTyped(t *testing.T) {
	out := fixture(t, "train")
	// The region takes the name of a verdict neither the check nor any
	// region has, so that no badge can show that word.
	shown := map[vocab.Verdict]bool{out.Check.Verdict: true}
	for _, r := range out.Check.Regions {
		shown[r.Verdict] = true
	}
	name, as := out.Check.Regions[0].Name, ""
	for _, v := range []vocab.Verdict{audit.Held, audit.Died, audit.Unavailable} {
		if !shown[v] {
			as = string(v)
		}
	}
	if as == "" {
		t.Fatal("the fixture shows every verdict: no name is left to test with")
	}
	for _, rs := range [][]audit.Region{out.Before.Regions, out.After.Regions} {
		for i := range rs {
			if rs[i].Name == name {
				rs[i].Name = as
			}
		}
	}
	out.Check.Regions[0].Name, out.Check.Regions[0].AfterName = as, as
	rep, err := BuildAudit(out)
	if err != nil {
		t.Fatal(err)
	}
	files, err := rep.Files()
	if err != nil {
		t.Fatal(err)
	}
	html := string(files[AuditHTMLFile])
	if strings.Contains(html, `<span class="v v-`+as+`">`+as+`</span>`) {
		t.Errorf("a region named %s is drawn as a verdict", as)
	}
	badges, judged := strings.Count(html, `<span class="v v-`), 1 // the title's
	for _, r := range out.Check.Regions {
		if r.Judged {
			judged++
		}
	}
	if badges != judged {
		t.Errorf("%d badges, want the title's and one per judged region (%d)", badges, judged)
	}
}

// NVIDIA's rule's comparison in words: agreement, disagreement with both
// counts, and why it was not compared.
func TestRuleSummary(t *testing.T) {
	for _, c := range []struct {
		rc   audit.RuleComparison
		want string
	}{
		{audit.RuleComparison{Rule: "r", Source: audit.RuleSource{Kind: audit.RuleSourceRead, Text: "s"}, Available: true, Agree: true, Both: 1, RuleCount: 1, AuditCount: 1},
			"NVIDIA's r rule (s) agrees: it lists the same 1 pageable async copy"},
		{audit.RuleComparison{Rule: "r", Source: audit.RuleSource{Kind: audit.RuleSourceRead, Text: "s"}, Available: true, Both: 1, RuleCount: 2, AuditCount: 3},
			"NVIDIA's r rule (s) disagrees: it lists 2 copies, the audit 3 pageable async copies, 1 in both"},
		{audit.RuleComparison{Rule: "r", Source: audit.RuleSource{Kind: audit.RuleSourceAnalyze, Path: "a.sqlite"}, Available: true, Agree: true, Both: 1, RuleCount: 1, AuditCount: 1},
			"NVIDIA's r rule (nsys analyze -r cuda_memcpy_async:rows=-1 on a.sqlite, run beside the audit's stream) agrees: it lists the same 1 pageable async copy"},
		{audit.RuleComparison{Rule: "r", Source: audit.RuleSource{Kind: audit.RuleSourceCSV, Path: "a_cuda_memcpy_async.csv", Capped: true}, Available: true, Both: 1, RuleCount: 2, AuditCount: 3},
			"NVIDIA's r rule (the rule's CSV beside the capture, a_cuda_memcpy_async.csv (exactly 50 rows: nsys analyze's default limit; make it with -r cuda_memcpy_async:rows=-1 to list every copy)) disagrees: it lists 2 copies, the audit 3 pageable async copies, 1 in both"},
		{audit.RuleComparison{Rule: "r", Source: audit.RuleSource{Kind: audit.RuleSourceScan}, Available: true, Agree: true, Both: 2, RuleCount: 2, AuditCount: 2},
			"NVIDIA's r rule (the rule's definition applied to this audit's records; nsys analyze did not run: --nvidia-rule nsys runs it) agrees: it lists the same 2 pageable async copies"},
		{audit.RuleComparison{Rule: "r", Source: audit.RuleSource{Kind: audit.RuleSourceScan, Text: "as written"}, Available: true, Agree: true, Both: 1, RuleCount: 1, AuditCount: 1},
			"NVIDIA's r rule (as written) agrees: it lists the same 1 pageable async copy"},
		{audit.RuleComparison{Rule: "r", Note: "nsys is not installed"}, "NVIDIA's r rule: not compared: nsys is not installed"},
		// Read back from a JSON whose kind names a file it does not name.
		{audit.RuleComparison{Rule: "r", Source: audit.RuleSource{Kind: audit.RuleSourceCSV}, Available: true, Agree: true, Both: 1, RuleCount: 1, AuditCount: 1},
			"NVIDIA's r rule (the rule's CSV beside the capture) agrees: it lists the same 1 pageable async copy"},
		{audit.RuleComparison{Rule: "r", Source: audit.RuleSource{Kind: audit.RuleSourceAnalyze}, Available: true, Agree: true, Both: 1, RuleCount: 1, AuditCount: 1},
			"NVIDIA's r rule (nsys analyze -r cuda_memcpy_async:rows=-1, run beside the audit's stream) agrees: it lists the same 1 pageable async copy"},
	} {
		if got := ruleSummary(&c.rc); got != c.want {
			t.Errorf("ruleSummary(%+v) = %q, want %q", c.rc, got, c.want)
		}
	}
}

// A value that does not exist is absent from the JSON, not zero: a
// region's period with fewer than two instances (and the period's fit),
// its median's interval with fewer than replay.CIInstances, the verdict of
// a region not judged; one that exists is there. Read back, each is the
// audit's own again.
func TestAuditJSONLeavesOutWhatDoesNotExist(t *testing.T) {
	type region struct {
		Name      string          `json:"name"`
		Instances int             `json:"instances"`
		Judged    *bool           `json:"judged"`
		Period    json.RawMessage `json:"period"`
		MedianCI  json.RawMessage `json:"medianCI"`
		Verdict   *string         `json:"verdict"`
		Fit       struct {
			Period *float64 `json:"period"`
		} `json:"fit"`
	}
	var one, few, notJudged int
	for _, name := range []string{"train", "pipeline", "jax", "graph-whole", "managed", "train-pageable"} {
		out := fixture(t, name)
		var js bytes.Buffer
		if err := WriteAudit(&js, FormatJSON, out, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		var env struct {
			Results []struct {
				Regions []region `json:"regions"`
			} `json:"results"`
			Check *struct {
				Regions []region `json:"regions"`
			} `json:"check"`
		}
		if err := json.Unmarshal(js.Bytes(), &env); err != nil {
			t.Fatal(err)
		}
		var all []region
		for _, r := range env.Results {
			all = append(all, r.Regions...)
		}
		if env.Check != nil {
			all = append(all, env.Check.Regions...)
		}
		for _, r := range all {
			if r.Instances < 2 {
				one++
				if r.Period != nil || r.Fit.Period != nil {
					t.Errorf("%s: region %s of %d instance(s) has a period %s (fit %v)", name, r.Name, r.Instances, r.Period, r.Fit.Period)
				}
			}
			if r.Instances < replay.CIInstances {
				few++
				if r.MedianCI != nil {
					t.Errorf("%s: region %s of %d instance(s) has a median's interval %s", name, r.Name, r.Instances, r.MedianCI)
				}
			}
			if r.Judged != nil && !*r.Judged {
				notJudged++
				if r.Verdict != nil {
					t.Errorf("%s: region %s not judged has the verdict %q", name, r.Name, *r.Verdict)
				}
			}
			if r.Judged != nil && *r.Judged && r.Verdict == nil {
				t.Errorf("%s: judged region %s has no verdict", name, r.Name)
			}
		}
		for _, au := range []*audit.Audit{out.Before, out.After} {
			if au == nil {
				continue
			}
			for _, r := range au.Regions {
				if r.Instances >= 2 && r.Period.Ms > 0 && !strings.Contains(js.String(), `"period": {`) {
					t.Errorf("%s: region %s has a period the JSON lacks", name, r.Name)
				}
			}
		}
		p := filepath.Join(t.TempDir(), "audit.json")
		if err := os.WriteFile(p, js.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		back, ok, err := auditjson.ReadOutput(p)
		if !ok || err != nil {
			t.Fatalf("%s: read back: %v %v", name, ok, err)
		}
		if !reflect.DeepEqual(back.Before.Regions, out.Before.Regions) || (out.Check != nil && !reflect.DeepEqual(back.Check.Regions, out.Check.Regions)) {
			t.Errorf("%s: the regions read back are not the audit's", name)
		}
	}
	if one == 0 || few == 0 || notJudged == 0 {
		t.Errorf("the fixtures hold %d regions of one instance, %d of too few for an interval, %d not judged: the test tests nothing", one, few, notJudged)
	}
}

// What a capture cannot show is read back from an audit's JSON typed (made
// again from its coverage), not as the words written, and its words are
// the ones written.
func TestAuditDiagnosticsReadBackTyped(t *testing.T) {
	var typed int
	for _, name := range []string{"graph-whole", "graph-node", "managed", "jax", "pipeline"} {
		data, err := os.ReadFile(filepath.Join("testdata", "audits", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var env struct {
			Results []struct {
				Diagnostics []jsonDiagnostic `json:"diagnostics"`
			} `json:"results"`
		}
		if err := json.Unmarshal(data, &env); err != nil {
			t.Fatal(err)
		}
		out := fixture(t, name)
		for i, au := range []*audit.Audit{out.Before, out.After} {
			if au == nil {
				continue
			}
			written := env.Results[i].Diagnostics
			if len(au.Diagnostics) != len(written) {
				t.Fatalf("%s: %d diagnostics read back, %d written", name, len(au.Diagnostics), len(written))
			}
			for k, d := range au.Diagnostics {
				if coverage.IsCode(d.Code()) {
					if _, note := d.Detail.(diag.Note); note {
						t.Errorf("%s: %s read back as words", name, d.Code())
					}
					typed++
				}
				if got := diagnosticsJSON([]diag.Diagnostic{d})[0]; got != written[k] {
					t.Errorf("%s: diagnostic %d read back as %+v, written %+v", name, k, got, written[k])
				}
			}
		}
	}
	if typed == 0 {
		t.Error("no diagnostic of what a capture cannot show in the fixtures: the test tests nothing")
	}
}

// The copy calls' host time where the what-if costed none of their
// copies: "not predicted", no number standing for a prediction.
func TestAuditUnpredictedWords(t *testing.T) {
	p := &audit.Prediction{Count: 2, Bytes: 2e6, BeforeNs: 5e6, AfterNs: 5e6, AfterLowNs: 5e6, AfterHighNs: 5e6,
		Groups: []audit.GroupPrediction{{Direction: vocab.CopyHtoD, APIKind: audit.Async, SizeBucket: "1MiB-16MiB", Count: 2, Bytes: 2e6,
			BeforeNs: 5e6, AfterNs: 5e6, Uncosted: 2, Source: audit.SourceNone}}}
	c := &audit.Check{HtoDBeforeNs: 5e6, PredictedAfterNs: 5e6, PredictedAfterLowNs: 5e6, PredictedAfterHighNs: 5e6}
	for _, s := range append(predictionWords(&audit.Audit{Prediction: p}, nil), htodPredictedWords(c, p)) {
		if !strings.Contains(s, "not predicted") || strings.Contains(s, "->") || strings.Contains(s, "predicted 5.0 ms") {
			t.Errorf("unpredicted: %q", s)
		}
	}
	p.Groups[0].Uncosted = 1
	if w := htodPredictedWords(c, p); w != "predicted 5.0 ms, bound 5.0 ms to 5.0 ms" {
		t.Errorf("one copy costed: %q", w)
	}
}

// Where the link's rate came from is typed in the audit and worded here:
// the costs that name the link (audit.FromLink) say it in the text and the
// JSON, a run folder's run.json by its path as MapPaths names it; a cost
// read back from JSON keeps its words.
func TestAuditLinkWords(t *testing.T) {
	for _, c := range []struct {
		link audit.LinkOrigin
		want string
	}{
		{audit.LinkOrigin{Kind: audit.LinkAssumed, Gen: 5, Width: 16, GBps: 63.015}, "assumed PCIe 5.0 x16, 63.0 GB/s; pass --link-gbps or --rates to give the real link"},
		{audit.LinkOrigin{Kind: audit.LinkFlag, GBps: 31.5}, "--link-gbps"},
		{audit.LinkOrigin{Kind: audit.LinkRun, Gen: 4, Width: 16, GPU: "NVIDIA T4", File: "/home/me/run/run.json", GBps: 31.5}, "PCIe 4.0 x16 of NVIDIA T4, from RUN/run.json"},
	} {
		link := c.link
		au := &audit.Audit{Capture: "x", Link: &link,
			Replay:     &audit.Replay{Costs: []replay.CostUse{{GPUSource: audit.SourceLink, GPUFrom: audit.FromLink}}},
			Prediction: &audit.Prediction{Groups: []audit.GroupPrediction{{Source: audit.SourceLink, From: audit.FromLink}}}}
		out := &audit.Output{Before: au}
		out.MapPaths(func(p string) string { return strings.Replace(p, "/home/me/run", "RUN", 1) })
		j := auditJSON(au)
		if j.Replay.Costs[0].GPUFrom != c.want || j.Prediction.Groups[0].From != c.want || au.Replay.Costs[0].GPUFrom != audit.FromLink {
			t.Errorf("%+v: JSON %q and %q, want %q", c.link, j.Replay.Costs[0].GPUFrom, j.Prediction.Groups[0].From, c.want)
		}
		if w := groupSourceWords(au, au.Prediction.Groups[0]); w != "the link: "+c.want {
			t.Errorf("%+v: %q", c.link, w)
		}
	}
	read := &audit.Audit{Replay: &audit.Replay{Costs: []replay.CostUse{{GPUSource: audit.SourceLink, GPUFrom: "as written"}}}}
	if w := costSourcesWords(read, read.Replay.Costs); !strings.HasSuffix(w, "(as written)") {
		t.Errorf("read back: %q", w)
	}
}

// TestNoGainWhy: the reason a region is predicted no faster follows the
// way the what-if pinned, the same in the check's verdict and in what to
// change: a copy into pinned memory (by the copying thread or a pin
// thread) takes the saved host time back; buffers pinned in place leave
// the region nothing to wait less for.
func TestNoGainWhy(t *testing.T) {
	for by, want := range map[replay.PinBy]string{
		replay.PinByThread: "the pin thread's copy takes the copy calls' saved host time back on their thread",
		replay.PinByCopy:   "the copy into pinned memory takes the copy calls' saved host time back on their thread",
		replay.PinInPlace:  "its time does not wait on these copies",
	} {
		au := &audit.Audit{Replay: &audit.Replay{PinBy: by}}
		if got := noGainWhy(au); got != want {
			t.Errorf("pinned by %v: %q, want %q", by, got, want)
		}
		r := audit.RegionCheck{Why: audit.WhyNoGain}
		if got := regionCheckWords(&r, noGainWhy(au)); !strings.Contains(got, "(costs ") || !strings.Contains(got, want) {
			t.Errorf("pinned by %v: the check says %q", by, got)
		}
	}
	if got := noGainWhy(&audit.Audit{}); got != "its time does not wait on these copies" {
		t.Errorf("no replay: %q", got)
	}
}

// The region table says which NVTX ranges are no region because an
// instance never closed: once for one capture, or for a check where both
// captures lack the same; before and after apart where they differ.
func TestRegionsNoteOpenRanges(t *testing.T) {
	open := func(names ...string) *audit.Audit {
		au := &audit.Audit{Replay: &audit.Replay{}}
		for _, n := range names {
			au.Replay.Assumptions = append(au.Replay.Assumptions, timeline.Assumption{Kind: timeline.AssumeOpenRange, API: n, PID: 22, Count: 1})
		}
		return au
	}
	for _, c := range []struct {
		name          string
		left          int
		before, after *audit.Audit
		want          string
	}{
		{"none", 0, open(), nil, ""},
		{"one capture", 0, open("warmup", "warmup"), nil, "not a region: warmup, never closed before the capture ended"},
		{"both alike, regions left out", 2, open("warmup"), open("warmup"), "2 more regions not shown: -v lists every one, --format json holds them; not a region: warmup, never closed before the capture ended"},
		{"after only", 0, open(), open("step", "epoch"), "not a region after: step and epoch, never closed before the capture ended"},
		{"both, apart", 0, open("warmup"), open("step"), "not a region before: warmup, never closed before the capture ended; not a region after: step, never closed before the capture ended"},
	} {
		if got := regionsNote(c.left, c.before, c.after); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// A check's answer says which regions the fix made faster: those held,
// died or too wide to decide, each by its measured time after, never one
// start-up decides or one not judged.
func TestFasterWords(t *testing.T) {
	region := func(name string, judged bool, v vocab.Verdict, why audit.Why, faster bool) audit.RegionCheck {
		return audit.RegionCheck{Region: audit.Region{Region: replay.Region{Name: name}}, Judged: judged, Verdict: v, Why: why, Faster: faster, AfterInstances: 1}
	}
	for _, c := range []struct {
		name    string
		regions []audit.RegionCheck
		want    string
	}{
		{"none decided", []audit.RegionCheck{region("epoch", true, audit.Unavailable, audit.WhyStartUp, true)}, ""},
		{"held, not faster", []audit.RegionCheck{region("(capture)", false, "", "", true), region("epoch", true, audit.Unavailable, audit.WhyStartUp, true),
			region("step", true, audit.Held, "", false)}, "; not faster after: step"},
		{"all faster", []audit.RegionCheck{region("warmup", true, audit.Unavailable, audit.WhyTooWide, true), region("step", true, audit.Held, "", true)},
			"; faster after: warmup and step"},
		{"mixed", []audit.RegionCheck{region("a", true, audit.Died, "", true), region("b", true, audit.Held, "", false)}, "; faster after: a; not faster: b"},
		{"matched", []audit.RegionCheck{{Region: audit.Region{Region: replay.Region{Name: "pass-pageable"}}, AfterName: "pass-pinned", Judged: true, Verdict: audit.Held, Faster: true, AfterInstances: 5}},
			"; faster after: pass-pageable -> pass-pinned"},
	} {
		if got := fasterWords(&audit.Check{Regions: c.regions}); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestGainWords holds the verdict line's gains to the three costs of the
// bound: a region is named faster at the highest cost that makes it so,
// and "no region faster" only where no cost does, as the advice's "no
// faster" (at every cost) says.
func TestGainWords(t *testing.T) {
	region := func(name string, now, mid, low, high float64) audit.Region {
		var r audit.Region
		r.Name, r.Instances, r.CopyCallMs, r.MedianMs = name, 3, 1, now
		r.PredictedMedianMs, r.PredictedMedianLowMs, r.PredictedMedianHighMs = mid, low, high
		return r
	}
	for _, c := range []struct {
		name    string
		regions []audit.Region
		want    string
	}{
		{"faster at every cost", []audit.Region{region("step", 10, 4, 3, 5)}, "; pinning them is predicted to make step 60.0% faster"},
		{"middle only", []audit.Region{region("step", 10, 8, 7, 10)}, "; pinning them is predicted to make step 20.0% faster at the middle cost (none at the high)"},
		{"low only", []audit.Region{region("step", 10, 9.95, 8, 10.5)}, "; pinning them is predicted to make step 20.0% faster only at the low cost (none at the middle)"},
		{"no cost", []audit.Region{region("step", 10, 10.1, 9.95, 11)}, "; pinning them is predicted to make no region faster (step 10.00 ms now, 10.10 ms pinned)"},
		{"low only beside none", []audit.Region{region("a", 10, 10, 9, 11), region("b", 10, 10, 10, 10)},
			"; pinning them is predicted to make a 10.0% faster only at the low cost (none at the middle)"},
	} {
		if got := gainWords(&audit.Audit{Regions: c.regions}, "them"); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// A capture's path keeps its letters and shows a newline in it as \x0a
// wherever the audit names it: Markdown's sentences once began it with a
// capital ("Runs/..."), and text's wrapping once showed its newline as a
// space.
func TestAuditKeepsCapturePath(t *testing.T) {
	out := fixture(t, "train")
	out.Before.Capture = "runs/pin\nned.sqlite"
	out.Check.Before = out.Before.Capture
	var md strings.Builder
	if err := AuditMarkdown(&md, out); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := AuditText(&text, out, TextOptions{Width: 80}); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]string{"markdown": md.String(), "text": text.String()} {
		if strings.Contains(got, "Runs/") || strings.Contains(got, "pin ned") || strings.Contains(got, "pin\nned") {
			t.Errorf("%s changes the capture's path:\n%s", name, got)
		}
	}
	if !strings.Contains(text.String(), `runs/pin\x0aned.sqlite (SQLite export)`) {
		t.Errorf("text lacks the path escaped:\n%s", text.String())
	}
}
