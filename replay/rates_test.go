package replay_test

import (
	"math"
	"testing"

	"github.com/nsyscheck/nsyscheck/audit"
	"github.com/nsyscheck/nsyscheck/check"
	"github.com/nsyscheck/nsyscheck/replay"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// runRates gathers a run folder's pinned copy rates, pinned async call
// time and link as `audit --rates DIR` does (check.AuditRates), and feeds
// them to replay.NewRateCoster as the audit is to.
func runRates(t testing.TB, dir string) *replay.RateCoster {
	t.Helper()
	r, err := check.AuditRates(check.AuditOptions{RatesDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return costerOf(r)
}

// costerOf is the replay's coster of the audit's rates.
func costerOf(r *audit.Rates) *replay.RateCoster {
	points := make([]replay.RatePoint, len(r.Copies))
	for i, p := range r.Copies {
		points[i] = replay.RatePoint{Direction: p.Direction, Bytes: p.Bytes, GBps: p.GBps}
	}
	return replay.NewRateCoster(points, r.Source, r.AsyncCallNs, r.LinkGBps, audit.FromLink)
}

// The rate of a copy is the nearest timed size's, bounded by the timed
// sizes within 4x of the copy's own; a direction without timed sizes takes
// the link, bounded by half of it; an async call's time is bounded by half
// to twice the run's.
func TestRateCoster(t *testing.T) {
	points := []replay.RatePoint{
		{Direction: vocab.CopyHtoD, Bytes: 1 << 20, GBps: 30},
		{Direction: vocab.CopyHtoD, Bytes: 4 << 20, GBps: 45},
		{Direction: vocab.CopyHtoD, Bytes: 16 << 20, GBps: 50},
		{Direction: vocab.CopyHtoD, Bytes: 64 << 20, GBps: 55},
	}
	rc := replay.NewRateCoster(points, "run-dir", 8000, 60, "PCIe")
	for _, c := range []struct {
		bytes int64
		want  replay.Bound
	}{
		{4 << 20, replay.Bound{Low: 30, Mid: 45, High: 50}},  // 1 MiB and 16 MiB lie within 4x
		{5 << 20, replay.Bound{Low: 45, Mid: 45, High: 50}},  // 1 MiB lies 5x away
		{40 << 20, replay.Bound{Low: 50, Mid: 55, High: 55}}, // nearest 64 MiB by ratio
		{1 << 30, replay.Bound{Low: 55, Mid: 55, High: 55}},  // none within 4x: the nearest, 64 MiB, alone
	} {
		got, ok := rc.PinnedRate(vocab.CopyHtoD, c.bytes)
		if !ok || got != c.want {
			t.Errorf("%d bytes: rate %+v (%v), want %+v", c.bytes, got, ok, c.want)
		}
	}
	cost, ok := rc.Pinned(vocab.CopyHtoD, 4<<20, true)
	b := float64(4 << 20)
	if !ok || cost.GPUSource != replay.SourceRun || cost.GPUFrom != "run-dir" || math.Abs(cost.GPUNs.Mid-b/45) > 1e-9 ||
		math.Abs(cost.GPUNs.Low-b/50) > 1e-9 || math.Abs(cost.GPUNs.High-b/30) > 1e-9 {
		t.Errorf("HtoD 4 MiB: %+v", cost)
	}
	if cost.CallNs != (replay.Bound{Low: 4000, Mid: 8000, High: 16000}) || cost.CallSource != replay.SourceRun {
		t.Errorf("async call: %+v", cost)
	}
	cost, _ = rc.Pinned(vocab.CopyDtoH, 6e9, false)
	if cost.GPUSource != replay.SourceLink || cost.GPUFrom != "PCIe" || cost.GPUNs != (replay.Bound{Low: 1e8, Mid: 1e8, High: 2e8}) ||
		cost.CallNs.Mid != 8000 {
		t.Errorf("DtoH by the link, blocking: %+v", cost)
	}
	if _, ok := replay.NewRateCoster(nil, "", 0, 0, "").Pinned(vocab.CopyHtoD, 1<<20, true); ok {
		t.Error("a coster without rates costs a copy")
	}
}
