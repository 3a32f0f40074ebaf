package nsyssqlite

import (
	"context"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/records"
)

// gpuOf reads an export's GPU and why it is unknown ("" where it is known).
func gpuOf(t *testing.T, path string) (gpu, why string) {
	t.Helper()
	h := records.Handler{
		Op:   func(*records.Op) error { return nil },
		Meta: func(m *records.Meta) error { gpu = m.GPU; return nil },
		Gap: func(g records.Gap) error {
			if g.Fact == records.FactGPU {
				why = g.Reason
			}
			return nil
		},
	}
	if _, err := Read(context.Background(), open(t, path), path, records.Selection{Ops: []records.OpKind{records.OpCopy}}, h); err != nil {
		t.Fatal(err)
	}
	return gpu, why
}

// An export that names no GPU says the GPU is unknown (a FactGPU gap)
// instead of bounding the copies by a GPU silently (copies on a device it
// does not name are refused: TestUnlistedContexts).
func TestUnknownGPU(t *testing.T) {
	if gpu, why := gpuOf(t, trainPinned); gpu != "NVIDIA H200" || why != "" {
		t.Errorf("the shipped export: %q, %q", gpu, why)
	}
	cases := []struct{ name, stmt, gpu, why string }{
		{"TARGET_INFO_GPU emptied", `DELETE FROM TARGET_INFO_GPU`, "",
			"TARGET_INFO_GPU names no GPU, so the GPU is unknown: a copy's rate is bounded by the fastest host link there is (NVLink-C2C, 450 GB/s) and the fastest memory, not the GPU's own"},
		{"TARGET_INFO_GPU dropped", `DROP TABLE TARGET_INFO_GPU`, "",
			"the export has no TARGET_INFO_GPU table, so the GPU is unknown: a copy's rate is bounded by the fastest host link there is"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gpu, why := gpuOf(t, fixture.SQLite(t, trainPinned, tc.stmt))
			if gpu != tc.gpu || !strings.HasPrefix(why, tc.why) {
				t.Errorf("got %q, %q; want %q, %q", gpu, why, tc.gpu, tc.why)
			}
		})
	}
}
