package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nsyscheck/nsyscheck/internal/environ"
	"github.com/nsyscheck/nsyscheck/internal/sqlitefile"
)

// maxOpens is the most times one verify or one audit may open an SQLite
// export: the handle source holds (header, write lock, the exposure
// scan's bytes), the stream's connection, the connection the checks beside
// it and the exposure scan share, and the stream's batch connection
// (sqlitefile.PoolSize).
const maxOpens = 4

// TestOpensOfAnExport runs verify and audit, as a user does, on every
// shipped SQLite export and counts how often each opens it: every open of
// an input's SQLite database goes through internal/sqlitefile, which
// counts them (testdata/script/opens.txtar counts them by the kernel,
// where strace is installed).
// A report is read through the export beside it, opened as often. The
// audit reads NVIDIA's rule's CSV where the capture has one beside it,
// and reads its copies a second time where the rule and it disagree (as
// on driver-pageable): the second read opens nothing new.
func TestOpensOfAnExport(t *testing.T) {
	exports, err := filepath.Glob(filepath.Join("..", "..", "testdata", "captures", "*", "*.sqlite"))
	if err != nil || len(exports) < 20 {
		t.Fatalf("shipped exports: %d (%v)", len(exports), err)
	}
	// No nsys: NVIDIA's rule comes from the CSV beside a capture or not at
	// all, so that only this process opens the export.
	home := t.TempDir()
	env := environ.Env{"PATH=" + home, "HOME=" + home, "XDG_CACHE_HOME=" + home, "COLUMNS=80"}
	// A report with its export beside it: the export is opened as often.
	dir := t.TempDir()
	report := filepath.Join(dir, "torch-lesson.nsys-rep")
	export := filepath.Join(dir, "torch-lesson.sqlite")
	for from, to := range map[string]string{"torch-lesson.nsys-rep": report, "torch-lesson.sqlite": export} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "captures", "torch-lesson", from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	if err := os.Chtimes(report, now, now.Add(-time.Minute)); err != nil { // the export is the newer
		t.Fatal(err)
	}
	inputs := map[string]string{report: export}
	for _, path := range exports {
		inputs[path] = path
	}
	for input, path := range inputs {
		for _, cmd := range []string{"verify", "audit"} {
			count, stop := sqlitefile.CountOpens()
			var out, errb bytes.Buffer
			// An audit may be refused (jax-nvtx holds no copy): the
			// export is read all the same.
			code := Main([]string{cmd, input}, Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Env: env})
			n := count(path)
			stop()
			// The handle, the stream's connection and its batch
			// connection at least: a count below that counts nothing.
			if n < 3 || n > maxOpens {
				t.Errorf("%s %s (exit %d) opened the export %s %d times, want 3 to %d; stderr: %s", cmd, input, code, path, n, maxOpens, errb.String())
			}
		}
	}
}
