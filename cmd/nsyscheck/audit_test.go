package main

import (
	"path/filepath"
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
)

// TestShareableAudit: a report's export cached in the user's cache folder is
// named as cache:..., never by the home folder's absolute path.
func TestShareableAudit(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	db := filepath.Join(cache, "nsyscheck", "exports", "app.nsyscheck.sqlite")
	au := &audit.Audit{Capture: "ro/app.nsys-rep", Files: []string{"ro/app.nsys-rep", db},
		NVIDIA: &audit.RuleComparison{Source: "nsys analyze -r cuda_memcpy_async:rows=-1 on " + db}}
	shareableAudit(au)
	want := "cache:" + filepath.Join("nsyscheck", "exports", "app.nsyscheck.sqlite")
	if au.Files[0] != "ro/app.nsys-rep" || au.Files[1] != want || au.NVIDIA.Source != "nsys analyze -r cuda_memcpy_async:rows=-1 on "+want {
		t.Errorf("files %v, rule source %q; want %s", au.Files, au.NVIDIA.Source, want)
	}
}
