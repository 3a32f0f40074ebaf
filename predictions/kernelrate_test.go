package predictions

import (
	"strings"
	"testing"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/internal/fixture"
)

// shippedPinned is a shipped H200 capture whose predictions all hold.
const shippedPinned = "../testdata/captures/h200-pinned/pinned.sqlite"

// kernelsFaster divides the GPU time of the kernels launched in an NVTX
// range of the shipped capture by n.
func kernelsFaster(rng, n string) string {
	return `UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = start + ("end" - start) / ` + n + ` WHERE correlationId IN
		(SELECT r.correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME r, NVTX_EVENTS e
		 WHERE e.text = '` + rng + `' AND r.start >= e.start AND r."end" <= e."end")`
}

// Trace kernels faster than the memory or link they read leave 3.factor
// unavailable, saying why, never held or died on them.
func TestImpossibleKernelRate(t *testing.T) {
	cases := []struct {
		name, rng, n, want string
	}{
		{"device-resident kernels at 10x their time", "kernel-device-resident", "10",
			"GB/s from a memory of 4800 GB/s (HBM3e of the NVIDIA H200"},
		{"zero-copy kernels at 20x their time", "kernel-zero-copy", "20",
			"GB/s over a link of 126 GB/s (both directions of PCIe 5.0 x16 of the NVIDIA H200"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := capture.Load(fixture.SQLite(t, shippedPinned, kernelsFaster(tc.rng, tc.n)), capture.Options{APINames: Names()})
			if err != nil {
				t.Fatal(err)
			}
			r := Evaluate(c)
			cl := r.Claim("3.factor")
			why, ok := whyOf(cl).(ImpossibleKernelRate)
			if cl.Verdict != Unavailable || !ok || !strings.HasPrefix(why.Reason, "impossible: ") || !strings.Contains(why.Reason, tc.want) {
				t.Fatalf("3.factor %s, why %#v; want unavailable, %q", cl.Verdict, whyOf(cl), tc.want)
			}
			if v := r.Claim("1.floor").Verdict; v != Held {
				t.Errorf("1.floor %s: the damage is in part 3 alone", v)
			}
		})
	}
	// The shipped capture's kernels are within their bounds.
	c, err := capture.Load(shippedPinned, capture.Options{APINames: Names()})
	if err != nil {
		t.Fatal(err)
	}
	if v := Evaluate(c).Claim("3.factor").Verdict; v != Held {
		t.Errorf("shipped capture: 3.factor %s, want held", v)
	}
}

// A timed kernel the trace gives no time (its end at its start) is a
// damaged record: 3.factor is unavailable, naming it, where a mean over
// it once held (43.43x, the shipped capture's 39.19x).
func TestZeroKernelTime(t *testing.T) {
	// The sixth kernel by start: the first timed device-resident launch
	// (after the gate and the warm-ups).
	const zero = `UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = start WHERE rowid IN
		(SELECT rowid FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start LIMIT 1 OFFSET 5)`
	c, err := capture.Load(fixture.SQLite(t, shippedPinned, zero), capture.Options{APINames: Names()})
	if err != nil {
		t.Fatal(err)
	}
	r := Evaluate(c)
	cl := r.Claim("3.factor")
	why, ok := whyOf(cl).(ZeroKernelTime)
	if cl.Verdict != Unavailable || !ok || why.Count != 1 || why.Corr != 542 || why.Variant != "device-resident" {
		t.Fatalf("3.factor %s, why %#v; want unavailable, one device-resident launch of correlation id 542", cl.Verdict, whyOf(cl))
	}
	if v := r.Claim("1.floor").Verdict; v != Held {
		t.Errorf("1.floor %s: the damage is in part 3 alone", v)
	}
}
