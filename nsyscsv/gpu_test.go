package nsyscsv

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/records"
)

// gpuTraceOf writes the shipped h200-pinned cuda_gpu_trace report into a
// folder of its own, each line rewritten by edit, and returns the folder
// and its reports.
func gpuTraceOf(t *testing.T, edit func(string) string) (string, map[string]string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "captures", "h200-pinned", "pinned_cuda_gpu_trace.csv"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "pinned_cuda_gpu_trace.csv")
	if err := os.WriteFile(p, []byte(edit(string(data))), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, map[string]string{nsysdb.ReportGPUTrace: p}
}

// read is what reading a folder's GPU trace handed on: the GPU its
// metadata named, how many metadata records and GPU operations came, the
// operations before the first metadata record, and the facts it lacks.
type read struct {
	gpu                  string
	metas, ops, opsFirst int
	gaps                 []records.Gap
}

func readMeta(dir string, reports map[string]string) (read, error) {
	var r read
	h := records.Handler{
		Meta: func(m *records.Meta) error { r.gpu, r.metas = m.GPU, r.metas+1; return nil },
		Gap:  func(g records.Gap) error { r.gaps = append(r.gaps, g); return nil },
		Op: func(*records.Op) error {
			if r.metas == 0 {
				r.opsFirst++
			}
			r.ops++
			return nil
		},
	}
	_, err := Read(context.Background(), dir, reports, records.Selection{}, h)
	return r, err
}

// The GPU trace's Device cells name the GPU, as an export's GPU table
// does, before any record: several GPUs joined in order; a device named as
// two GPUs is refused, naming both rows; without names, the GPU is unknown.
func TestGPUNamedByTheDeviceColumn(t *testing.T) {
	dir, reports := gpuTraceOf(t, func(s string) string { return s })
	if r, err := readMeta(dir, reports); err != nil || r.gpu != "NVIDIA H200" || r.metas != 1 || r.ops == 0 || r.opsFirst != 0 || hasGap(r.gaps, records.FactGPU) {
		t.Errorf("shipped report: %+v, error %v; want NVIDIA H200 named once, before the operations", r, err)
	}

	row9 := regexp.MustCompile(`(?m)^(1343085254,.*)NVIDIA H200 \(0\)`)
	dir, reports = gpuTraceOf(t, func(s string) string { return row9.ReplaceAllString(s, "${1}NVIDIA A100-SXM4-80GB (1)") })
	if r, err := readMeta(dir, reports); err != nil || r.gpu != "NVIDIA A100-SXM4-80GB, NVIDIA H200" {
		t.Errorf("a row on a second GPU: %+v, error %v; want both GPUs, in order", r, err)
	}

	dir, reports = gpuTraceOf(t, func(s string) string { return row9.ReplaceAllString(s, "${1}NVIDIA A100 (0)") })
	_, err := readMeta(dir, reports)
	var ie *inputerr.Error
	if !errors.As(err, &ie) || ie.Where != `data row 8, column "Device"` || !strings.Contains(ie.Problem, `data row 1 names device 0 "NVIDIA H200", this row another GPU: "NVIDIA A100 (0)"`) {
		t.Errorf("device 0 named as two GPUs: %v", err)
	}

	dir, reports = gpuTraceOf(t, func(s string) string { return strings.ReplaceAll(s, "NVIDIA H200 (0)", "") })
	if r, err := readMeta(dir, reports); err != nil || r.metas != 0 || r.ops == 0 || !hasGap(r.gaps, records.FactGPU) {
		t.Errorf("Device cells all empty: %+v, error %v; want no GPU named, and the GPU said unknown", r, err)
	}

	dir, reports = gpuTraceOf(t, func(s string) string { return strings.ReplaceAll(s, "NVIDIA H200 (0)", "0") })
	if r, err := readMeta(dir, reports); err != nil || r.metas != 0 || r.ops == 0 || !hasGap(r.gaps, records.FactGPU) {
		t.Errorf("devices by number alone: %+v, error %v; want no GPU named, and the GPU said unknown", r, err)
	}
}

func hasGap(gaps []records.Gap, f records.Fact) bool {
	for _, g := range gaps {
		if g.Fact == f {
			return true
		}
	}
	return false
}

// BenchmarkGPUNames measures the pass that names the GPU before the
// records stream, beside the pass that reads the same rows as records, on
// the shipped GPU trace's rows repeated to 600,000.
func BenchmarkGPUNames(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "captures", "h200-pinned", "pinned_cuda_gpu_trace.csv"))
	if err != nil {
		b.Fatal(err)
	}
	head, body, _ := strings.Cut(string(data), "\n")
	rows := strings.Count(body, "\n")
	var sb strings.Builder
	sb.WriteString(head + "\n")
	for n := 0; n < 600_000; n += rows {
		sb.WriteString(body)
	}
	p := filepath.Join(b.TempDir(), "big_cuda_gpu_trace.csv")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	open := func(b *testing.B) *reader {
		rf, err := openRecords(p, nsysdb.ReportGPUTrace, nsysdb.GPUTraceColumns)
		if err != nil {
			b.Fatal(err)
		}
		return &reader{ctx: context.Background(), gpu: rf, h: records.Handler{Op: func(*records.Op) error { return nil }}}
	}
	b.Run("names", func(b *testing.B) {
		for b.Loop() {
			rd := open(b)
			if err := rd.readGPUNames(); err != nil || rd.gpuName != "NVIDIA H200" {
				b.Fatalf("%q, %v", rd.gpuName, err)
			}
			rd.gpu.close()
		}
	})
	b.Run("records", func(b *testing.B) {
		for b.Loop() {
			rd := open(b)
			if err := rd.gpuRows(func(*records.Op) error { return nil }); err != nil {
				b.Fatal(err)
			}
			rd.gpu.close()
		}
	})
}
