package runner

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// BusyUtilization is the GPU utilisation (percent) above which a sample
// counts as other work on the GPU.
const BusyUtilization = 10

// Sharing records what else used the run's GPU around the profile: once
// before it (while the run held the GPU lock, so none of nsyscheck's own
// queued runs was profiling) and once right after. It is written to
// run.json.
type Sharing struct {
	Before *GPUActivity `json:"before,omitempty"`
	After  *GPUActivity `json:"after,omitempty"`
	// Foreign is true when either look found work that is not this run's.
	Foreign bool `json:"foreign"`
	// Summary says what was found, in words, for warnings.
	Summary string `json:"summary,omitempty"`
}

// GPUActivity is one look at a GPU with nvidia-smi.
type GPUActivity struct {
	// Processes are the compute processes nvidia-smi lists on the GPU
	// (program names only, never command lines).
	Processes []GPUProcess `json:"processes"`
	// Utilization holds the samples of utilization.gpu, in percent.
	Utilization []int `json:"utilization"`
	// Note says what could not be read.
	Note string `json:"note,omitempty"`
}

// GPUProcess is a compute process on the GPU.
type GPUProcess struct {
	PID     int    `json:"pid"`
	Name    string `json:"name"`
	UsedMiB int    `json:"usedMiB,omitempty"`
}

// Busy reports whether the look found other work: a compute process, or a
// utilisation sample above BusyUtilization.
func (a *GPUActivity) Busy() bool {
	if a == nil {
		return false
	}
	return len(a.Processes) > 0 || a.MaxUtilization() > BusyUtilization
}

// MaxUtilization is the highest utilisation sample, or 0.
func (a *GPUActivity) MaxUtilization() int {
	m := 0
	for _, u := range a.Utilization {
		m = max(m, u)
	}
	return m
}

func (a *GPUActivity) describe(when string) string {
	var parts []string
	if n := len(a.Processes); n > 0 {
		var names []string
		for _, p := range a.Processes {
			s := fmt.Sprintf("%s pid %d", p.Name, p.PID)
			if p.UsedMiB > 0 {
				s += fmt.Sprintf(", %d MiB", p.UsedMiB)
			}
			names = append(names, s)
		}
		parts = append(parts, fmt.Sprintf("%d compute process(es) (%s)", n, strings.Join(names, "; ")))
	}
	if len(a.Utilization) > 0 {
		parts = append(parts, fmt.Sprintf("utilisation up to %d%%", a.MaxUtilization()))
	}
	return when + ": " + strings.Join(parts, ", ")
}

// LookAtGPU asks nvidia-smi which compute processes use the GPU and samples
// its utilisation a few times, samples apart.
func LookAtGPU(ctx context.Context, g GPU, samples int, apart time.Duration) *GPUActivity {
	a := &GPUActivity{Processes: []GPUProcess{}, Utilization: []int{}}
	smi, err := exec.LookPath("nvidia-smi")
	if err != nil {
		a.Note = "nvidia-smi not found"
		return a
	}
	id := g.VisibleDevice()
	var notes []string
	out, err := exec.CommandContext(ctx, smi, "--query-compute-apps=pid,process_name,used_memory,gpu_uuid",
		"--format=csv,noheader,nounits").CombinedOutput()
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
		out, err := exec.CommandContext(ctx, smi, "--query-gpu=utilization.gpu", "--id="+id,
			"--format=csv,noheader,nounits").CombinedOutput()
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
func parseComputeApps(out, uuid string) ([]GPUProcess, string) {
	procs := []GPUProcess{}
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
		p := GPUProcess{PID: pid, Name: filepath.Base(f[1])}
		if len(f) >= 3 {
			p.UsedMiB, _ = strconv.Atoi(f[2])
		}
		procs = append(procs, p)
	}
	return procs, ""
}

// Seen says what other work the two looks found, "" where none: "before
// profiling: 1 compute process(es) (...); right after: ...".
func (s *Sharing) Seen() string {
	var parts []string
	if s.Before.Busy() {
		parts = append(parts, s.Before.describe("before profiling"))
	}
	if s.After.Busy() {
		parts = append(parts, s.After.describe("right after"))
	}
	return strings.Join(parts, "; ")
}

// summarize fills Foreign and Summary from the two looks.
func (s *Sharing) summarize() {
	seen := s.Seen()
	s.Foreign = seen != ""
	if s.Foreign {
		s.Summary = "other work shared the GPU: " + seen
	} else {
		s.Summary = "no other work seen on the GPU before or right after profiling"
	}
}

// ProfileTrace is what the profile step asks nsys to trace (nsys profile
// -t): the CUDA API and the program's NVTX ranges.
const ProfileTrace = "cuda,nvtx"

// TracedCUDA reports whether the run's profile step traced CUDA calls, from
// the nsys command line run.json records for it: a run that did, yet whose
// export holds no or too few CUDA calls, lost its trace to another
// profiler rather than to its flags.
func (i Info) TracedCUDA() bool {
	for _, st := range i.Steps {
		if st.Name != "profile" {
			continue
		}
		for _, c := range st.Commands {
			if strings.Contains(c, " profile ") && (strings.Contains(c, "-t cuda") || strings.Contains(c, "--trace=cuda")) {
				return true
			}
		}
	}
	return false
}

// SharedGPU reports whether other work was seen on the run's GPU around
// the profile.
func (i Info) SharedGPU() bool {
	return i.Sharing != nil && i.Sharing.Foreign
}
