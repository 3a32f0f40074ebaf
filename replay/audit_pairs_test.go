package replay_test

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/check"
	"github.com/nsyscheck/nsyscheck/framework"
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
		tl := sharedExport(t, capturePath(p.before), timeline.Options{})
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
		loadBefore, loadAfter := sqlLoading(t, capturePath(p.before)), sqlLoading(t, capturePath(p.after))
		for _, rc := range out.Check.Regions {
			if rc.Name != replay.CaptureRegion {
				lb, la := loadingIn(loadBefore[rc.Name], rc.Measure), loadingIn(loadAfter[rc.AfterName], rc.Measure)
				if !near(rc.LoadingMs, lb) || !near(rc.AfterLoadingMs, la) {
					t.Errorf("%s %s: loading device code held %.6f ms before and %.6f after; plain SQL %.6f and %.6f",
						p.name, rc.Name, rc.LoadingMs, rc.AfterLoadingMs, lb, la)
				}
			}
			// The DataLoader pairs' epochs hold their first step, whose
			// modules loaded in 437.9 ms before and 172.1 ms after (380.3
			// and 187.8 ms with 128-image batches): the only regions of the
			// shipped pairs the start-up decides.
			if startUp := (p.name == "train" || p.name == "train128") && rc.Name == "epoch"; startUp != (rc.Why == audit.WhyStartUp) {
				t.Errorf("%s %s: judged %s (%s), loading %.1f ms before and %.1f after", p.name, rc.Name, rc.Verdict, rc.Why,
					rc.LoadingMs, rc.AfterLoadingMs)
			} else if startUp && rc.Verdict != audit.Unavailable {
				t.Errorf("%s %s: %s for a region its start-up decides", p.name, rc.Name, rc.Verdict)
			}
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

// sqlLoading is, per NVTX push/pop range name, the host time in ms that
// calls loading device code (cuModuleLoad*, cuLibraryLoad*,
// cudaLibraryLoad*) of the range's process held, per instance, counting
// the calls that began inside it: plain SQL over the export.
func sqlLoading(t *testing.T, path string) map[string][]float64 {
	t.Helper()
	db := openExport(t, path)
	if table(t, db, "NVTX_EVENTS") == "" || table(t, db, "CUPTI_ACTIVITY_KIND_RUNTIME") == "" {
		return nil
	}
	rows, err := db.Query(`SELECT coalesce(n.text, s.value),
		coalesce((SELECT sum(r."end" - r.start) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds a ON a.id = r.nameId
			WHERE ` + notBacktrace + ` AND (r.globalTid >> 24) & 16777215 = (n.globalTid >> 24) & 16777215
			AND r.start BETWEEN n.start AND n."end"
			AND (a.value LIKE 'cuModuleLoad%' OR a.value LIKE 'cuLibraryLoad%' OR a.value LIKE 'cudaLibraryLoad%')), 0)
		FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId
		WHERE n.eventType = (SELECT id FROM ENUM_NSYS_EVENT_TYPE WHERE name = 'NvtxPushPopRange') AND n."end" IS NOT NULL`)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer rows.Close()
	out := map[string][]float64{}
	for rows.Next() {
		var name string
		var ns int64
		if err := rows.Scan(&name, &ns); err != nil {
			t.Fatal(err)
		}
		out[name] = append(out[name], float64(ns)/1e6)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// loadingIn is the loading of a region's instances in its measure: the
// median instance's, or their sum for the span.
func loadingIn(v []float64, m audit.Measure) float64 {
	if len(v) == 0 {
		return 0
	}
	if m == audit.MeasureSpan {
		var sum float64
		for _, x := range v {
			sum += x
		}
		return sum
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 0 {
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return v[len(v)/2]
}

// The way to pin each shipped capture after a fix shows, from a timeline
// built by plain SQL over its export (audit.PinShownBy): the DataLoader's
// pin thread, the prefetch program's tensors pinned before its loop, and
// its batches pinned again every step, with 32 MiB batches (whose captures
// the allocation rule was drawn from) and 48 MiB ones (which it was not);
// and, read as though they were
// PyTorch's, the captures of the programs that allocate their pinned
// buffers once before their loops (cudaMallocHost, cuMemHostAlloc,
// cupyx.empty_pinned), which the allocation rule, drawn from the prefetch
// program, must read as pinned once.
func TestWayToPinShownByPlainSQL(t *testing.T) {
	for _, c := range []struct {
		after string
		want  audit.PinClue
	}{
		{"train-pinned", audit.ClueThread},
		{"train128-pinned", audit.ClueThread},
		{"torch-prefetch-pinned", audit.CluePinnedFirst},
		{"torch-prefetch-pineach", audit.CluePinnedAmong},
		{"torch-prefetch48-pinned", audit.CluePinnedFirst},
		{"torch-prefetch48-pineach", audit.CluePinnedAmong},
		{"pipeline-pinned", audit.CluePinnedFirst},
		{"driver-pinned", audit.CluePinnedFirst},
		{"cupy-pinned", audit.CluePinnedFirst},
	} {
		tl := sharedExport(t, capturePath(c.after), timeline.Options{})
		got, ok := audit.PinShownBy(tl, framework.Detection{Framework: framework.PyTorch, Python: true})
		if !ok || got.Clue != c.want {
			t.Errorf("%s: shows %+v (%v), want %s", c.after, got, ok, c.want)
		}
		t.Logf("%s: %s, %d allocations, %d ns, %d ns among the copies", c.after, got.Clue, got.Allocs, got.AllocNs, got.AmongNs)
	}
}
