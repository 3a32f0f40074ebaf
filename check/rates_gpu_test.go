package check

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/runinfo"
)

// runFolderOn copies the shipped run folder's run.json and results with
// the GPU each names replaced: runGPU in run.json, resultsGPU in the
// results.
func runFolderOn(t *testing.T, runGPU, resultsGPU string) string {
	t.Helper()
	src := filepath.Join("..", "testdata", "captures", "h200-run")
	dir := t.TempDir()
	for name, gpu := range map[string]string{runinfo.InfoFile: runGPU, "pinned.results.json": resultsGPU} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Replace(string(b), `"NVIDIA H200"`, `"`+gpu+`"`, 1)
		if text == string(b) && gpu != "NVIDIA H200" {
			t.Fatalf("%s names no NVIDIA H200", name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A run folder whose run.json and results name two GPUs is refused; one
// of another GPU than the capture's is refused by the audit of it; the
// shipped run folder, of the capture's GPU, is taken.
func TestRatesOfAnotherGPU(t *testing.T) {
	if _, err := AuditRates(AuditOptions{RatesDir: runFolderOn(t, "Tesla T4", "NVIDIA H200")}); err == nil ||
		!strings.Contains(err.Error(), "run.json says the run used Tesla T4, its pinned.results.json NVIDIA H200: the folder mixes two runs") {
		t.Errorf("run.json and results of two GPUs: %v", err)
	}
	capture := filepath.Join("..", "testdata", "captures", "pipeline-pageable", "pipeline-pageable.sqlite")
	other := runFolderOn(t, "NVIDIA RTX 6000 Ada Generation", "NVIDIA RTX 6000 Ada Generation")
	rates, err := AuditRates(AuditOptions{RatesDir: other})
	if err != nil || rates.GPU != "NVIDIA RTX 6000 Ada Generation" {
		t.Fatalf("a run folder of one GPU: %+v, %v", rates, err)
	}
	_, err = AuditCapture(context.Background(), capture, rates, AuditOptions{NoRule: true})
	if err == nil || !strings.Contains(err.Error(), "the capture was made on NVIDIA H200, the --rates run folder "+other+" on NVIDIA RTX 6000 Ada Generation") {
		t.Errorf("rates of another GPU: %v", err)
	}
	rates, err = AuditRates(AuditOptions{RatesDir: filepath.Join("..", "testdata", "captures", "h200-run")})
	if err != nil || rates.GPU != "NVIDIA H200" {
		t.Fatalf("the shipped run folder: %+v, %v", rates, err)
	}
	if _, err := AuditCapture(context.Background(), capture, rates, AuditOptions{NoRule: true}); err != nil {
		t.Errorf("rates of the capture's GPU: %v", err)
	}
}

// A run folder whose run.json says the run failed, was interrupted or is
// still running is refused, naming its status and step: its results may
// be partial, or an earlier run's.
func TestRatesOfUnfinishedRun(t *testing.T) {
	for _, status := range []string{"failed", "interrupted", "running"} {
		dir := runFolderOn(t, "NVIDIA H200", "NVIDIA H200")
		p := filepath.Join(dir, runinfo.InfoFile)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Replace(string(b), `"status": "complete",`, `"status": "`+status+`", "failedStep": "profile",`, 1)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = AuditRates(AuditOptions{RatesDir: dir})
		if err == nil || !strings.Contains(err.Error(), "run.json says the run is "+status+" (at step profile), so its results may be partial") {
			t.Errorf("a %s run: %v", status, err)
		}
	}
}
