package runner

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nsyscheck/nsyscheck/runinfo"
)

// LookAtGPU asks nvidia-smi which compute processes use the GPU and samples
// its utilisation a few times, samples apart.
func LookAtGPU(ctx context.Context, g runinfo.GPU, samples int, apart time.Duration) *runinfo.GPUActivity {
	a := &runinfo.GPUActivity{Processes: []runinfo.GPUProcess{}, Utilization: []int{}}
	smi, err := exec.LookPath("nvidia-smi")
	if err != nil {
		a.Note = "nvidia-smi not found"
		return a
	}
	id := g.VisibleDevice()
	var notes []string
	out, err := askTool(ctx, smi, "--query-compute-apps=pid,process_name,used_memory,gpu_uuid",
		"--format=csv,noheader,nounits")
	if err != nil {
		notes = append(notes, fmt.Sprintf("nvidia-smi --query-compute-apps failed (%v): %s", err, firstLine(string(out), "")))
	} else if procs, bad := parseComputeApps(string(out), g.UUID); bad != "" {
		notes = append(notes, "nvidia-smi --query-compute-apps gave an unexpected line: "+bad)
	} else {
		a.Processes = procs
	}
	for i := 0; i < samples; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return a
			case <-time.After(apart):
			}
		}
		out, err := askTool(ctx, smi, "--query-gpu=utilization.gpu", "--id="+id,
			"--format=csv,noheader,nounits")
		if err != nil {
			notes = append(notes, fmt.Sprintf("nvidia-smi --query-gpu=utilization.gpu failed (%v): %s", err, firstLine(string(out), "")))
			break
		}
		u, err := strconv.Atoi(strings.TrimSpace(firstLine(string(out), "")))
		if err != nil {
			notes = append(notes, fmt.Sprintf("nvidia-smi gave the utilisation %q", firstLine(string(out), "")))
			break
		}
		a.Utilization = append(a.Utilization, u)
	}
	a.Note = strings.Join(notes, "; ")
	return a
}

// parseComputeApps reads --query-compute-apps lines (pid, name, MiB, GPU
// UUID), keeping those on the GPU with the given UUID (all when it is
// empty). It returns the first line it cannot read.
func parseComputeApps(out, uuid string) ([]runinfo.GPUProcess, string) {
	procs := []runinfo.GPUProcess{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(strings.ToLower(line), "no running") {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) < 2 {
			return nil, line
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		pid, err := strconv.Atoi(f[0])
		if err != nil {
			return nil, line
		}
		if len(f) >= 4 && uuid != "" && f[3] != "" && f[3] != uuid {
			continue
		}
		p := runinfo.GPUProcess{PID: pid, Name: filepath.Base(f[1])}
		if len(f) >= 3 {
			p.UsedMiB, _ = strconv.Atoi(f[2])
		}
		procs = append(procs, p)
	}
	return procs, ""
}
