package replay_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/nsyscheck/nsyscheck/internal/fixture"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/timeline"
)

// The regions measured through the index of their runs of calls are the
// regions measured by walking each instance's calls, to the bit, on every
// shipped capture (as captured, and pinned by the capture's own costs) and
// on captures whose ranges nest around their calls, where the audit takes
// the index by itself.
func TestRunIndexGivesTheWalksNumbers(t *testing.T) {
	same := func(t *testing.T, name string, tl *timeline.Timeline) {
		t.Helper()
		opts := replay.Options{Sizes: auditSizes}
		walked, err := replay.ReplayRuns(context.Background(), tl, opts, false)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		indexed, err := replay.ReplayRuns(context.Background(), tl, opts, true)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(walked.Regions) == 0 {
			t.Fatalf("%s: no regions", name)
		}
		for i := range walked.Regions {
			if !reflect.DeepEqual(walked.Regions[i], indexed.Regions[i]) {
				t.Errorf("%s: region %s walked\n%+v\nindexed\n%+v", name, walked.Regions[i].Name, walked.Regions[i], indexed.Regions[i])
			}
		}
	}
	for _, path := range shipped(t) {
		same(t, path, sharedExport(t, path, timeline.Options{}))
	}
	// Ranges nested around the program's calls (from before its first
	// call to after its last: indexed by the audit), and nested ones that
	// each hold a stretch of a few dozen calls (walked), on the thread of
	// the NVTX ranges already there.
	src := capturePath("pipeline-pageable")
	for _, c := range []struct {
		name, insert string
		indexed      bool
	}{
		{"around", `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < 1999)
			INSERT INTO NVTX_EVENTS(start, end, eventType, rangeId, text, globalTid, domainId)
			SELECT (SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME) - 2000 + i, (SELECT max(end) FROM CUPTI_ACTIVITY_KIND_RUNTIME) + 2000 - i,
				59, 1000000 + i, 'nest', (SELECT globalTid FROM NVTX_EVENTS LIMIT 1), 0 FROM n`, true},
		{"stretches", `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < 1999),
			s(lo, hi) AS (SELECT min(start), max(end) FROM CUPTI_ACTIVITY_KIND_RUNTIME)
			INSERT INTO NVTX_EVENTS(start, end, eventType, rangeId, text, globalTid, domainId)
			SELECT lo + (hi - lo) * (i % 40) / 40 + i, lo + (hi - lo) * (i % 40 + 3) / 40 - i, 59, 1000000 + i,
				'stretch' || (i % 3), (SELECT globalTid FROM NVTX_EVENTS LIMIT 1), 0 FROM n, s`, false},
	} {
		path := fixture.SQLite(t, src, c.insert)
		tl := buildExport(t, path, timeline.Options{})
		if got := replay.RunsIndexed(tl); got != c.indexed {
			t.Errorf("%s: runs indexed %v, want %v", c.name, got, c.indexed)
		}
		same(t, filepath.Base(path)+" "+c.name, tl)
	}
}

// BenchmarkNestedRegions replays a capture whose 20,000 ranges nest around
// all of its calls: with the runs indexed, an instance costs a few
// searches, not a walk over every call (before the index: 433 calls a
// range, 20,000 ranges, four schedules).
func BenchmarkNestedRegions(b *testing.B) {
	path := fixture.SQLite(b, capturePath("pipeline-pageable"),
		`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < 19999)
			INSERT INTO NVTX_EVENTS(start, end, eventType, rangeId, text, globalTid, domainId)
			SELECT (SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME) - 20000 + i, (SELECT max(end) FROM CUPTI_ACTIVITY_KIND_RUNTIME) + 20000 - i,
				59, 1000000 + i, 'nest', (SELECT globalTid FROM NVTX_EVENTS LIMIT 1), 0 FROM n`)
	tl := buildExport(b, path, timeline.Options{})
	for _, indexed := range []bool{false, true} {
		b.Run(map[bool]string{false: "walked", true: "indexed"}[indexed], func(b *testing.B) {
			for b.Loop() {
				if _, err := replay.ReplayRuns(context.Background(), tl, replay.Options{Sizes: auditSizes}, indexed); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(tl.Ranges)), "ns/range")
		})
	}
}
