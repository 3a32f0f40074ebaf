package privacy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A scrub's output that is a link to nothing is named as such, not as a
// file that exists.
func TestExistsErrorDanglingLink(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "shared.sqlite")
	if err := os.Symlink(filepath.Join(dir, "gone.sqlite"), link); err != nil {
		t.Fatal(err)
	}
	err := existsError(link)
	if !strings.Contains(err.Error(), "the output is a link to "+filepath.Join(dir, "gone.sqlite")+", which does not exist") ||
		!strings.Contains(err.Error(), "--force to replace the link itself") {
		t.Errorf("a link to nothing: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file.sqlite"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := existsError(filepath.Join(dir, "file.sqlite")); !strings.Contains(err.Error(), "the output file already exists") {
		t.Errorf("a file: %v", err)
	}
}
