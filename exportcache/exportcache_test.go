package exportcache

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
)

// FindNsys reports a bad override as an input error with its hint.
func TestFindNsysInputError(t *testing.T) {
	_, err := FindNsys(filepath.Join(t.TempDir(), "nope"), nil)
	if err == nil || !inputerr.Is(err) || !strings.Contains(err.Error(), "the nsys given cannot be run") {
		t.Errorf("bad override: %v", err)
	}
}
