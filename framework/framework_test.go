package framework_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/framework"
	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/records"
	"github.com/nsyscheck/nsyscheck/source"
)

func detect(t *testing.T, path string) framework.Detection {
	t.Helper()
	src, err := source.Open(context.Background(), path, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	d := framework.NewDetector()
	if _, err := capture.Read(context.Background(), src, records.Selection{}, d.Handler()); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return d.Detect()
}

// Every shipped capture of a program is told by what its trace holds.
func TestShippedCaptures(t *testing.T) {
	for name, want := range map[string]struct {
		fw     framework.Name
		python bool
		clue   framework.ClueKind // the strongest clue's kind
	}{
		"pipeline-pageable":       {framework.Runtime, false, framework.ClueAPI},
		"mixed-buffers":           {framework.Runtime, false, framework.ClueAPI},
		"h200-pinned":             {framework.Runtime, false, framework.ClueAPI},
		"graph-node":              {framework.Runtime, false, framework.ClueAPI},
		"managed":                 {framework.Runtime, false, ""},
		"driver-pageable":         {framework.Driver, false, framework.ClueAPI},
		"driver-pinned":           {framework.Driver, false, framework.ClueAPI},
		"cupy-pageable":           {framework.CuPy, true, framework.ClueKernel},
		"cupy-pinned":             {framework.CuPy, true, framework.ClueKernel},
		"torch-lesson":            {framework.PyTorch, true, framework.ClueKernel},
		"torch-prefetch-pageable": {framework.PyTorch, true, framework.ClueThread},
		"train-pageable":          {framework.PyTorch, true, framework.ClueThread},
		"train-pinned":            {framework.PyTorch, true, framework.ClueThread},
		"jax-cuda":                {framework.JAX, true, framework.ClueKernel},
		"jax-cuda-pinned":         {framework.JAX, true, framework.ClueKernel},
		"jax-nvtx":                {framework.JAX, true, framework.ClueDomain},
	} {
		m, _ := filepath.Glob(filepath.Join("..", "testdata", "captures", name, "*.sqlite"))
		if len(m) != 1 {
			t.Fatalf("%s: %d exports", name, len(m))
		}
		got := detect(t, m[0])
		if got.Framework != want.fw || got.Python != want.python || got.Backtraces {
			t.Errorf("%s: %s (python %v, backtraces %v), want %s (python %v); clues %+v", name, got.Framework, got.Python,
				got.Backtraces, want.fw, want.python, got.Clues)
		}
		if want.clue == "" {
			if len(got.Clues) != 0 {
				t.Errorf("%s: clues %+v, want none", name, got.Clues)
			}
			continue
		}
		if len(got.Clues) == 0 || got.Clues[0].Kind != want.clue || got.Clues[0].Count == 0 {
			t.Errorf("%s: clues %+v, want a %s first", name, got.Clues, want.clue)
		}
	}
}

// A DataLoader's worker processes, which make no CUDA call, are counted
// from the processes the capture lists: two in the 64-image run, four in
// the 128-image one, none in the prefetch program, which has no loader.
func TestLoaderWorkers(t *testing.T) {
	for name, want := range map[string]int{"train-pageable": 2, "train-pinned": 2, "train128-pageable": 4, "torch-prefetch-pageable": 0} {
		m, _ := filepath.Glob(filepath.Join("..", "testdata", "captures", name, "*.sqlite"))
		if len(m) != 1 {
			t.Fatalf("%s: %d exports", name, len(m))
		}
		if got := detect(t, m[0]); got.LoaderWorkers != want {
			t.Errorf("%s: %d loader workers, want %d", name, got.LoaderWorkers, want)
		}
	}
	// Named otherwise, the same processes are no loader's.
	path := fixture.SQLite(t, filepath.Join("..", "testdata", "captures", "train-pageable", "train-pageable.sqlite"),
		`UPDATE PROCESSES SET name = 'python3' WHERE name = 'pt_data_worker'`)
	if got := detect(t, path); got.LoaderWorkers != 0 {
		t.Errorf("renamed workers: %d loader workers, want 0", got.LoaderWorkers)
	}
}

// A capture made with nsys profile --cudabacktrace says so.
func TestBacktraces(t *testing.T) {
	path := fixture.SQLite(t, filepath.Join("..", "testdata", "captures", "driver-pageable", "driver-pageable.sqlite"),
		`UPDATE META_DATA_CAPTURE SET value = 'true' WHERE name = 'SHOW_BACKTRACE'`)
	if got := detect(t, path); !got.Backtraces || got.Framework != framework.Driver {
		t.Errorf("backtraces %v, framework %s", got.Backtraces, got.Framework)
	}
}

// Records built in Go: a weak mark (an ATen kernel name) tells PyTorch only
// in a Python program; a strong one (CuPy's own kernels) wherever it is.
func TestWeakAndStrongMarks(t *testing.T) {
	run := func(thread string, kernels ...string) framework.Detection {
		d := framework.NewDetector()
		h := d.Handler()
		if err := h.Call(&records.Call{Name: "cudaMemcpyAsync", Thread: thread}); err != nil {
			t.Fatal(err)
		}
		for _, k := range kernels {
			if err := h.Op(&records.Op{Kind: records.OpKernel, Name: k}); err != nil {
				t.Fatal(err)
			}
		}
		return d.Detect()
	}
	for _, c := range []struct {
		thread  string
		kernels []string
		want    framework.Name
	}{
		{"python3", []string{"vectorized_elementwise_kernel"}, framework.PyTorch},
		{"app", []string{"vectorized_elementwise_kernel"}, framework.Runtime},
		{"app", []string{"cupy_add"}, framework.CuPy},
		{"python3", []string{"cupy_add", "loop_add_fusion"}, framework.CuPy},
		{"python3", []string{"loop_add_fusion"}, framework.JAX},
		{"pt_autograd_0", []string{"cupy_add"}, framework.PyTorch},
	} {
		if got := run(c.thread, c.kernels...); got.Framework != c.want {
			t.Errorf("thread %s, kernels %v: %s, want %s (%+v)", c.thread, c.kernels, got.Framework, c.want, got.Clues)
		}
	}
}
