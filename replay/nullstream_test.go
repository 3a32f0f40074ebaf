package replay_test

import (
	"slices"
	"testing"

	"github.com/nsyscheck/nsyscheck/timeline"
)

// The one shipped capture with work on a blocking stream beside the NULL
// stream (other-counts: 3 copies on stream 13 among stream 7's copies and
// kernels): the order the timeline takes from the legacy default stream,
// each op against the other stream's last op launched before it (once per
// change), is the one plain SQL gives; and the capture honours it, each op
// starting after the op it is ordered after ended.
func TestNullStreamOrderOnARealCapture(t *testing.T) {
	path := capturePath("other-counts")
	tl := sharedExport(t, path, timeline.Options{})
	type edge struct{ op, on int64 }
	var got []edge
	for _, w := range tl.StreamWaits {
		if w.Implicit {
			got = append(got, edge{tl.Ops.Corr[w.Op], tl.Ops.Corr[w.On]})
			if tl.Ops.Start[w.Op] < tl.Ops.End[w.On] {
				t.Errorf("op of correlation id %d started at %d, before the op it is ordered after (%d) ended at %d",
					tl.Ops.Corr[w.Op], tl.Ops.Start[w.Op], tl.Ops.Corr[w.On], tl.Ops.End[w.On])
			}
		}
	}
	db := openExport(t, path)
	rows, err := db.Query(`
		WITH ops AS (
			SELECT correlationId corr, streamId stream FROM CUPTI_ACTIVITY_KIND_MEMCPY
			UNION ALL SELECT correlationId, streamId FROM CUPTI_ACTIVITY_KIND_KERNEL
			UNION ALL SELECT correlationId, streamId FROM CUPTI_ACTIVITY_KIND_MEMSET),
		launched AS (
			SELECT o.corr, o.stream, r.start launch, s.flag FROM ops o
			JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = o.corr
			JOIN TARGET_INFO_CUDA_STREAM s ON s.streamId = o.stream
			JOIN ENUM_CUPTI_STREAM_TYPE e ON e.id = s.flag
			WHERE e.name IN ('CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL', 'CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT')),
		prior AS (
			SELECT a.corr, a.launch, (SELECT b.corr FROM launched b WHERE b.flag != a.flag AND b.launch < a.launch
				ORDER BY b.launch DESC LIMIT 1) onCorr, a.stream FROM launched a)
		SELECT corr, onCorr FROM (
			SELECT corr, onCorr, lag(onCorr) OVER (PARTITION BY stream ORDER BY launch) prev FROM prior)
		WHERE onCorr IS NOT NULL AND onCorr IS NOT prev
		ORDER BY corr`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var want []edge
	for rows.Next() {
		var e edge
		if err := rows.Scan(&e.op, &e.on); err != nil {
			t.Fatal(err)
		}
		want = append(want, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b edge) int { return int(a.op - b.op) })
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("the NULL stream's order: %v, want %v (plain SQL)", got, want)
	}
	t.Logf("%d orders between the NULL stream and stream 13", len(got))
}
