package runner

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/runinfo"
)

// gpuFields is what ListGPUs asks nvidia-smi about each GPU: QueryGPU's
// seven fields first, then the GPU's index, PCI bus id and UUID.
const gpuFields = "name,driver_version,compute_cap,pcie.link.gen.current,pcie.link.gen.max," +
	"pcie.link.width.current,pcie.link.width.max,index,pci.bus_id,uuid"

// ListGPUs asks nvidia-smi about every GPU of the machine, in its order
// (the PCI bus order nvidia-smi numbers GPUs by). A machine without a GPU
// or driver gets a *ToolError saying so.
func ListGPUs(ctx context.Context) ([]runinfo.GPU, error) {
	smi, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return nil, &ToolError{Tool: "nvidia-smi", Looked: []string{"PATH"}, Hint: noGPUHint}
	}
	out, err := askTool(ctx, smi, "--query-gpu="+gpuFields, "--format=csv,noheader,nounits")
	if err != nil {
		return nil, &ToolError{Tool: "nvidia-smi", Err: fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out))),
			Hint: "no usable NVIDIA GPU: check the driver (nvidia-smi must list a GPU); " + noGPUHint}
	}
	return parseGPUList(string(out))
}

// parseGPUList reads ListGPUs' answer: one GPU per line. A line without
// the index, bus id and UUID (an older nvidia-smi) takes its line number
// as index.
func parseGPUList(out string) ([]runinfo.GPU, error) {
	var gpus []runinfo.GPU
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		g, err := parseSMI(line)
		if err != nil {
			return nil, err
		}
		g.Index = len(gpus)
		parts := strings.Split(line, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		if len(parts) >= 10 {
			if n, err := strconv.Atoi(parts[7]); err == nil {
				g.Index = n
			}
			g.BusID, g.UUID = known(parts[8]), known(parts[9])
		}
		for _, o := range gpus {
			// Each GPU's run folder and lock are named by its index.
			if o.Index == g.Index {
				return nil, &ToolError{Tool: "nvidia-smi", Err: fmt.Errorf("it lists GPU index %d twice (bus %s and bus %s)", g.Index, dashIfNone(o.BusID), dashIfNone(g.BusID)),
					Hint: "no GPU can be told by its index; check the driver (nvidia-smi -L lists each GPU once)"}
			}
		}
		gpus = append(gpus, g)
	}
	if len(gpus) == 0 {
		return nil, &ToolError{Tool: "nvidia-smi", Err: fmt.Errorf("it lists no GPU"),
			Hint: "check the driver (nvidia-smi must list a GPU); " + noGPUHint}
	}
	return gpus, nil
}

// dashIfNone is s, or "-" where it is empty.
func dashIfNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// known turns nvidia-smi's placeholders for a missing value into "".
func known(s string) string {
	switch strings.ToLower(s) {
	case "", "[n/a]", "n/a", "[not supported]", "not supported":
		return ""
	}
	return s
}

// SelectGPUs picks the GPUs a --gpu value names: "all", or one index as
// nvidia-smi numbers them.
func SelectGPUs(gpus []runinfo.GPU, which string) ([]runinfo.GPU, error) {
	which = strings.TrimSpace(which)
	if which == "all" {
		return gpus, nil
	}
	n, err := strconv.Atoi(which)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("--gpu %q: give a GPU index as nvidia-smi numbers them (0, 1, ...) or all", which)
	}
	for _, g := range gpus {
		if g.Index == n {
			return []runinfo.GPU{g}, nil
		}
	}
	var have []string
	for _, g := range gpus {
		have = append(have, strconv.Itoa(g.Index))
	}
	return nil, fmt.Errorf("--gpu %d: this machine has no GPU %d; nvidia-smi lists %s", n, n, strings.Join(have, ", "))
}
