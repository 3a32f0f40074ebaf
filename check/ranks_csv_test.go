package check

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// csvRank copies the shipped capture name's CSV reports into dir/report.N,
// named as rank N's.
func csvRank(t *testing.T, dir, name string, n int) string {
	t.Helper()
	src := filepath.Join("..", "testdata", "captures", name)
	m, err := filepath.Glob(filepath.Join(src, name+"_*.csv"))
	if err != nil || len(m) == 0 {
		t.Fatalf("%s: no CSV reports: %v", src, err)
	}
	rank := "report." + string(rune('0'+n))
	out := filepath.Join(dir, rank)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range m {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, rank+strings.TrimPrefix(filepath.Base(p), name)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// Folders of CSV reports name no session start: two ranks whose API
// traces are one, byte for byte (a rank's reports copied as another's),
// are refused as one capture, naming both; two ranks of other traces are
// a job.
func TestRanksCSVOneTraceTwice(t *testing.T) {
	dir := t.TempDir()
	a, b := csvRank(t, dir, "pipeline-pageable", 0), csvRank(t, dir, "pipeline-pageable", 1)
	_, _, err := AuditRanks(context.Background(), []string{a, b}, RanksOptions{AuditOptions: AuditOptions{NoRule: true}})
	if err == nil || !strings.Contains(err.Error(), "ranks 0 and 1 are one capture") || !strings.Contains(err.Error(), "the same API trace, byte for byte") {
		t.Errorf("one trace as two ranks: %v", err)
	}
	other := t.TempDir()
	a, b = csvRank(t, other, "pipeline-pageable", 0), csvRank(t, other, "pipeline-pinned", 1)
	s, _, err := AuditRanks(context.Background(), []string{a, b}, RanksOptions{AuditOptions: AuditOptions{NoRule: true}})
	if err != nil || len(s.Rows) != 2 {
		t.Errorf("two traces: %v, %+v", err, s)
	}
}
