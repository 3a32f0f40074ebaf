package runinfo

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestReadShippedRun reads the run.json of a shipped run folder: the GPU,
// its link, what was traced and that the GPU was not shared.
func TestReadShippedRun(t *testing.T) {
	info, err := ReadStrict("../testdata/captures/h200-run")
	if err != nil || info == nil || info.GPU == nil {
		t.Fatalf("no run.json read: %v", err)
	}
	if info.Status != "complete" || info.GPU.PCIe.RatedGBps <= 0 || !info.TracedCUDA() || info.SharedGPU() {
		t.Errorf("status %q, link %.1f GB/s, traced CUDA %v, shared %v", info.Status, info.GPU.PCIe.RatedGBps, info.TracedCUDA(), info.SharedGPU())
	}
}

// TestReadRefuses: a FIFO in run.json's place and a damaged one are
// errors, read without blocking; none is none.
func TestReadRefuses(t *testing.T) {
	empty, fifo, bad := t.TempDir(), t.TempDir(), t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifo, InfoFile), 0o644); err != nil {
		t.Skip(err)
	}
	if err := os.WriteFile(filepath.Join(bad, InfoFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if info, err := ReadStrict(empty); info != nil || err != nil {
		t.Errorf("no run.json: %+v, %v", info, err)
	}
	for _, dir := range []string{fifo, bad} {
		if info, err := ReadStrict(dir); info != nil || err == nil {
			t.Errorf("%s: read %+v, %v", dir, info, err)
		}
	}
}

func TestRatedGBps(t *testing.T) {
	for _, c := range []struct {
		gen, width int
		want       float64
	}{{5, 16, 63.015}, {4, 16, 31.508}, {3, 8, 7.877}, {1, 1, 0.25}, {7, 16, 0}, {5, 0, 0}} {
		if got := RatedGBps(c.gen, c.width); got < c.want-0.001 || got > c.want+0.001 {
			t.Errorf("Gen%d x%d: %.3f GB/s, want %.3f", c.gen, c.width, got, c.want)
		}
	}
}

func TestSharingSummarize(t *testing.T) {
	s := &Sharing{Before: &GPUActivity{Utilization: []int{0, 40}}, After: &GPUActivity{Processes: []GPUProcess{{PID: 9, Name: "train", UsedMiB: 100}}}}
	s.Summarize()
	want := "other work shared the GPU: before profiling: utilisation up to 40%; right after: 1 compute process(es) (train pid 9, 100 MiB)"
	if !s.Foreign || s.Summary != want {
		t.Errorf("foreign %v, summary %q", s.Foreign, s.Summary)
	}
}
