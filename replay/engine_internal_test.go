package replay

import (
	"context"
	"testing"

	"github.com/nsyscheck/nsyscheck/timeline"
	"github.com/nsyscheck/nsyscheck/timeline/timelinetest"
)

// The model's engine of each op, found by its stream and direction, is
// the timeline's.
func TestEngineOfMatchesTimeline(t *testing.T) {
	bl := timeline.NewBuilder(context.Background(), timeline.Options{})
	if err := timelinetest.Generate(bl.Handler(), timelinetest.ShapeOf(20_000)); err != nil {
		t.Fatal(err)
	}
	tl, err := bl.Finish()
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(tl, oneSize)
	withEngine := 0
	for j := range tl.Ops.Len() {
		want := int32(tl.EngineOf(int32(j)))
		if got := m.engineOf(int32(j)); got != want {
			t.Fatalf("op %d (%v on stream %d): engine %d, the timeline's %d", j, tl.Ops.Dir[j], tl.Ops.Stream[j], got, want)
		}
		if want >= 0 {
			withEngine++
		}
	}
	if withEngine == 0 || withEngine == tl.Ops.Len() {
		t.Errorf("%d of %d ops use a copy engine: the shape should have both kinds", withEngine, tl.Ops.Len())
	}
}
