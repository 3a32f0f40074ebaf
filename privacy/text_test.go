package privacy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScanText: a credential in the lesson program's own file is found at
// its line, once however often it repeats, and a clean file reports
// nothing; a file that is not there is an error.
func TestScanText(t *testing.T) {
	dir := t.TempDir()
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	p := filepath.Join(dir, "pinned.results.json")
	body := "{\n  \"gpu\": \"NVIDIA H200\",\n  \"note\": \"" + token + "\",\n  \"again\": \"" + token + "\"\n}\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := ScanText(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 1 || r.Findings[0].Where != "pinned.results.json line 3" || strings.Contains(r.Findings[0].Masked, token) {
		t.Fatalf("findings %+v", r.Findings)
	}
	clean := filepath.Join(dir, "pinned.transcript.txt")
	if err := os.WriteFile(clean, []byte("Part 1: pageable vs pinned\n 64 MiB 24.7 GB/s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := ScanText(context.Background(), clean); err != nil || len(r.Findings) != 0 {
		t.Fatalf("clean file: %+v, %v", r, err)
	}
	if _, err := ScanText(context.Background(), filepath.Join(dir, "none.json")); err == nil {
		t.Fatal("a missing file scanned")
	}
}
