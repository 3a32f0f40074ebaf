package replay_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/check"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/timeline"
)

// Every shipped pair audited as `nsyscheck audit BEFORE AFTER` does it, its
// region times held against plain SQL over the same files: the times
// measured before and after against this package's SQL of each region's
// instances (sqlRegions), the times replayed and predicted against a
// replay of the timeline built from its own SQL reading of the export,
// with the audit's one cost rule and its way to pin. The audit reads the
// capture once through the capture readers; the same numbers from plain
// SQL say that one pass builds the same timeline.
func TestAuditRegionsAgainstPlainSQL(t *testing.T) {
	rates, err := check.AuditRates(check.AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "testdata", "captures")
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }
	for _, p := range pairs {
		out, err := check.Audit(context.Background(), filepath.Join(dir, p.before), filepath.Join(dir, p.after),
			check.AuditOptions{NoRule: true, Match: p.regions})
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		before, after := sqlRegions(t, capturePath(p.before)), sqlRegions(t, capturePath(p.after))
		tl := buildExport(t, capturePath(p.before), timeline.Options{})
		res, err := replay.Replay(context.Background(), tl, audit.ReplayOptions(tl, rates, out.Before.Replay.PinBy))
		if err != nil {
			t.Fatal(err)
		}
		replayed := map[string]replay.Region{}
		for _, r := range res.Regions {
			replayed[r.Name] = r
		}
		if len(out.Check.Regions) != len(before) {
			t.Errorf("%s: %d regions checked, plain SQL finds %d", p.name, len(out.Check.Regions), len(before))
		}
		for _, rc := range out.Check.Regions {
			n, med, span := instanceStats(before[rc.Name])
			na, meda, spana := instanceStats(after[rc.AfterName])
			r := replayed[rc.Name]
			if rc.Instances != n || !near(rc.MedianMs, med) || !near(rc.SpanMs, span) {
				t.Errorf("%s %s before: %d, %.6f, %.6f ms; plain SQL %d, %.6f, %.6f", p.name, rc.Name, rc.Instances, rc.MedianMs, rc.SpanMs, n, med, span)
			}
			if rc.AfterInstances != na || !near(rc.AfterMedianMs, meda) || !near(rc.AfterSpanMs, spana) {
				t.Errorf("%s %s after: %d, %.6f, %.6f ms; plain SQL %d, %.6f, %.6f", p.name, rc.AfterName, rc.AfterInstances,
					rc.AfterMedianMs, rc.AfterSpanMs, na, meda, spana)
			}
			for _, c := range [][2]float64{{rc.ReplayMedianMs, r.ReplayMedianMs}, {rc.ReplaySpanMs, r.ReplaySpanMs},
				{rc.PredictedMedianMs, r.PredictedMedianMs}, {rc.PredictedMedianLowMs, r.PredictedMedianLowMs},
				{rc.PredictedMedianHighMs, r.PredictedMedianHighMs}, {rc.PredictedSpanMs, r.PredictedSpanMs},
				{rc.PredictedSpanLowMs, r.PredictedSpanLowMs}, {rc.PredictedSpanHighMs, r.PredictedSpanHighMs}} {
				if !near(c[0], c[1]) {
					t.Errorf("%s %s: the audit replays and predicts %+v, the replay of the SQL timeline %+v", p.name, rc.Name, rc.Region.Region, r)
					break
				}
			}
		}
	}
}
