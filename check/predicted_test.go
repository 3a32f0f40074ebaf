package check

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/report"
)

// csvFolder copies the CSV reports of a shipped capture into a folder of
// their own, which the audit reads as reports.
func csvFolder(t *testing.T, capture string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), capture)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("..", "testdata", "captures", capture, "*.csv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no CSV reports (%v)", capture, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Where the what-if re-costed no copy, no region is predicted: the
// prediction's fields are zero and absent from the JSON, not the time as
// measured.
func TestNotPredicted(t *testing.T) {
	opts := AuditOptions{NoRule: true}
	out, err := Audit(context.Background(), filepath.Join("..", "testdata", "captures", "graph-whole"), "", opts)
	if err != nil {
		t.Fatal(err)
	}
	au := out.Before
	if au.Replay.Recosted != 0 || au.Replay.Uncosted != 10 {
		t.Fatalf("replay %+v", au.Replay)
	}
	for _, r := range au.Regions {
		if r.NotPredicted == nil || r.NotPredicted.Uncosted != 10 || r.PredictedMedianMs != 0 || r.PredictedSpanHighMs != 0 {
			t.Errorf("region %s: %+v", r.Name, r)
		}
	}
	var b bytes.Buffer
	if err := report.WriteJSON(&b, report.AuditEnvelope(out, "test")); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); strings.Contains(s, `"predictedMedianMs"`) || !strings.Contains(s, `"notPredicted": {`) {
		t.Errorf("the JSON holds a prediction, or no notPredicted")
	}
	// A shipped capture with costs is predicted.
	out, err = Audit(context.Background(), filepath.Join("..", "testdata", "captures", "pipeline-pageable"), "", opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Before.Regions {
		if r.NotPredicted != nil || r.PredictedMedianMs <= 0 {
			t.Errorf("pipeline-pageable region %s: %+v", r.Name, r)
		}
	}
}

// The CSV reports of a pair and their SQLite exports give one verdict, or
// the reports' check says it is unavailable and why: a folder of reports
// ties no kernel to its launch, and a replay blind to the compute predicts
// nothing (with or without a run folder's rates).
func TestCSVCheckAgreesOrSaysWhy(t *testing.T) {
	dir := filepath.Join("..", "testdata", "captures")
	for _, rates := range []string{"", filepath.Join(dir, "h200-run")} {
		opts := AuditOptions{NoRule: true, RatesDir: rates}
		db, err := Audit(context.Background(), filepath.Join(dir, "pipeline-pageable"), filepath.Join(dir, "pipeline-pinned"), opts)
		if err != nil {
			t.Fatal(err)
		}
		if db.Check.Verdict != audit.Held {
			t.Errorf("rates %q: SQLite: %s", rates, db.Check.Verdict)
		}
		csv, err := Audit(context.Background(), csvFolder(t, "pipeline-pageable"), csvFolder(t, "pipeline-pinned"), opts)
		if err != nil {
			t.Fatal(err)
		}
		c := csv.Check
		if c.Verdict == db.Check.Verdict {
			continue
		}
		if c.Verdict != audit.Unavailable {
			t.Errorf("rates %q: CSV %s, SQLite %s", rates, c.Verdict, db.Check.Verdict)
		}
		for _, r := range c.Regions {
			if r.Judged && (r.Why != audit.WhyNoPredict || r.NotPredicted == nil || r.NotPredicted.Launches == 0) {
				t.Errorf("rates %q: CSV region %s: %s, %+v", rates, r.Name, r.Why, r.NotPredicted)
			}
		}
	}
}
