package replay

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nsyscheck/nsyscheck/timeline"
	"github.com/nsyscheck/nsyscheck/timeline/timelinetest"
	"github.com/nsyscheck/nsyscheck/vocab"
	"gonum.org/v1/gonum/stat"
)

// The capture's pinned async calls' quantiles per direction and size
// class, per direction and over every direction are those of their calls'
// host times sorted, whether a coarser list holds more than one finer
// list's calls or just one (whose quantiles it takes).
func TestCaptureCosterCallQuantiles(t *testing.T) {
	small := Sizes{Of: func(b int64) int { return min(int(b>>20), 1) }, Name: func(c int) string { return []string{"small", "large"}[c] }}
	type copyOf struct {
		dir   vocab.CopyKind
		bytes int64
	}
	for _, tc := range []struct {
		name   string
		copies []copyOf
	}{
		{"one direction and class", []copyOf{{vocab.CopyHtoD, 4 << 10}}},
		{"two classes of one direction", []copyOf{{vocab.CopyHtoD, 4 << 10}, {vocab.CopyHtoD, 4 << 20}}},
		{"two directions", []copyOf{{vocab.CopyHtoD, 4 << 10}, {vocab.CopyDtoH, 4 << 10}, {vocab.CopyDtoH, 8 << 20}}},
	} {
		r := rand.New(rand.NewPCG(3, 4))
		var c timelinetest.Capture
		want := map[callKey][]float64{}
		at := int64(1_000_000)
		for i := range 60 {
			cp := tc.copies[i%len(tc.copies)]
			d := 1_000 + r.Int64N(9_000)
			corr := c.Call(1, "cudaMemcpyAsync", at, at+d)
			src, dst := vocab.MemPinned, vocab.MemDevice
			if cp.dir == vocab.CopyDtoH {
				src, dst = dst, src
			}
			c.Copy(corr, 7, cp.dir, src, dst, cp.bytes, at+d/2, at+d+5_000)
			at += d + 10_000
			dir := timeline.DirOf(cp.dir)
			for _, k := range []callKey{{dir, true, small.Of(cp.bytes)}, {dir, true, -1}, {timeline.DirNone, true, -1}} {
				want[k] = append(want[k], float64(d))
			}
		}
		tl, err := c.Build(context.Background(), timeline.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cc := NewCaptureCoster(tl, small)
		if got := len(cc.call) + len(cc.anyCall); got != len(want) {
			t.Errorf("%s: %d lists of calls, want %d", tc.name, got, len(want))
		}
		for k, v := range want {
			slices.Sort(v)
			q, ok := cc.call[k]
			if k.class < 0 {
				q, ok = cc.anyCall[k]
			}
			w := Bound{stat.Quantile(0.1, stat.Empirical, v, nil), stat.Quantile(0.5, stat.Empirical, v, nil), stat.Quantile(0.9, stat.Empirical, v, nil)}
			if !ok || q.q != w || q.n != len(v) {
				t.Errorf("%s: calls %+v: quantiles %+v of %d (%v), want %+v of %d", tc.name, k, q.q, q.n, ok, w, len(v))
			}
		}
	}
}
