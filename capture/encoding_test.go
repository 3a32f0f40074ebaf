package capture

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
)

// utf16Of encodes s as UTF-16, little- or big-endian, with its
// byte-order mark or without, as a Windows editor or PowerShell's >
// redirect saves it.
func utf16Of(s string, bigEndian, bom bool) []byte {
	var b []byte
	units := utf16.Encode([]rune(s))
	if bom {
		units = append([]uint16{0xFEFF}, units...)
	}
	for _, u := range units {
		if bigEndian {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return b
}

// A CSV report, transcript or results file of the shipped capture saved as
// UTF-16 (either byte order, with its byte-order mark or without) is
// refused naming the file and its encoding, whether it is given alone, in
// its folder or beside the capture, not read as rows of garbage or as
// holding none; a UTF-8 byte-order mark still reads, the transcript's
// device line kept.
func TestUTF16InputsRefused(t *testing.T) {
	shipped := filepath.Join("..", "testdata", "captures", "h200-pinned")
	copyAll := func(t *testing.T, glob string) string {
		dir := t.TempDir()
		m, _ := filepath.Glob(filepath.Join(shipped, glob))
		for _, p := range m {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	reencode := func(t *testing.T, p string, bigEndian, bom bool) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, utf16Of(string(b), bigEndian, bom), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := func(t *testing.T, err error, path, enc string) {
		t.Helper()
		var ie *inputerr.Error
		if !errors.As(err, &ie) || ie.Path != path || !strings.HasPrefix(ie.Problem, "the file is "+enc+" text") || !strings.Contains(ie.Hint, "save it as UTF-8") {
			t.Errorf("got %v, want %s refused as %s", err, path, enc)
		}
	}
	for _, tc := range []struct {
		file           string
		bigEndian, bom bool
		enc            string
	}{
		{"pinned_cuda_api_trace.csv", false, true, "UTF-16LE"},
		{"pinned_cuda_gpu_trace.csv", true, false, "UTF-16BE"},
		{"pinned_nvtx_pushpop_trace.csv", false, false, "UTF-16LE"},
		{"pinned_cuda_api_sum.csv", true, true, "UTF-16BE"},
		{"pinned_nvtx_sum.csv", false, false, "UTF-16LE"},
		{"pinned_cuda_gpu_mem_time_sum.csv", false, true, "UTF-16LE"},
		{"pinned_cuda_gpu_mem_size_sum.csv", true, false, "UTF-16BE"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			dir := copyAll(t, "*.csv")
			p := filepath.Join(dir, tc.file)
			reencode(t, p, tc.bigEndian, tc.bom)
			_, err := LoadCSVDir(dir, Options{})
			want(t, err, p, tc.enc)
		})
	}
	for _, name := range []string{"pinned.transcript.txt", "pinned.results.json"} {
		t.Run(name, func(t *testing.T) {
			dir := copyAll(t, name)
			p := filepath.Join(dir, name)
			reencode(t, p, false, true)
			_, err := Load(p, Options{})
			want(t, err, p, "UTF-16LE")
			// Beside the export it would give its numbers to, it is
			// refused too, not set aside as another program's output.
			dir = copyAll(t, "pinned.sqlite")
			besides := filepath.Join(dir, name)
			b, _ := os.ReadFile(p)
			if err := os.WriteFile(besides, b, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = Load(filepath.Join(dir, "pinned.sqlite"), Options{})
			want(t, err, besides, "UTF-16LE")
		})
	}
	t.Run("a UTF-8 byte-order mark", func(t *testing.T) {
		dir := copyAll(t, "pinned.transcript.txt")
		p := filepath.Join(dir, "pinned.transcript.txt")
		b, _ := os.ReadFile(p)
		if err := os.WriteFile(p, append([]byte("\xEF\xBB\xBF"), b...), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(p, Options{})
		if err != nil {
			t.Fatalf("a transcript with a UTF-8 byte-order mark: %v", err)
		}
		if c.Meta.GPU != "NVIDIA H200" {
			t.Errorf("a transcript with a UTF-8 byte-order mark: GPU %q, want its device line's", c.Meta.GPU)
		}
	})
}
