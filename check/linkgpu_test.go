package check

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/internal/fixture"
)

// A capture of a GPU the bounds know, with no link given, is predicted
// over that GPU's usual link, not the PCIe 5.0 x16 assumed for any GPU:
// the shipped pipeline's copies, from pageable memory alone, are priced
// at the link; named an A100 the capture's GPU crosses PCIe 4.0 x16, at
// half the rate, and its pass takes longer pinned; named a GH200 it
// crosses NVLink-C2C; as shipped (an H200) it is predicted as before.
func TestLinkOfCaptureGPU(t *testing.T) {
	shipped := filepath.Join("..", "testdata", "captures", "pipeline-pageable", "pipeline-pageable.sqlite")
	pass := func(t *testing.T, path string) (float64, audit.LinkOrigin) {
		t.Helper()
		out, err := Audit(context.Background(), path, "", AuditOptions{NoRule: true})
		if err != nil {
			t.Fatal(err)
		}
		r := out.Before.Region("pass")
		if r == nil || out.Before.Link == nil {
			t.Fatalf("%s: no region pass, or no link: %+v", path, out.Before.Link)
		}
		mid, _, _ := r.Predicted()
		return mid, *out.Before.Link
	}
	h200, link := pass(t, shipped)
	if link.Gen != 5 || link.Width != 16 || link.Kind != audit.LinkAssumed {
		t.Errorf("H200: link %+v, want PCIe 5.0 x16 assumed", link)
	}
	a100, link := pass(t, fixture.SQLite(t, shipped, `UPDATE TARGET_INFO_GPU SET name = 'NVIDIA A100-SXM4-80GB'`))
	if link.Gen != 4 || link.Width != 16 || link.GBps > 32 || link.Kind != audit.LinkAssumed {
		t.Errorf("A100: link %+v, want PCIe 4.0 x16 assumed", link)
	}
	if a100 < 1.5*h200 {
		t.Errorf("pass predicted %.3f ms pinned on an A100, %.3f ms on the H200: want the A100's slower link to show", a100, h200)
	}
	_, link = pass(t, fixture.SQLite(t, shipped, `UPDATE TARGET_INFO_GPU SET name = 'NVIDIA GH200 480GB'`))
	if link.Gen != 0 || link.Name != "NVLink-C2C" || link.GBps != 450 {
		t.Errorf("GH200: link %+v, want NVLink-C2C", link)
	}
	over, _ := pass(t, shipped)
	if over != h200 {
		t.Errorf("the shipped capture twice: %.6f and %.6f ms", h200, over)
	}
}
