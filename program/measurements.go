// Package program reads what the lesson's program writes itself: its
// stdout (the transcript, told by its own lines, with nsys's lines around
// it) and its results JSON, and measurements files in the same format
// entered from elsewhere. docs/measurements.md documents the format.
package program

// Schema is the value of Measurements.Schema that this version of
// nsyscheck writes and reads.
const Schema = "nsyscheck.measurements/v1"

// Measurements holds the numbers the predictions need, as the program
// reports them (its results JSON uses exactly this format) or as someone
// entered them from elsewhere, e.g. a lesson's published tables.
// docs/measurements.md documents the format.
type Measurements struct {
	Schema string `json:"schema"`
	// Source says where the numbers come from (free text).
	Source string `json:"source,omitempty"`
	// GPU, Driver and CUDA describe the machine, where known.
	GPU    string `json:"gpu,omitempty"`
	Driver string `json:"driver,omitempty"`
	CUDA   string `json:"cuda,omitempty"`
	// PCIe link of the GPU, where known.
	PCIeGen   int `json:"pcieGen,omitempty"`
	PCIeWidth int `json:"pcieWidth,omitempty"`

	// Copies holds parts 1 (h2d) and 1b (d2h): blocking cudaMemcpy per
	// direction, source and size.
	Copies []CopyTiming `json:"copies,omitempty"`
	// Async holds part 2: one cudaMemcpyAsync per source.
	Async []AsyncTiming `json:"async,omitempty"`
	// Kernels holds part 3: the scaleCopy kernel per variant.
	Kernels []KernelTiming `json:"kernels,omitempty"`
	// AsyncCalls holds prediction 4's call-time totals as read from a trace
	// by someone else (e.g. a lesson's text); nil when not given.
	AsyncCalls *AsyncCallTotals `json:"asyncCalls,omitempty"`
	// DeviceCopyGBps is the device-to-device cudaMemcpy bandwidth measured
	// in the same run (bytes read + written per second / 1e9), 0 if unknown.
	DeviceCopyGBps float64 `json:"deviceCopyGBps,omitempty"`
	// Gates lists the program's correctness gates and whether each passed.
	Gates []Gate `json:"gates,omitempty"`
}

// CopyTiming is the mean time of one blocking copy of Bytes bytes.
type CopyTiming struct {
	Direction string  `json:"direction"` // "h2d" or "d2h"
	Source    string  `json:"source"`    // host side: "pageable" or "pinned"
	Bytes     int64   `json:"bytes"`
	Ms        float64 `json:"ms"`             // mean milliseconds per copy
	GBps      float64 `json:"gbps,omitempty"` // Bytes / mean time / 1e9
	Runs      int     `json:"runs,omitempty"` // timed copies averaged
}

// AsyncTiming is part 2's mean call and completion time for one source.
type AsyncTiming struct {
	Source       string  `json:"source"` // "pageable" or "pinned"
	Bytes        int64   `json:"bytes"`
	CallMs       float64 `json:"callMs"`       // time the call held the thread
	CompletionMs float64 `json:"completionMs"` // call start to copy complete
	Runs         int     `json:"runs,omitempty"`
}

// KernelTiming is part 3's mean time per launch of one variant.
type KernelTiming struct {
	Variant     string  `json:"variant"` // "device-resident" or "zero-copy"
	Bytes       int64   `json:"bytes"`   // bytes read + written per launch
	MsPerLaunch float64 `json:"msPerLaunch"`
	GBps        float64 `json:"gbps,omitempty"`
	Runs        int     `json:"runs,omitempty"`
}

// AsyncCallTotals is prediction 4's evidence as totals: the summed call time
// of the ten timed cudaMemcpyAsync calls per source and the bytes they moved.
type AsyncCallTotals struct {
	PageableMs    float64 `json:"pageableMs"`
	PinnedMs      float64 `json:"pinnedMs"`
	PageableCalls int     `json:"pageableCalls,omitempty"`
	PinnedCalls   int     `json:"pinnedCalls,omitempty"`
	PageableBytes int64   `json:"pageableBytes,omitempty"`
	PinnedBytes   int64   `json:"pinnedBytes,omitempty"`
}

// Gate is one correctness check the program ran before timing.
type Gate struct {
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
	Detail string `json:"detail,omitempty"`
}
