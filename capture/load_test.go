package capture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/records"
)

// copyFiles copies the named files of src into a new folder.
func copyFiles(t *testing.T, src string, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadFiles(t *testing.T) {
	for _, tc := range []struct {
		path string
		want Format
	}{
		{"../testdata/reference/h200-ref/ref.sqlite", FormatSQLite},
		{lessonT4, FormatMeasurements},
		{refTranscript, FormatTranscript},
		{"../testdata/reference/h200-ref/ref_cuda_api_trace.csv", FormatCSV},
		{refCSV2022, FormatCSV}, // a folder of CSV reports only
	} {
		c, err := Load(tc.path, Options{})
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		if c.Format != tc.want {
			t.Errorf("%s: format %s, want %s", tc.path, c.Format, tc.want)
		}
	}
}

func TestLoadDirPrefersSQLiteAndAttachesProgram(t *testing.T) {
	c, err := Load("../testdata/reference/h200-ref", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Format != FormatSQLite {
		t.Fatalf("format %s, want sqlite", c.Format)
	}
	if c.Program == nil || len(c.Program.Copies) != 20 {
		t.Fatal("the transcript's numbers were not attached")
	}
	if !c.Has(records.FactProgram) {
		t.Errorf("program-numbers still missing: %s", c.Why(records.FactProgram))
	}
	last := c.Files[len(c.Files)-1]
	if filepath.Base(last) != "ref.transcript.txt" {
		t.Errorf("files %v", c.Files)
	}

	// The shipped capture: the results JSON wins over the transcript.
	dir := copyFiles(t, "../testdata/captures/h200-pinned", "pinned.results.json", "pinned.transcript.txt",
		"pinned_cuda_api_trace.csv", "pinned_cuda_api_sum.csv")
	c, err = Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Format != FormatCSV || c.Program == nil || c.Program.Source != "pinned.cu results" {
		t.Errorf("format %s program %+v", c.Format, c.Program)
	}
	if filepath.Base(c.Files[len(c.Files)-1]) != "pinned.results.json" {
		t.Errorf("files %v", c.Files)
	}

	// Numbers alone are a capture too.
	dir = copyFiles(t, "../testdata/captures/h200-pinned", "pinned.transcript.txt")
	c, err = Load(dir, Options{})
	if err != nil || c.Format != FormatTranscript {
		t.Fatalf("transcript-only folder: %v", err)
	}

	// A results JSON beside a trace that is not the program's is a hint,
	// not a requirement: set aside with its reason, never silently dropped.
	dir = copyFiles(t, "../testdata/captures/h200-pinned", "pinned_cuda_api_trace.csv")
	if err := os.WriteFile(filepath.Join(dir, "results.json"), []byte(`{"schema":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = Load(dir, Options{})
	if err != nil {
		t.Fatalf("a foreign results.json beside the trace stopped the load: %v", err)
	}
	if c.Program != nil || len(c.SetAside) != 1 || filepath.Base(c.SetAside[0].Path) != "results.json" ||
		!strings.Contains(c.SetAside[0].Reason, "schema") {
		t.Errorf("program %+v, set aside %+v", c.Program, c.SetAside)
	}
	// Given as the input itself, the same file is an error.
	_, err = Load(filepath.Join(dir, "results.json"), Options{})
	wantInputError(t, err, "results.json", "schema")
}

func TestForeignTranscriptBesideSQLite(t *testing.T) {
	// Another program's stdout beside the export: the capture still loads,
	// the transcript is named and set aside.
	dir := copyFiles(t, "../testdata/captures/torch-lesson", "torch-lesson.sqlite", "torch-lesson.transcript.txt")
	c, err := Load(filepath.Join(dir, "torch-lesson.sqlite"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Program != nil || len(c.SetAside) != 1 || filepath.Base(c.SetAside[0].Path) != "torch-lesson.transcript.txt" ||
		!strings.Contains(c.SetAside[0].Reason, "no program output") {
		t.Errorf("program %+v, set aside %+v", c.Program, c.SetAside)
	}
	if len(c.Calls) == 0 || c.Memcpys.Len() == 0 {
		t.Errorf("the capture was not read: %d calls, %d copies", len(c.Calls), c.Memcpys.Len())
	}
	// So does the folder.
	if c, err = Load(dir, Options{}); err != nil || len(c.SetAside) != 1 {
		t.Errorf("folder: %v, set aside %+v", err, c)
	}
}

func TestLoadPrefersPlainSQLite(t *testing.T) {
	dir := copyFiles(t, "../testdata/reference/h200-ref", "ref.sqlite")
	b, err := os.ReadFile(filepath.Join(dir, "ref.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	// A broken nsyscheck export beside a good plain one must not be chosen.
	if err := os.WriteFile(filepath.Join(dir, "ref.nsyscheck.sqlite"), b[:100], 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(c.Path) != "ref.sqlite" {
		t.Errorf("loaded %s", c.Path)
	}
}

func TestLoadErrors(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nothing-here"), Options{})
	wantInputError(t, err, "nothing-here", "check the path")

	dir := writeDir(t, map[string]string{"notes.md": "hello"})
	_, err = Load(dir, Options{})
	wantInputError(t, err, "no capture found in "+dir, "*.sqlite", "*.nsys-rep", "_cuda_api_trace.csv", "results.json", "transcript.txt")

	dir = writeDir(t, map[string]string{"a.results.json": "{}", "b.results.json": "{}"})
	_, err = Load(dir, Options{})
	wantInputError(t, err, "a.results.json", "b.results.json")

	dir = writeDir(t, map[string]string{"other.csv": "a,b\n"})
	_, err = Load(filepath.Join(dir, "other.csv"), Options{})
	wantInputError(t, err, "other.csv", "not a known nsys stats report")

	// A file that is none of the known kinds: one error naming them all.
	dir = writeDir(t, map[string]string{"t.txt": "just some text\n"})
	_, err = Load(filepath.Join(dir, "t.txt"), Options{})
	wantInputError(t, err, "t.txt", "not an input nsyscheck reads", ".nsys-rep", "SQLite export", ".csv report", ".json", "program's stdout", "device: ")

	// The program's first line makes it a transcript, whose reader says
	// what is missing.
	dir = writeDir(t, map[string]string{"t.txt": "device: NVIDIA H200 (sm_90, 132 SMs), driver 13000, runtime 13000\n"})
	_, err = Load(filepath.Join(dir, "t.txt"), Options{})
	wantInputError(t, err, "t.txt", "no program output found")
}

// The program's stdout is told by its content, whatever its name.
func TestLoadTranscriptByContent(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "reference", "h200-ref", "ref.transcript.txt"))
	if err != nil {
		t.Fatal(err)
	}
	dir := writeDir(t, map[string]string{"run.log": string(b)})
	c, err := Load(filepath.Join(dir, "run.log"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Format != FormatTranscript || c.Program == nil || len(c.Program.Copies) == 0 {
		t.Errorf("loaded format %s, program %v", c.Format, c.Program != nil)
	}
}

// TestLoadQdstrm checks that a raw .qdstrm stream, alone or in a folder, is
// named for what it is, with the importer to convert it, not read as a
// transcript.
func TestLoadQdstrm(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pinned.qdstrm")
	if err := os.WriteFile(p, []byte("QDSTRM\x00\x01 raw stream"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{p, dir} {
		_, err := Load(in, Options{})
		if err == nil {
			t.Fatalf("%s: loaded", in)
		}
		for _, want := range []string{p, "raw Nsight Systems stream (.qdstrm)", "QdstrmImporter -i FILE.qdstrm"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q lacks %q", in, err, want)
			}
		}
		if strings.Contains(err.Error(), "program output") {
			t.Errorf("%s: read as a transcript: %v", in, err)
		}
	}
}
