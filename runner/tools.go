package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/nsys"
	"github.com/nsyscheck/nsyscheck/internal/nsysdb"
	"github.com/nsyscheck/nsyscheck/runinfo"
)

// ToolError says that a program the run needs is missing or unusable.
type ToolError struct {
	Tool   string   // "nvcc", "nsys", "nvidia-smi"
	Looked []string // where it was looked for
	Hint   string
	Err    error
}

func (e *ToolError) Error() string {
	msg := fmt.Sprintf("%s not found", e.Tool)
	if e.Err != nil {
		msg = fmt.Sprintf("%s unusable: %v", e.Tool, e.Err)
	}
	if len(e.Looked) > 0 {
		msg += " (looked in: " + strings.Join(e.Looked, ", ") + ")"
	}
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

func (e *ToolError) Unwrap() error { return e.Err }

// FindNvcc locates nvcc: override, then PATH, $CUDA_HOME/bin, /usr/local/cuda/bin.
func FindNvcc(override string) (string, error) {
	if override != "" {
		if isExecutable(override) {
			return override, nil
		}
		return "", &ToolError{Tool: "nvcc", Looked: []string{override},
			Hint: "--nvcc must name an executable nvcc"}
	}
	looked := []string{"PATH"}
	if p, err := exec.LookPath("nvcc"); err == nil {
		return p, nil
	}
	var candidates []string
	if home := os.Getenv("CUDA_HOME"); home != "" {
		candidates = append(candidates, filepath.Join(home, "bin", "nvcc"))
	}
	candidates = append(candidates, "/usr/local/cuda/bin/nvcc")
	for _, c := range candidates {
		looked = append(looked, c)
		if isExecutable(c) {
			return c, nil
		}
	}
	return "", &ToolError{Tool: "nvcc", Looked: looked,
		Hint: "install the CUDA toolkit, set CUDA_HOME, or pass --nvcc PATH"}
}

// FindNsys locates the Nsight Systems CLI (see nsys.Find).
func FindNsys(override string) (string, error) {
	p, err := nsys.Find(override)
	if err != nil {
		return "", &ToolError{Tool: "nsys", Err: err,
			Hint: "install Nsight Systems 2025.3 or newer, set $NSYS, or pass --nsys PATH"}
	}
	return p, nil
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

var versionLine = regexp.MustCompile(`(?m)(release [0-9.]+, V[0-9.]+|version [0-9][0-9.\-]*)`)

// ToolVersion runs "TOOL --version" and returns the most telling line.
func ToolVersion(ctx context.Context, tool string) string {
	out, err := askTool(ctx, tool, "--version")
	if err != nil && len(out) == 0 {
		return "unknown (" + err.Error() + ")"
	}
	if m := versionLine.FindString(string(out)); m != "" {
		return m
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// noGPUHint tells a user on a machine without a usable GPU what to do.
const noGPUHint = "nsyscheck run needs a machine with an NVIDIA GPU and its driver; " +
	"on this machine, check a capture made elsewhere with nsyscheck verify CAPTURE " +
	"(or nsyscheck verify alone, for the H200 capture shipped with nsyscheck)"

func parseSMI(out string) (runinfo.GPU, error) {
	line := strings.TrimSpace(strings.SplitN(strings.TrimSpace(out), "\n", 2)[0])
	parts := strings.Split(line, ",")
	if len(parts) < 7 {
		return runinfo.GPU{}, &ToolError{Tool: "nvidia-smi", Err: fmt.Errorf("unexpected answer %q", line),
			Hint: "no GPU listed; check the driver"}
	}
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	num := func(s string) int { n, _ := strconv.Atoi(s); return n }
	g := runinfo.GPU{Name: parts[0], Driver: parts[1], ComputeCap: parts[2], PCIe: runinfo.PCIe{
		GenCurrent: num(parts[3]), GenMax: num(parts[4]), WidthCurrent: num(parts[5]), WidthMax: num(parts[6]),
	}}
	g.PCIe.RatedGBps = runinfo.RatedGBps(g.PCIe.GenMax, g.PCIe.WidthMax)
	return g, nil
}

// Arch turns a compute capability such as "9.0" into nvcc's "sm_90".
func Arch(computeCap string) (string, error) {
	cc := strings.ReplaceAll(strings.TrimSpace(computeCap), ".", "")
	if _, err := strconv.Atoi(cc); err != nil || cc == "" {
		return "", fmt.Errorf("cannot derive a GPU architecture from compute capability %q; pass --arch sm_XX", computeCap)
	}
	return "sm_" + cc, nil
}

// StatsReports picks the names of the CSV reports nsyscheck reads from the
// list `nsys stats --help-reports` prints: current names where listed, the
// older names (before about 2023.1) otherwise. The per-record reports
// cuda_gpu_trace and nvtx_pushpop_trace (gputrace, nvtxpptrace) are taken
// where listed and left out otherwise: the SQLite export holds the same
// records.
func StatsReports(helpReports string) ([]string, error) {
	listed := map[string]bool{}
	for _, line := range strings.Split(helpReports, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		name := f[0]
		if i := strings.IndexByte(name, '['); i > 0 {
			name = name[:i]
		}
		listed[name] = true
	}
	names, missing := nsysdb.StatsNames(listed)
	if len(missing) > 0 {
		known := make([]string, 0, len(listed))
		for k := range listed {
			known = append(known, k)
		}
		sort.Strings(known)
		lists := "it lists: " + strings.Join(known, " ")
		if len(known) == 0 {
			lists = "nsys stats --help-reports listed no report at all: check that the nsys found is Nsight Systems (run it by hand), or pass --nsys PATH"
		}
		return names, errors.New("nsys stats does not offer the report(s) " + strings.Join(missing, ", ") + "; " + lists)
	}
	return names, nil
}
