package replay_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/timeline"
	"github.com/nsyscheck/nsyscheck/timeline/timelinetest"
)

// BenchmarkReplay replays a synthetic training loop of about a million
// records as captured and three times pinned (low, middle and high costs),
// and measures its regions: what Replay does for one capture.
func BenchmarkReplay(b *testing.B) {
	bl := timeline.NewBuilder(context.Background(), timeline.Options{})
	if err := timelinetest.Generate(bl.Handler(), timelinetest.ShapeOf(1_000_000)); err != nil {
		b.Fatal(err)
	}
	tl, err := bl.Finish()
	if err != nil {
		b.Fatal(err)
	}
	coster := fixed{call: 5_000, gpu: 20_000}
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	var res *replay.Result
	for b.Loop() {
		if res, err = replay.Replay(context.Background(), tl, replay.Options{Coster: coster}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if res.Recosted == 0 || res.Forced != 0 {
		b.Fatalf("re-costed %d copies, forced %d dependencies", res.Recosted, res.Forced)
	}
	b.ReportMetric(float64(tl.Calls.Len()+tl.Ops.Len()), "calls+ops")
}
