package predictions

import (
	"slices"
	"testing"

	"github.com/nsyscheck/nsyscheck/capture"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// onDevice moves the copy of the n-th copy call named name (0 first) of
// the synthetic run to GPU device d.
func onDevice(t *testing.T, c *capture.Capture, name string, n int, d int64) {
	t.Helper()
	seen := 0
	for _, a := range c.Calls {
		if a.Name != name {
			continue
		}
		if seen++; seen <= n {
			continue
		}
		all := c.Memcpys.Slice()
		for i := range all {
			if all[i].CorrelationID == a.CorrelationID {
				all[i].Device = d
				c.Memcpys = capture.Memcpys{}
				for _, m := range all {
					c.Memcpys.Append(m)
				}
				return
			}
		}
	}
	t.Fatalf("no copy of %s call %d", name, n)
}

// A part whose copies ran on two GPUs sets one GPU's times against
// another's: it answers nothing, and says which devices and how many
// copies each; with NVTX ranges and without, the parts the other copies
// make still answer.
func TestCopiesOnTwoGPUs(t *testing.T) {
	for _, noNVTX := range []bool{false, true} {
		c := synthCapture(synthOpts{noNVTX: noNVTX})
		onDevice(t, c, apiMemcpy, 20, 1)
		r := Evaluate(c)
		wantVerdicts(t, r, map[string]Verdict{"1.floor": Unavailable, "1.growth": Unavailable, "2.pageable": Held, "2.pinned": Held})
		w, ok := whyOf(r.Claim("1.floor")).(CopiesOnGPUs)
		if !ok {
			t.Fatalf("noNVTX %v: 1.floor unavailable for %#v, want copies on two GPUs", noNVTX, whyOf(r.Claim("1.floor")))
		}
		if w.Dir != vocab.H2D || len(w.Devices) != 2 || w.Devices[0].Device != 0 || w.Devices[1] != (DeviceCount{Device: 1, N: 1}) {
			t.Errorf("noNVTX %v: %+v, want the h2d sweep on devices 0 and 1, one copy on 1", noNVTX, w)
		}

		c = synthCapture(synthOpts{noNVTX: noNVTX})
		onDevice(t, c, apiMemcpyAsync, 3, 1)
		r = Evaluate(c)
		wantVerdicts(t, r, map[string]Verdict{"1.floor": Held, "2.pageable": Unavailable, "2.pinned": Unavailable})
		if w, ok := whyOf(r.Claim("2.pinned")).(CopiesOnGPUs); !ok || w.Dir != "" || !slices.Equal(w.Devices, []DeviceCount{{0, 19}, {1, 1}}) {
			t.Errorf("noNVTX %v: 2.pinned unavailable for %#v, want the async groups' 20 copies on devices 0 (19) and 1 (1)", noNVTX, whyOf(r.Claim("2.pinned")))
		}
	}
}

// Part 3's kernels on two GPUs set one GPU's kernel time against
// another's: 3.factor answers nothing, and says which devices.
func TestKernelsOnTwoGPUs(t *testing.T) {
	for _, noNVTX := range []bool{false, true} {
		c := synthCapture(synthOpts{noNVTX: noNVTX})
		c.Kernels[len(c.Kernels)-1].Device = 1
		r := Evaluate(c)
		wantVerdicts(t, r, map[string]Verdict{"1.floor": Held, "3.factor": Unavailable})
		w, ok := whyOf(r.Claim("3.factor")).(KernelsOnGPUs)
		if !ok || len(w.Devices) != 2 || w.Devices[1] != (DeviceCount{Device: 1, N: 1}) {
			t.Errorf("noNVTX %v: 3.factor unavailable for %#v, want the kernels on devices 0 and 1, one on 1", noNVTX, whyOf(r.Claim("3.factor")))
		}
	}
}
