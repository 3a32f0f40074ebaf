package runinfo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
)

// ReadStrict reads the shipped run folder's run.json; none is none; one
// saved as UTF-16, or one that is no JSON, is an error naming the file,
// not taken for none.
func TestReadStrict(t *testing.T) {
	const shipped = "../testdata/captures/h200-run"
	info, err := ReadStrict(shipped)
	if err != nil || info == nil || info.Status != "complete" {
		t.Fatalf("the shipped run folder: %+v, %v", info, err)
	}
	if info, err := ReadStrict(t.TempDir()); info != nil || err != nil {
		t.Errorf("a folder without run.json: %+v, %v", info, err)
	}
	b, err := os.ReadFile(filepath.Join(shipped, InfoFile))
	if err != nil {
		t.Fatal(err)
	}
	var u16 []byte
	for _, u := range append([]uint16{0xFEFF}, utf16.Encode([]rune(string(b)))...) {
		u16 = append(u16, byte(u), byte(u>>8))
	}
	for name, data := range map[string][]byte{"UTF-16LE": u16, "cut short": b[:len(b)/2]} {
		dir := t.TempDir()
		p := filepath.Join(dir, InfoFile)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadStrict(dir)
		var ie *inputerr.Error
		if !errors.As(err, &ie) || ie.Path != p || (name == "UTF-16LE" && !strings.Contains(ie.Problem, "UTF-16LE")) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
