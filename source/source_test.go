package source

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
)

func TestBase(t *testing.T) {
	for in, want := range map[string]string{
		"ref.sqlite": "ref", "pinned.nsyscheck.sqlite": "pinned", "ref_cuda_api_sum.csv": "ref",
		"x.nsys-rep": "x", "pinned.results.json": "pinned", "ref.transcript.txt": "ref",
	} {
		if got := baseName(in); got != want {
			t.Errorf("base(%q) = %q, want %q", in, got, want)
		}
	}
}

const captures = "../testdata/captures/"

// copyTo copies files into dir.
func copyTo(t *testing.T, dir string, files ...string) {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpenKinds: each kind of file is told by its content and name, held
// open, and given the siblings that may hold the program's numbers.
func TestOpenKinds(t *testing.T) {
	noNsys := Options{Nsys: filepath.Join(t.TempDir(), "no-nsys")}
	for _, c := range []struct {
		path string
		kind nsysdb.Kind
	}{
		{captures + "h200-pinned/pinned.sqlite", nsysdb.KindSQLite},
		{captures + "h200-pinned/pinned.results.json", nsysdb.KindJSON},
		{captures + "h200-pinned/pinned.transcript.txt", nsysdb.KindTranscript},
		{captures + "h200-pinned/pinned_cuda_gpu_trace.csv", nsysdb.KindCSV},
		{captures + "torch-lesson/torch-lesson.nsys-rep", nsysdb.KindNsysRep},
	} {
		s, err := Open(context.Background(), c.path, noNsys)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		if s.Kind != c.kind {
			t.Errorf("%s: kind %s, want %s", c.path, s.Kind, c.kind)
		}
		switch c.kind {
		case nsysdb.KindSQLite:
			if s.Export == nil || s.Export.DB == nil || len(s.Siblings) != 2 || !strings.HasSuffix(s.Siblings[0], "pinned.results.json") {
				t.Errorf("%s: %+v", c.path, s)
			}
		case nsysdb.KindCSV:
			if s.Dir != captures+"h200-pinned" || len(s.Reports) != 7 || s.Reports[nsysdb.ReportAPITrace] == "" {
				t.Errorf("%s: folder %s, reports %v", c.path, s.Dir, s.Reports)
			}
		case nsysdb.KindNsysRep:
			// The export beside the report, no nsys run.
			if s.Report == nil || s.Export == nil || s.Export.Own || !strings.HasSuffix(s.Export.Path, "torch-lesson.sqlite") || len(s.Notes) != 1 {
				t.Errorf("%s: report %+v, export %+v, notes %q", c.path, s.Report, s.Export, s.Notes)
			}
		default:
			if s.Program == nil || len(s.Siblings) != 0 {
				t.Errorf("%s: %+v", c.path, s)
			}
		}
		if err := s.Close(); err != nil {
			t.Errorf("%s: close: %v", c.path, err)
		}
	}
}

// TestOpenFolder: a folder is read as its best capture, the plain SQLite
// export before a report, CSV reports and the program's files, with the
// numbers of the same base name as siblings first.
func TestOpenFolder(t *testing.T) {
	dir := t.TempDir()
	copyTo(t, dir, captures+"h200-pinned/pinned.sqlite", captures+"h200-pinned/pinned.nsys-rep", captures+"h200-pinned/pinned_cuda_api_trace.csv",
		captures+"h200-pinned/pinned.results.json", captures+"h200-pinned/pinned.transcript.txt")
	s, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := []string{"pinned.results.json", "pinned.transcript.txt", "pinned.results.json", "pinned.transcript.txt", "results.json", "transcript.txt"}
	if s.Kind != nsysdb.KindSQLite || s.Path != filepath.Join(dir, "pinned.sqlite") || len(s.Siblings) != len(want) {
		t.Fatalf("kind %s, path %s, siblings %v", s.Kind, s.Path, s.Siblings)
	}
	for i, w := range want {
		if filepath.Base(s.Siblings[i]) != w {
			t.Errorf("sibling %d is %s, want %s", i, s.Siblings[i], w)
		}
	}
	// Without the exports the CSV reports come before the program's files.
	os.Remove(filepath.Join(dir, "pinned.sqlite"))
	os.Remove(filepath.Join(dir, "pinned.nsys-rep"))
	if s, err = Open(context.Background(), dir, Options{}); err != nil || s.Kind != nsysdb.KindCSV || s.Path != dir {
		t.Errorf("CSV folder: %+v, %v", s, err)
	}
	s.Close()
}

// TestOpenRefuses: what no reader reads is refused once, with the error
// that says what was looked for, and a FIFO without waiting for a writer.
func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	odd := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(odd, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "x.sqlite")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	for p, want := range map[string]string{odd: "not an input nsyscheck reads: looked for", fifo: "FIFO",
		t.TempDir(): "no capture found", filepath.Join(dir, "nope"): "cannot read the input"} {
		s, err := Open(context.Background(), p, Options{})
		if err == nil || !inputerr.Is(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, err %v; want %q", p, s, err, want)
		}
	}
}

// TestOpenFile: a file is told by its first bytes (a .nsys-rep also by
// its name) and never exported.
func TestOpenFile(t *testing.T) {
	for p, want := range map[string]nsysdb.Kind{
		captures + "h200-pinned/pinned.sqlite":         nsysdb.KindSQLite,
		captures + "h200-pinned/pinned.nsys-rep":       nsysdb.KindNsysRep,
		captures + "h200-pinned/pinned.results.json":   nsysdb.KindUnknown,
		captures + "h200-pinned/pinned.transcript.txt": nsysdb.KindUnknown,
	} {
		f, err := OpenFile(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if f.Kind != want || (want == nsysdb.KindSQLite) != (f.DB != nil) {
			t.Errorf("%s: kind %s, database %v", p, f.Kind, f.DB != nil)
		}
		head := make([]byte, 4)
		if n, err := f.ReadAt(head, 0); n != 4 || err != nil {
			t.Errorf("%s: read %d bytes through the handle: %v", p, n, err)
		}
		f.Close()
	}
}

// TestOpenFolderOfCaptures: a folder holding no capture itself but
// folders of captures names them, so that the user can pick.
func TestOpenFolderOfCaptures(t *testing.T) {
	dir := t.TempDir()
	for _, sub := range []string{"b", "a", "empty"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a/x.sqlite", "b/x.transcript.txt", "empty/notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Open(context.Background(), dir, Options{})
	want := "holds no capture itself, but 2 folders in it do: a, b (give one or several of them, as in " + filepath.Join(dir, "a") + ")"
	if err == nil || !inputerr.Is(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("a folder of capture folders: %v; want %q", err, want)
	}
}
