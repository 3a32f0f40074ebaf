package nsysrule

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The rule's CSV saved as UTF-16 is named so: read as UTF-8, its columns
// were once listed as garbage, every other byte \x00.
func TestReadCSVUTF16(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pinned_cuda_memcpy_async.csv")
	if err := os.WriteFile(p, []byte("\xff\xfeS\x00t\x00a\x00r\x00t\x00\n\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadCSV(p)
	if err == nil || !strings.Contains(err.Error(), "the file is UTF-16LE text (with a byte-order mark), not UTF-8") ||
		!strings.Contains(err.Error(), "nsys stats --report cuda_memcpy_async --format csv") || strings.Contains(err.Error(), `\x00`) {
		t.Errorf("a UTF-16 rule CSV: %v", err)
	}
}
