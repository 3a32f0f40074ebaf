package check

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

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
