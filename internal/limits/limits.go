// Package limits holds the physical bounds records must keep, in one
// place: how fast a copy can cross a GPU's host link, and how fast a GPU's
// own memory can be read or written. A record past them was not made by a
// run on real hardware (a time or a size is wrong), and no verdict may rest
// on it.
package limits

import (
	"fmt"
	"strings"

	"github.com/nsyscheck/nsyscheck/runinfo"
	"github.com/nsyscheck/nsyscheck/vocab"
)

// FastestHostLinkGBps is the fastest host-device link there is, NVLink-C2C
// (GH200) at 450 GB/s a direction: it bounds a copy between host and
// device on any GPU, known or not.
const FastestHostLinkGBps = 450

// BurstShare is how far above its link's or memory's nominal rate a
// measured copy may seem to run: the nominal rate is after line encoding,
// and a copy's start and end are read off a clock. The shipped H200
// captures' fastest copies reach 55.5 GB/s over PCIe 5.0 x16's 63.0 GB/s,
// and memsets 4.35 TB/s of HBM3e's 4.8 TB/s.
const BurstShare = 1.25

// UnknownMemoryGBps bounds device-to-device copies and memsets on a GPU
// not in the table: 10 TB/s, above any GPU's memory today (B200's HBM3e:
// 8 TB/s).
const UnknownMemoryGBps = 10000

// GPU is what the table knows of one GPU: its host link and its memory's
// bandwidth, nominal.
type GPU struct {
	// Match is the part of the name nsys gives ("NVIDIA H200") that tells
	// it; the table is searched in order, so GH200 comes before H200.
	Match string
	// Link names its usual host link, LinkGBps its rate; Gen and Width
	// are the link's PCIe generation and lanes (0 for another kind of
	// link).
	Link       string
	LinkGBps   float64
	Gen, Width int
	Memory     string
	MemoryGBps float64
}

// GPUs are the GPUs the bounds know, by name.
var GPUs = []GPU{
	{Match: "GH200", Link: "NVLink-C2C", LinkGBps: 450, Memory: "HBM3e", MemoryGBps: 4900},
	{Match: "H200", Link: "PCIe 5.0 x16", LinkGBps: runinfo.RatedGBps(5, 16), Gen: 5, Width: 16, Memory: "HBM3e", MemoryGBps: 4800},
	{Match: "H100", Link: "PCIe 5.0 x16", LinkGBps: runinfo.RatedGBps(5, 16), Gen: 5, Width: 16, Memory: "HBM3", MemoryGBps: 3350},
	{Match: "A100", Link: "PCIe 4.0 x16", LinkGBps: runinfo.RatedGBps(4, 16), Gen: 4, Width: 16, Memory: "HBM2e", MemoryGBps: 2039},
	{Match: "L40", Link: "PCIe 4.0 x16", LinkGBps: runinfo.RatedGBps(4, 16), Gen: 4, Width: 16, Memory: "GDDR6", MemoryGBps: 864},
	{Match: "L4", Link: "PCIe 4.0 x16", LinkGBps: runinfo.RatedGBps(4, 16), Gen: 4, Width: 16, Memory: "GDDR6", MemoryGBps: 300},
	{Match: "A10", Link: "PCIe 4.0 x16", LinkGBps: runinfo.RatedGBps(4, 16), Gen: 4, Width: 16, Memory: "GDDR6", MemoryGBps: 600},
	{Match: "V100", Link: "PCIe 3.0 x16", LinkGBps: runinfo.RatedGBps(3, 16), Gen: 3, Width: 16, Memory: "HBM2", MemoryGBps: 900},
	{Match: "T4", Link: "PCIe 3.0 x16", LinkGBps: runinfo.RatedGBps(3, 16), Gen: 3, Width: 16, Memory: "GDDR6", MemoryGBps: 320},
}

// Of finds the GPU of a name in the table, nil when it is not there.
func Of(name string) *GPU {
	for i := range GPUs {
		if strings.Contains(name, GPUs[i].Match) {
			return &GPUs[i]
		}
	}
	return nil
}

// Bound is the fastest rate a kind of copy may run at, and what sets it.
type Bound struct {
	// GBps is the nominal rate; a record may reach GBps*BurstShare.
	GBps float64
	// Of names it: "PCIe 5.0 x16 of the NVIDIA H200", "NVLink-C2C, the
	// fastest host link there is".
	Of string
}

// Max is the fastest a measured copy may seem to run.
func (b Bound) Max() float64 { return b.GBps * BurstShare }

// Exceeded says, when gbps is past the bound, why it is impossible: "impossible:
// 1105 GB/s over a link of 63.0 GB/s (PCIe 5.0 x16 of the NVIDIA H200)"; ""
// when it is not.
func (b Bound) Exceeded(gbps float64, memory bool) string {
	if gbps <= b.Max() {
		return ""
	}
	over := "over a link"
	if memory {
		over = "from a memory"
	}
	return fmt.Sprintf("impossible: %.4g GB/s %s of %.4g GB/s (%s; a measured copy may run at most %.0f%% above it)",
		gbps, over, b.GBps, b.Of, 100*(BurstShare-1))
}

// HostLink bounds a copy between host and device on the GPU named gpu:
// its PCIe link where the capture or the run says it (gen and width, 0
// unknown), else the table's link for the GPU, else the fastest host link
// there is.
func HostLink(gpu string, gen, width int) Bound {
	of := gpu
	if of == "" {
		of = "the GPU"
	}
	if gen > 0 && width > 0 {
		return Bound{GBps: runinfo.RatedGBps(gen, width), Of: fmt.Sprintf("PCIe %d.0 x%d of %s, as the capture says", gen, width, of)}
	}
	if g := Of(gpu); g != nil {
		return Bound{GBps: g.LinkGBps, Of: g.Link + " of the " + gpu}
	}
	return Bound{GBps: FastestHostLinkGBps, Of: "NVLink-C2C, the fastest host link there is"}
}

// DeviceMemory bounds a copy within a GPU's memory and a memset: the
// table's memory bandwidth for the GPU named gpu, else UnknownMemoryGBps.
func DeviceMemory(gpu string) Bound {
	if g := Of(gpu); g != nil {
		return Bound{GBps: g.MemoryGBps, Of: g.Memory + " of the " + gpu}
	}
	return Bound{GBps: UnknownMemoryGBps, Of: "above any GPU's memory"}
}

// Kernel bounds a part 3 kernel's rate, its bytes read and written over
// its time: a device-resident kernel's by the GPU's memory (memory true),
// a zero-copy kernel's by both directions of its host link, since it
// reads host memory over the link and writes it back.
func Kernel(variant vocab.Variant, gpu string, gen, width int) (b Bound, memory bool) {
	if variant != vocab.ZeroCopy {
		return DeviceMemory(gpu), true
	}
	link := HostLink(gpu, gen, width)
	return Bound{GBps: 2 * link.GBps, Of: "both directions of " + link.Of}, false
}

// SameGPU says whether two GPU names, as nsys, nvidia-smi and the
// program's results write them, name one model: equal but for case,
// spaces and NVIDIA's prefix.
func SameGPU(a, b string) bool {
	norm := func(s string) string {
		s = strings.Join(strings.Fields(strings.ToLower(s)), " ")
		return strings.TrimPrefix(s, "nvidia ")
	}
	return norm(a) == norm(b)
}
