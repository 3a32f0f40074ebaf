package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/golden"
)

// pinnedInputs are the shipped and reference captures whose every verdict,
// measured value, bound, record and the type of every fact, reason and
// diagnostic is pinned from the typed result in testdata/numbers
// (TestNumbers), and which verify reads through the command a user runs.
// Each capture is read as each of its input kinds; the CSV reports are
// copied to a folder of their own so the folder reader, not the SQLite
// export beside them, answers.
var pinnedInputs = []struct{ name, path, csvFrom string }{
	{name: "h200-pinned.folder", path: "../../testdata/captures/h200-pinned"},
	{name: "h200-pinned.sqlite", path: "../../testdata/captures/h200-pinned/pinned.sqlite"},
	{name: "h200-pinned.transcript", path: "../../testdata/captures/h200-pinned/pinned.transcript.txt"},
	{name: "h200-pinned.results", path: "../../testdata/captures/h200-pinned/pinned.results.json"},
	{name: "h200-pinned.csv", csvFrom: "../../testdata/captures/h200-pinned"},
	{name: "h200-pinned-nonvtx.folder", path: "../../testdata/captures/h200-pinned-nonvtx"},
	{name: "h200-pinned-nonvtx.sqlite", path: "../../testdata/captures/h200-pinned-nonvtx/pinned.sqlite"},
	{name: "h200-pinned-nonvtx.transcript", path: "../../testdata/captures/h200-pinned-nonvtx/pinned.transcript.txt"},
	{name: "h200-pinned-nonvtx.results", path: "../../testdata/captures/h200-pinned-nonvtx/pinned.results.json"},
	{name: "h200-pinned-nonvtx.csv", csvFrom: "../../testdata/captures/h200-pinned-nonvtx"},
	{name: "h200-run.folder", path: "../../testdata/captures/h200-run"},
	{name: "h200-run.sqlite", path: "../../testdata/captures/h200-run/pinned.sqlite"},
	{name: "h200-run.csv", csvFrom: "../../testdata/captures/h200-run"},
	{name: "other-counts.folder", path: "../../testdata/captures/other-counts"},
	{name: "other-counts.csv", csvFrom: "../../testdata/captures/other-counts"},
	{name: "broken-pin.folder", path: "../../testdata/captures/broken-pin"},
	{name: "broken-pin.csv", csvFrom: "../../testdata/captures/broken-pin"},
	{name: "torch-lesson.folder", path: "../../testdata/captures/torch-lesson"},
	{name: "torch-lesson.nsys-rep", path: "../../testdata/captures/torch-lesson/torch-lesson.nsys-rep"},
	{name: "torch-lesson.csv", csvFrom: "../../testdata/captures/torch-lesson"},
	{name: "h200-lesson-set.folder", path: "../../testdata/captures/h200-lesson-set"},
	{name: "ref.sqlite", path: "../../testdata/reference/h200-ref/ref.sqlite"},
	{name: "ref.csv", csvFrom: "../../testdata/reference/h200-ref"},
	{name: "ref-nsys2022.csv", csvFrom: "../../testdata/reference/h200-ref-nsys2022-csv"},
	{name: "ref.transcript", path: "../../testdata/reference/h200-ref/ref.transcript.txt"},
	{name: "lesson-t4.measurements", path: "../../testdata/measurements/lesson-t4.json"},
	{name: "exposed.sqlite", path: "../../testdata/exposure/exposed.sqlite"},
}

// faces are the pinned inputs whose whole output, words included, is
// compared with testdata/pinned: the face of the tool for each shape of
// input (an export with the program's numbers beside it, CSV reports
// without NVTX, a broken pin, another program, the program's numbers
// alone, an export that exposes its machine), in text, and its JSON for
// three of them. The other inputs' words are left free: their numbers
// and typed results are pinned in testdata/numbers.
var faces = map[string][]string{
	"h200-pinned.sqlite":     {"json", "text"},
	"h200-pinned-nonvtx.csv": {"text"},
	"broken-pin.folder":      {"text"},
	"torch-lesson.folder":    {"text"},
	"lesson-t4.measurements": {"json", "text"},
	"exposed.sqlite":         {"text"},
	"ref-nsys2022.csv":       {"json"},
}

// TestPinnedNumbers runs verify on every pinned input in JSON and text;
// for the faces it compares the whole output with its golden file. A
// missing input fails: these files are committed.
func TestPinnedNumbers(t *testing.T) {
	t.Setenv("COLUMNS", "100")
	pkg, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range pinnedInputs {
		t.Run(in.name, func(t *testing.T) {
			path := in.path
			if in.csvFrom != "" {
				// The copy is named from its own folder, so that the
				// output (its wrapping included) does not depend on where
				// the temporary folder lies.
				dir := csvOnlyCopy(t, in.csvFrom)
				t.Chdir(filepath.Dir(dir))
				path = filepath.Base(dir)
			}
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("committed input missing: %v", err)
			}
			for _, format := range []string{"json", "text"} {
				var out, errb bytes.Buffer
				code := Main([]string{"verify", path, "--format", format}, Streams{In: strings.NewReader(""), Out: &out, Err: &errb})
				if code == exitError {
					t.Fatalf("verify %s: exit %d: %s", path, code, errb.String())
				}
				// Inputs are named relative to the working folder.
				got := strings.ReplaceAll(out.String(), shownPath(path), "INPUT")
				got = strings.ReplaceAll(got, path, "INPUT")
				got = strings.ReplaceAll(got, `"version": "`+buildVersion()+`"`, `"version": "VERSION"`)
				if slices.Contains(faces[in.name], format) {
					golden.Assert(t, filepath.Join(pkg, "testdata", "pinned", in.name+"."+format), []byte(got))
				} else if !strings.Contains(got, "INPUT") {
					t.Errorf("verify %s --format %s does not name its input:\n%s", path, format, got)
				}
			}
		})
	}
}

// csvOnlyCopy copies the CSV reports of dir into a fresh folder.
func csvOnlyCopy(t *testing.T, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.csv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("committed CSV reports missing under %s (%v)", dir, err)
	}
	out := filepath.Join(t.TempDir(), "csv-copy")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
