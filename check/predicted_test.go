package check

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/report"
	"github.com/nsyscheck/nsyscheck/timeline"
	"github.com/nsyscheck/nsyscheck/vocab"
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

// The CSV reports of every shipped pair and their SQLite exports give one
// check: each region the SQLite check judges is judged from the reports
// too, with its prediction within 1% (the reports print bytes rounded,
// and hold no synchronisation record: the replay assumes the waits, and
// says so) and the same verdict. Where the reports cannot tell how the
// streams were made (no stream list: the legacy default stream's order
// unknown), the prediction may lie up to 10% apart, and a region may be
// too wide to decide, its check saying so, but never the other verdict.
// With and without a run folder's rates.
func TestCSVPairsAgree(t *testing.T) {
	dir := filepath.Join("..", "testdata", "captures")
	for _, rates := range []string{"", filepath.Join(dir, "h200-run")} {
		for _, p := range verdictPairs {
			name := fmt.Sprintf("%s → %s, rates %q", p.before, p.after, rates)
			opts := AuditOptions{NoRule: true, RatesDir: rates, Match: p.match}
			db, err := Audit(context.Background(), filepath.Join(dir, p.before), filepath.Join(dir, p.after), opts)
			if err != nil {
				t.Fatal(err)
			}
			csv, err := Audit(context.Background(), csvFolder(t, p.before), csvFolder(t, p.after), opts)
			if err != nil {
				t.Fatalf("%s: the CSV reports: %v", name, err)
			}
			kindsUnknown := slices.ContainsFunc(csv.Before.Replay.Assumptions, func(a timeline.Assumption) bool {
				return a.Kind == timeline.AssumeStreamKindsUnknown
			})
			for _, r := range db.Check.Regions {
				if !r.Judged {
					continue
				}
				k := slices.IndexFunc(csv.Check.Regions, func(c audit.RegionCheck) bool { return c.Name == r.Name })
				if k < 0 || !csv.Check.Regions[k].Judged {
					t.Errorf("%s: region %s judged from the export, not from the reports", name, r.Name)
					continue
				}
				c := &csv.Check.Regions[k]
				if c.Verdict == r.Verdict {
					want, _, _ := r.Predicted()
					got, _, _ := c.Predicted()
					if d := math.Abs(got/want - 1); d > 0.01 && !(kindsUnknown && d < 0.10) {
						t.Errorf("%s: region %s predicted %.4g ms from the reports, %.4g from the export", name, r.Name, got, want)
					}
					continue
				}
				if !kindsUnknown || c.Why != audit.WhyTooWide || c.Verdict != vocab.Unavailable {
					t.Errorf("%s: region %s %s (%s) from the reports, %s from the export", name, r.Name, c.Verdict, c.Why, r.Verdict)
				}
			}
		}
	}
}

// A folder of reports lists no processes, so a DataLoader's workers
// (which make no CUDA call) cannot be seen in it: the audit of one says
// so where it pins as PyTorch does without them, and names --pin-by
// pin-thread, which predicts the steps as the export does.
func TestCSVDataLoaderUnseen(t *testing.T) {
	dir := filepath.Join("..", "testdata", "captures")
	for _, pin := range []string{"", "pin-thread"} {
		csv, err := Audit(context.Background(), csvFolder(t, "train-pageable"), "", AuditOptions{NoRule: true, PinBy: pin})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := report.AuditText(&b, csv, report.TextOptions{Width: 10000}); err != nil {
			t.Fatal(err)
		}
		said := strings.Contains(b.String(), "CSV reports list no processes, so a DataLoader's workers cannot be seen: if its batches come from one, pass --pin-by pin-thread")
		if said != (pin == "") {
			t.Errorf("--pin-by %q: the unseen workers said %v:\n%s", pin, said, b.String())
		}
		if pin == "" {
			continue
		}
		db, err := Audit(context.Background(), filepath.Join(dir, "train-pageable"), "", AuditOptions{NoRule: true})
		if err != nil {
			t.Fatal(err)
		}
		want, _, _ := db.Before.Region("step").Predicted()
		got, _, _ := csv.Before.Region("step").Predicted()
		if math.Abs(got/want-1) > 0.01 {
			t.Errorf("step predicted %.4g ms from the reports with --pin-by pin-thread, %.4g from the export", got, want)
		}
	}
}
