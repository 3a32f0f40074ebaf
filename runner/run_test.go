package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/runinfo"
)

func TestStatsReportsReal(t *testing.T) {
	help, err := os.ReadFile(filepath.Join("testdata", "help-reports-2025.3.txt"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := StatsReports(string(help))
	if err != nil {
		t.Fatal(err)
	}
	want := "cuda_api_sum,cuda_api_trace,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,nvtx_sum,cuda_gpu_trace,nvtx_pushpop_trace"
	if strings.Join(got, ",") != want {
		t.Errorf("got %v, want %s", got, want)
	}
	// nsys 2022 names, and a list without the per-record reports.
	old := "cudaapisum\ncudaapitrace\ngpumemtimesum\ngpumemsizesum\nnvtxsum\ngputrace\nnvtxpptrace\n"
	if got, err := StatsReports(old); err != nil || strings.Join(got, ",") != "cudaapisum,cudaapitrace,gpumemtimesum,gpumemsizesum,nvtxsum,gputrace,nvtxpptrace" {
		t.Errorf("nsys 2022 list: %v, %v", got, err)
	}
	if got, err := StatsReports("cuda_api_sum\ncuda_api_trace\ncuda_gpu_mem_time_sum\ncuda_gpu_mem_size_sum\nnvtx_sum\n"); err != nil || len(got) != 5 {
		t.Errorf("a list without the per-record reports: %v, %v", got, err)
	}
	if _, err := StatsReports("cuda_api_sum -- CUDA API Summary\n"); err == nil || !strings.Contains(err.Error(), "cuda_api_trace") {
		t.Errorf("a list without cuda_api_trace: %v", err)
	}
}

// A relative --out becomes absolute, since tools run inside the folder and
// are given paths in it; an existing folder is refused; a run that made
// nothing leaves no folder.
func TestNewAbsoluteRefuseDiscard(t *testing.T) {
	t.Chdir(t.TempDir())
	r, err := New(Options{Dir: "runs/a"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(r.Dir) {
		t.Errorf("run folder %q is not absolute", r.Dir)
	}
	for _, f := range []string{runinfo.InfoFile, runinfo.IncompleteFile} {
		if _, err := os.Stat(r.Path(f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := New(Options{Dir: "runs/a"}, "test"); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second run into the same folder: %v", err)
	}
	if !r.Discard() {
		t.Fatal("Discard kept a run that made nothing")
	}
	if _, err := os.Stat(r.Dir); !os.IsNotExist(err) {
		t.Errorf("run folder still there: %v", err)
	}
	r2, err := New(Options{Dir: "runs/b"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r2.Path("build.log"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r2.Discard() {
		t.Error("Discard removed a run folder that holds a log")
	}
}

func TestCommandLineQuotes(t *testing.T) {
	got := commandLine("nsys", "export", "--output", "/tmp/my run/it's.sqlite", "")
	want := `nsys export --output '/tmp/my run/it'\''s.sqlite' ''`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// A log of gigabytes is read no further than its end for a message: once
// read whole into memory.
func TestTailReadsTheEnd(t *testing.T) {
	p := filepath.Join(t.TempDir(), "export.log")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file of 4 GiB, its last line written.
	if err := f.Truncate(4 << 30); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("\nthe closing error\n"), 4<<30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := tail(p, 3); !strings.Contains(got, "the closing error") {
		t.Errorf("tail of a 4 GiB log: %q", got)
	}
	if got := tail(filepath.Join(t.TempDir(), "empty.log"), 3); got != "" {
		t.Errorf("tail of no log: %q", got)
	}
}

// A program that writes its error line without end is quoted by its first
// lines.
func TestProgramMessageBounded(t *testing.T) {
	p := filepath.Join(t.TempDir(), runinfo.TranscriptFile)
	if err := os.WriteFile(p, []byte(strings.Repeat(runinfo.Base+": CUDA error\n", 5000)), 0o644); err != nil {
		t.Fatal(err)
	}
	got := programMessage(p)
	if strings.Count(got, "CUDA error") != maxProgramLines || !strings.HasSuffix(got, "and 4980 more such lines") {
		t.Errorf("programMessage of 5000 lines: %d quoted, ending %q", strings.Count(got, "CUDA error"), got[len(got)-40:])
	}
}

// A --out that is a link to nothing is named so: once "already exists".
func TestNewDanglingLink(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "run")
	if err := os.Symlink(filepath.Join(dir, "gone"), link); err != nil {
		t.Fatal(err)
	}
	_, err := New(Options{Dir: link}, "test")
	if err == nil || !strings.Contains(err.Error(), link+" is a link to "+filepath.Join(dir, "gone")+", which does not exist") {
		t.Errorf("a link to nothing: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "gone")); !os.IsNotExist(err) {
		t.Errorf("the link's target was made: %v", err)
	}
}
