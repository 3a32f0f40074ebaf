package limits

import (
	"math"
	"strings"
	"testing"
)

func TestBounds(t *testing.T) {
	for _, c := range []struct {
		gpu        string
		gen, width int
		link, mem  float64
		linkOf     string
	}{
		{"NVIDIA H200", 0, 0, 63.02, 4800, "PCIe 5.0 x16 of the NVIDIA H200"},
		{"NVIDIA GH200 480GB", 0, 0, 450, 4900, "NVLink-C2C of the NVIDIA GH200 480GB"},
		{"Tesla T4", 0, 0, 15.75, 320, "PCIe 3.0 x16 of the Tesla T4"},
		{"NVIDIA L40S", 0, 0, 31.51, 864, "PCIe 4.0"},
		{"NVIDIA L4", 0, 0, 31.51, 300, "PCIe 4.0"},
		{"NVIDIA H200", 4, 8, 15.75, 4800, "PCIe 4.0 x8 of NVIDIA H200, as the capture says"},
		{"Some Future GPU", 0, 0, 450, 10000, "NVLink-C2C, the fastest host link there is"},
		{"", 0, 0, 450, 10000, "the fastest host link"},
	} {
		l, m := HostLink(c.gpu, c.gen, c.width), DeviceMemory(c.gpu)
		if math.Abs(l.GBps-c.link) > 0.01 || m.GBps != c.mem || !strings.Contains(l.Of, c.linkOf) {
			t.Errorf("%q gen %d x%d: link %+v, memory %+v", c.gpu, c.gen, c.width, l, m)
		}
	}
	h200 := HostLink("NVIDIA H200", 0, 0)
	// The shipped captures' fastest copy, 55.5 GB/s, passes; 80 GB/s does not.
	if why := h200.Exceeded(55.5, false); why != "" {
		t.Errorf("55.5 GB/s on an H200: %s", why)
	}
	if why := h200.Exceeded(1105, false); !strings.HasPrefix(why, "impossible: 1105 GB/s over a link of 63.02 GB/s (PCIe 5.0 x16 of the NVIDIA H200") {
		t.Errorf("1105 GB/s on an H200: %q", why)
	}
	if why := DeviceMemory("NVIDIA H200").Exceeded(84633, true); !strings.HasPrefix(why, "impossible: 8.463e+04 GB/s from a memory of 4800 GB/s") {
		t.Errorf("84,633 GB/s device to device: %q", why)
	}
}

// SameGPU tells one model however its name is written, and two models
// apart.
func TestSameGPU(t *testing.T) {
	if !SameGPU("NVIDIA  H200", "nvidia h200") || !SameGPU("H200", "NVIDIA H200") || SameGPU("NVIDIA H200", "NVIDIA H100") {
		t.Error("SameGPU")
	}
}
