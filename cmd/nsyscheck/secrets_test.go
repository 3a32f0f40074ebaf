package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plantedSecrets are credentials planted in the names a capture carries.
var plantedSecrets = []string{"Backup-Pass-771", "Run-Pass-552", "ghp_" + strings.Repeat("n4M3", 6), "AKIA" + strings.Repeat("T8", 8)}

// TestSecretsNeverPrinted plants credentials in a process's command line,
// the profiled program's command line, an NVTX range's text and the
// program's thread name, and checks that verify (every format), report
// (every file) and scrub (messages and the copy) show none of them.
func TestSecretsNeverPrinted(t *testing.T) {
	dir := t.TempDir()
	in := sqliteEdit(plantSecretsSQL)(t, dir)[0]
	t.Setenv("XDG_CACHE_HOME", t.TempDir())

	var all strings.Builder
	for _, format := range []string{"text", "json", "markdown"} {
		_, out, errOut := runMain(t, []string{"verify", "--format", format, in})
		all.WriteString(out + errOut)
	}
	if !strings.Contains(all.String(), "--password=") {
		t.Fatalf("verify does not warn about the planted command line:\n%s", all.String())
	}
	rdir := filepath.Join(t.TempDir(), "report")
	code, out, errOut := runMain(t, []string{"report", in, "-o", rdir})
	if code == exitError {
		t.Fatalf("report: %s", errOut)
	}
	all.WriteString(out + errOut)
	entries, err := os.ReadDir(rdir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b := readFile(t, filepath.Join(rdir, e.Name()))
		all.WriteString(string(b))
	}
	shared := filepath.Join(t.TempDir(), "shared.sqlite")
	code, out, errOut = runMain(t, []string{"scrub", in, "-o", shared})
	if code == exitError {
		t.Fatalf("scrub: %s", errOut)
	}
	all.WriteString(out + errOut)
	all.Write(readFile(t, shared))
	for _, s := range plantedSecrets {
		if strings.Contains(all.String(), s) {
			t.Errorf("%q appears in an output or the scrubbed copy", s)
		}
	}
}
