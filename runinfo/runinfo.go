// Package runinfo is what a run folder of `nsyscheck run` holds beside
// the capture: its file names and run.json, the record of the run's tools,
// GPU and link, NUMA binding, isolation, GPU lock, other work seen on the
// GPU, NVIDIA's rule and steps. It is the schema the runner writes and the
// checks, reports and fleet tables read.
package runinfo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nsyscheck/nsyscheck/internal/inputerr"
	"github.com/nsyscheck/nsyscheck/nsysrule"
)

// Base is the file-name base of everything a run writes: pinned.nsys-rep,
// pinned.sqlite, pinned_cuda_api_trace.csv, ...
const Base = "pinned"

// Files a run folder holds besides the capture and its reports.
const (
	InfoFile       = "run.json"
	TranscriptFile = Base + ".transcript.txt"
	ResultsFile    = Base + ".results.json"
	IncompleteFile = "INCOMPLETE"
)

// Step is one recorded step of a run.
type Step struct {
	Name     string   `json:"name"`
	Commands []string `json:"commands,omitempty"`
	Seconds  float64  `json:"seconds"`
	Error    string   `json:"error,omitempty"`
}

// Tool is a program the run used.
type Tool struct {
	Path    string `json:"path"`
	Version string `json:"version"`
}

// Info is the content of run.json.
type Info struct {
	// Status is "running", "complete", "failed" or "interrupted".
	Status     string     `json:"status"`
	FailedStep string     `json:"failedStep,omitempty"`
	Error      string     `json:"error,omitempty"`
	Started    time.Time  `json:"started"`
	Finished   *time.Time `json:"finished,omitempty"`
	Seconds    float64    `json:"seconds,omitempty"`
	Nsyscheck  string     `json:"nsyscheck,omitempty"`
	// Host is the machine's name, for tables over many machines.
	Host string `json:"host,omitempty"`
	Nvcc *Tool  `json:"nvcc,omitempty"`
	Nsys *Tool  `json:"nsys,omitempty"`
	GPU  *GPU   `json:"gpu,omitempty"`
	Arch string `json:"arch,omitempty"`
	// BuildCache is the cached build of the same source, flags and nvcc
	// that the run reused instead of calling nvcc, if any.
	BuildCache string     `json:"buildCache,omitempty"`
	Isolation  *Isolation `json:"isolation,omitempty"`
	// Lock is the GPU lock the run queued on; Sharing what else used the
	// GPU around the profile.
	Lock    *Lock    `json:"lock,omitempty"`
	Sharing *Sharing `json:"sharing,omitempty"`
	Reports []string `json:"reports,omitempty"`
	Analyze *Analyze `json:"nsysAnalyze,omitempty"`
	Steps   []Step   `json:"steps"`
	Files   []string `json:"files,omitempty"`
}

// GPU describes the device the run used, as nvidia-smi reports it.
type GPU struct {
	Name       string `json:"name"`
	Driver     string `json:"driver"`
	ComputeCap string `json:"computeCap"` // e.g. "9.0"
	PCIe       PCIe   `json:"pcie"`
	// Index is the GPU's number as nvidia-smi counts them.
	Index int `json:"index"`
	// BusID is the GPU's PCI address as nvidia-smi writes it
	// (00000000:19:00.0), UUID its GPU-... identifier; either may be empty
	// where nvidia-smi did not say.
	BusID string `json:"busId,omitempty"`
	UUID  string `json:"uuid,omitempty"`
	// Visible is the CUDA_VISIBLE_DEVICES the program ran with;
	// ReplacedVisible the caller's own value it replaced, if any.
	Visible         string `json:"cudaVisibleDevices,omitempty"`
	ReplacedVisible string `json:"replacedCudaVisibleDevices,omitempty"`
	// NUMA is the GPU's NUMA node and how the run bound the program to it.
	NUMA *NUMA `json:"numa,omitempty"`
}

// PCIe is the GPU's PCI Express link.
type PCIe struct {
	GenCurrent   int `json:"genCurrent,omitempty"`
	GenMax       int `json:"genMax,omitempty"`
	WidthCurrent int `json:"widthCurrent,omitempty"`
	WidthMax     int `json:"widthMax,omitempty"`
	// RatedGBps is the rated bandwidth per direction of the maximum link
	// (generation and width) in GB/s (1e9 bytes), after line encoding.
	RatedGBps float64 `json:"ratedGBps,omitempty"`
}

// RatedGBps returns the per-direction rated bandwidth of a PCIe link of the
// given generation and width, in GB/s, or 0 when unknown.
func RatedGBps(gen, width int) float64 {
	// Transfer rate per lane (GT/s) and line-code efficiency per generation.
	var gts, eff float64
	switch gen {
	case 1:
		gts, eff = 2.5, 8.0/10
	case 2:
		gts, eff = 5, 8.0/10
	case 3:
		gts, eff = 8, 128.0/130
	case 4:
		gts, eff = 16, 128.0/130
	case 5:
		gts, eff = 32, 128.0/130
	case 6:
		gts, eff = 64, 242.0/256
	default:
		return 0
	}
	if width <= 0 {
		return 0
	}
	return gts * eff * float64(width) / 8
}

// NUMA records the NUMA node a GPU hangs off and how the run bound the
// profiled program (its host threads and, through them, its pinned buffers)
// to that node. It is written to run.json under gpu.numa.
type NUMA struct {
	// Node is the GPU's NUMA node, -1 when the machine does not say.
	Node int `json:"node"`
	// From says where Node was read: a sysfs file or "nvidia-smi topo -m".
	From string `json:"from,omitempty"`
	// CPUs is the node's CPU list (e.g. "0-15,32-47").
	CPUs string `json:"cpus,omitempty"`
	// Nodes counts the machine's NUMA nodes (0 when unknown).
	Nodes int `json:"nodes,omitempty"`
	// Binding is how the program was bound: "numactl" (CPUs and memory),
	// "taskset" (CPUs only; memory follows first touch) or "none".
	Binding string `json:"binding"`
	// Command is the binding prefix the profile step ran under.
	Command string `json:"command,omitempty"`
	// Note says why there is no binding, or what limits it.
	Note string `json:"note,omitempty"`
}

// Isolation records how the profiled program was kept from recording more of
// the machine than the check needs. It is written to run.json.
type Isolation struct {
	// EnvKept lists the names (never the values) of the variables passed on.
	EnvKept []string `json:"envKept"`
	// EnvDropped counts the caller's variables left out.
	EnvDropped int `json:"envDropped"`
	// PIDNamespace is true when nsys ran in its own PID namespace, so the
	// capture's process list holds only nsys and the program.
	PIDNamespace bool `json:"pidNamespace"`
	// Note explains why PID isolation did not apply, when it did not.
	Note string `json:"note,omitempty"`
}

// BusyUtilization is the GPU utilisation (percent) above which a sample
// counts as other work on the GPU.
const BusyUtilization = 10

// LockInfo is the small record a run writes into its GPU's lock file while
// it holds the lock, so that a run that comes later can say for whom it
// waits. The kernel, not the record, says whether the lock is held.
type LockInfo struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host,omitempty"`
	Dir     string    `json:"dir,omitempty"`
	Started time.Time `json:"started,omitzero"`
}

func (l LockInfo) String() string {
	s := fmt.Sprintf("nsyscheck run pid %d", l.PID)
	switch {
	case l.Dir != "" && !l.Started.IsZero():
		s += fmt.Sprintf(" (run folder %s, since %s)", l.Dir, l.Started.Format("15:04:05"))
	case l.Dir != "":
		s += fmt.Sprintf(" (run folder %s)", l.Dir)
	}
	return s
}

// Lock is what run.json records of the GPU lock.
type Lock struct {
	Path string `json:"path"`
	// WaitedSeconds is how long the run waited for other runs.
	WaitedSeconds float64 `json:"waitedSeconds"`
	// WaitedFor names the run that held the lock when this one came.
	WaitedFor *LockInfo `json:"waitedFor,omitempty"`
}

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

// ProfileTrace is what the profile step asks nsys to trace (nsys profile
// -t): the CUDA API and the program's NVTX ranges.
const ProfileTrace = "cuda,nvtx"

// Analyze is what NVIDIA's cuda_memcpy_async rule said about the capture.
type Analyze struct {
	Rule      string `json:"rule"`
	Available bool   `json:"available"`
	// Note says why the rule could not run, when it could not.
	Note string `json:"note,omitempty"`
	File string `json:"file,omitempty"`
	// Flagged lists the copies the rule reports, in start order.
	Flagged []nsysrule.FlaggedCopy `json:"flagged"`
}

// MaxInfoFile bounds a run folder's run.json.
const MaxInfoFile = 16 << 20

// VisibleDevice is the CUDA_VISIBLE_DEVICES value that shows the program
// this GPU alone: its UUID where known (immune to CUDA's own device order),
// its index otherwise.
func (g GPU) VisibleDevice() string {
	if g.UUID != "" {
		return g.UUID
	}
	return strconv.Itoa(g.Index)
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

func (a *GPUActivity) Describe(when string) string {
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

// Seen says what other work the two looks found, "" where none: "before
// profiling: 1 compute process(es) (...); right after: ...".
func (s *Sharing) Seen() string {
	var parts []string
	if s.Before.Busy() {
		parts = append(parts, s.Before.Describe("before profiling"))
	}
	if s.After.Busy() {
		parts = append(parts, s.After.Describe("right after"))
	}
	return strings.Join(parts, "; ")
}

// Summarize fills Foreign and Summary from the two looks.
func (s *Sharing) Summarize() {
	seen := s.Seen()
	s.Foreign = seen != ""
	if s.Foreign {
		s.Summary = "other work shared the GPU: " + seen
	} else {
		s.Summary = "no other work seen on the GPU before or right after profiling"
	}
}

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

// ReadStrict reads run.json in the run folder dir for what rests on it (a
// run's rates): nil and no error where there is none, an error naming the
// file where one is there but cannot be read (a FIFO, a huge or damaged
// file, one saved as UTF-16), which is not taken for none.
func ReadStrict(dir string) (*Info, error) {
	const strictHint = "give the folder of a complete 'nsyscheck run', or run it again"
	p := filepath.Join(dir, InfoFile)
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	data, err := inputerr.ReadFile(p, MaxInfoFile, "a run folder's "+InfoFile)
	if err != nil {
		return nil, err
	}
	if e := inputerr.TextEncoding(data); e != nil {
		return nil, inputerr.NotUTF8(p, e, strictHint)
	}
	var info Info
	if err := json.Unmarshal(bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF")), &info); err != nil {
		return nil, &inputerr.Error{Path: p, Problem: "not a run's record (is it cut short?), so the run is not known to have completed, nor on which GPU", Err: err, Hint: strictHint}
	}
	return &info, nil
}
