package sqlitefile

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const pinned = "../../testdata/captures/h200-pinned/pinned.sqlite"

func TestReadHeader(t *testing.T) {
	b, err := os.ReadFile(pinned)
	if err != nil {
		t.Fatal(err)
	}
	h, err := ReadHeader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if h.PageSize < 512 || h.Pages*h.PageSize != int64(len(b)) {
		t.Errorf("header %+v for a file of %d bytes", h, len(b))
	}
	if _, err := ReadHeader(bytes.NewReader([]byte("NVIDIA Tegra Profiler Report"))); err == nil {
		t.Error("a report's bytes read as an SQLite header")
	}
}

// TestCheck: a complete file passes; the cut and foreign ones are named
// for what they are.
func TestCheck(t *testing.T) {
	b, err := os.ReadFile(pinned)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"whole":  {b, ""},
		"empty":  {nil, "the file is empty"},
		"zeros":  {make([]byte, 4096), "only zero bytes"},
		"short":  {b[:10], "truncated: it holds only 10 bytes"},
		"header": {b[:100], "its header says"},
		"report": {[]byte("NVIDIA Tegra Profiler Report...."), "an Nsight Systems report (.nsys-rep)"},
		"text":   {[]byte("a,b\n1,2\n"), "does not start with the SQLite header"},
	} {
		err := Check(name, bytes.NewReader(c.data), int64(len(c.data)))
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", name, err, c.want)
		}
	}
	if err := CheckPath(t.TempDir()); err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("a folder: %v", err)
	}
}

// TestCopySwept: a database with a -wal is read through a private copy that
// is removed once done, and the copy a killed run left in the temporary
// folder is removed by the next run that makes one.
func TestCopySwept(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip(err)
	}
	left := filepath.Join(os.TempDir(), copyPrefix+strconv.Itoa(gone.Process.Pid)+"-1")
	if err := os.MkdirAll(left, 0o700); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "x.sqlite")
	b, err := os.ReadFile(pinned)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p+"-wal", []byte("not a valid log, ignored by SQLite"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	db, cleanup, err := Open(p, f)
	if err != nil {
		t.Fatal(err)
	}
	if err := Integrity(context.Background(), db, p); err != nil {
		t.Errorf("the committed state fails the check: %v", err)
	}
	db.Close()
	cleanup()
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the leftover copy %s is still there: %v", left, err)
	}
	if entries, _ := os.ReadDir(os.TempDir()); len(entries) != 0 {
		t.Errorf("the temporary folder holds %d entries after the read", len(entries))
	}
	if got := Sidecars(p); len(got) != 1 || got[0] != p+"-wal" {
		t.Errorf("sidecars %v", got)
	}
}
