package check

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/internal/golden"
	"github.com/nsyscheck/nsyscheck/report"
)

// AuditFixtures are the audits of shipped captures the report package
// renders in its tests, as `audit --format json` writes them (NVIDIA's
// rule from the CSV beside each capture): report cannot run the audit's
// path itself, which imports it. They are golden files here, so that they
// are always this pipeline's output; -update rewrites them.
var auditFixtures = []struct {
	name, before, after string
	failAbove           float64 // a share, 0 for no gate
}{
	{name: "train", before: "train-pageable", after: "train-pinned"},
	{name: "train-pageable", before: "train-pageable"},
	{name: "train-pageable.fail-above-5", before: "train-pageable", failAbove: 0.05},
	{name: "pipeline", before: "pipeline-pageable", after: "pipeline-pinned"},
	{name: "jax", before: "jax-cuda", after: "jax-cuda-pinned"},
	{name: "cupy-pageable", before: "cupy-pageable"},
	{name: "driver-pageable", before: "driver-pageable"},
	{name: "graph-whole", before: "graph-whole"},
	{name: "graph-node", before: "graph-node"},
	{name: "managed", before: "managed"},
	{name: "torch-backtrace", before: "torch-prefetch-backtrace"},
}

func TestAuditFixtures(t *testing.T) {
	dir := filepath.Join("..", "testdata", "captures")
	for _, f := range auditFixtures {
		opts := AuditOptions{Nsys: filepath.Join(t.TempDir(), "no-nsys")}
		if f.failAbove > 0 {
			opts.FailAbove = &f.failAbove
		}
		after := ""
		if f.after != "" {
			after = filepath.Join(dir, f.after)
		}
		out, err := Audit(context.Background(), filepath.Join(dir, f.before), after, opts)
		if err != nil {
			t.Fatal(err)
		}
		// Named as from the repository's root, as a user there would give them.
		out.MapPaths(func(p string) string { return strings.TrimPrefix(filepath.ToSlash(p), "../") })
		var b bytes.Buffer
		if err := report.WriteJSON(&b, report.AuditEnvelope(out, "test")); err != nil {
			t.Fatal(err)
		}
		golden.Assert(t, filepath.Join("..", "report", "testdata", "audits", f.name+".json"), b.Bytes())
	}
}

// verdictPairs are the shipped pairs before and after a fix, with the fix,
// and the regions matched where one capture holds both halves.
var verdictPairs = []struct {
	before, after, fix string
	match              map[string]string
}{
	{"pipeline-pageable", "pipeline-pinned", "cudaMallocHost", nil},
	{"mixed-buffers", "mixed-buffers", "its own cudaMallocHost half", map[string]string{"pass-pageable": "pass-pinned"}},
	{"driver-pageable", "driver-pinned", "cuMemHostAlloc", nil},
	{"cupy-pageable", "cupy-pinned", "cupyx.empty_pinned", nil},
	{"torch-prefetch-pageable", "torch-prefetch-pinned", "tensor.pin_memory() once", nil},
	{"jax-cuda", "jax-cuda-pinned", `device_put from memory_kind="pinned_host"`, nil},
	{"train-pageable", "train-pinned", "DataLoader(pin_memory=True)", nil},
	{"train128-pageable", "train128-pinned", "DataLoader(pin_memory=True), 128-image batches, 4 workers", nil},
	{"torch-prefetch-pageable", "torch-prefetch-pineach", "tensor.pin_memory() of each batch, every step", nil},
	{"torch-prefetch48-pageable", "torch-prefetch48-pinned", "tensor.pin_memory() once, 48 MiB batches", nil},
	{"torch-prefetch48-pageable", "torch-prefetch48-pineach", "tensor.pin_memory() of each 48 MiB batch, every step", nil},
	{"nullstream-pageable", "nullstream-pinned", "cudaMallocHost, beside the legacy default stream", nil},
}

// TestVerdictTable audits every shipped pair as `nsyscheck audit BEFORE
// AFTER` does, without --rates (the costs a user without a run folder
// gets) and with the H200 run folder's rates, and writes the tables of
// each region's prediction against the capture after, with its verdict,
// that docs/audit.md shows: a golden file, which the document must hold as
// it is.
func TestVerdictTable(t *testing.T) {
	dir := filepath.Join("..", "testdata", "captures")
	var b strings.Builder
	for i, rates := range []string{"", filepath.Join(dir, "h200-run")} {
		if i > 0 {
			b.WriteString("\nWith `--rates testdata/captures/h200-run`:\n\n")
		}
		verdictTable(t, &b, dir, rates)
	}
	path := filepath.Join("testdata", "verdicts.md")
	golden.Assert(t, path, []byte(b.String()))
	doc, err := os.ReadFile(filepath.Join("..", "docs", "audit.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), b.String()) {
		t.Errorf("docs/audit.md does not hold the verdict tables of %s as they are", path)
	}
}

// verdictTable writes the table of every pair audited with the rates of
// run folder rates ("" for none).
func verdictTable(t *testing.T, b *strings.Builder, dir, rates string) {
	b.WriteString("| pair (fix) | region | time | before | replayed | predicted (bound) | after | predicted/after | verdict |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---|\n")
	for _, p := range verdictPairs {
		out, err := Audit(context.Background(), filepath.Join(dir, p.before), filepath.Join(dir, p.after),
			AuditOptions{NoRule: true, Match: p.match, RatesDir: rates})
		if err != nil {
			t.Fatal(err)
		}
		pair := fmt.Sprintf("%s → %s (%s), %s", p.before, p.after, p.fix, out.Check.Verdict)
		for _, r := range out.Check.Regions {
			if !r.Judged && r.Why != audit.WhyNotJudged {
				continue
			}
			mid, _, _ := r.Predicted()
			name := r.Name
			if r.AfterName != r.Name {
				name += " → " + r.AfterName
			}
			verdict := string(r.Verdict)
			switch r.Why {
			case audit.WhyTooWide:
				verdict += " (too wide: " + r.WideBy + ")"
			case audit.WhyNoGain:
				verdict += " (no gain predicted)"
			case audit.WhyStartUp:
				verdict += fmt.Sprintf(" (start-up: loading %.1f ms before, %.1f after)", r.LoadingMs, r.AfterLoadingMs)
			}
			switch {
			case !r.Judged:
				verdict = "not judged"
			case !r.Faster:
				verdict += ", not faster"
			}
			fmt.Fprintf(b, "| %s | %s | %s | %.3f | %.3f (%+.1f%%) | %.3f (%.3f-%.3f) | %.3f | %+.1f%% | %s |\n",
				strings.ReplaceAll(pair, "|", `\|`), name, r.Measure, r.Time(), r.Replayed(), 100*r.FitError(), mid, r.BoundLowMs, r.BoundHighMs,
				r.AfterMs(), 100*(mid/r.AfterMs()-1), verdict)
			pair = ""
		}
	}
}
