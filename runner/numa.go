package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/nsyscheck/nsyscheck/internal/regular"
	"github.com/nsyscheck/nsyscheck/runinfo"
)

// sysfsBusID turns nvidia-smi's bus id (00000000:19:00.0) into the name of
// the device's sysfs folder (0000:19:00.0).
func sysfsBusID(busID string) string {
	id := strings.ToLower(strings.TrimSpace(busID))
	dom, rest, ok := strings.Cut(id, ":")
	if !ok {
		return id
	}
	if len(dom) > 4 {
		dom = dom[len(dom)-4:]
	}
	for len(dom) < 4 {
		dom = "0" + dom
	}
	return dom + ":" + rest
}

// LocateNUMA finds the GPU's NUMA node and its CPUs: from sysfs under
// sysRoot (normally /sys) where the GPU's PCI folder is there, otherwise
// from `nvidia-smi topo -m`. It does not bind anything.
func LocateNUMA(ctx context.Context, g runinfo.GPU, sysRoot string) runinfo.NUMA {
	if sysRoot == "" {
		sysRoot = "/sys"
	}
	n := runinfo.NUMA{Node: -1, Binding: "none"}
	n.Nodes = countNodes(sysRoot)
	var why []string
	if g.BusID != "" {
		f := filepath.Join(sysRoot, "bus", "pci", "devices", sysfsBusID(g.BusID), "numa_node")
		if data, err := readSysfs(f); err == nil {
			v, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err == nil {
				n.Node, n.From = v, f
			} else {
				why = append(why, fmt.Sprintf("%s holds %q, not a node number", f, strings.TrimSpace(string(data))))
			}
		} else {
			why = append(why, fmt.Sprintf("cannot read %s (%v)", f, errShort(err)))
		}
	} else {
		why = append(why, "nvidia-smi gave no PCI bus id for this GPU")
	}
	if n.From == "" {
		if node, cpus, err := topoNUMA(ctx, g.Index); err == nil {
			n.Node, n.From, n.CPUs = node, "nvidia-smi topo -m", cpus
		} else {
			why = append(why, err.Error())
		}
	}
	if n.Node < 0 && n.Nodes == 1 {
		// No affinity given, but there is only one node the GPU's host
		// memory can be on.
		if only, err := filepath.Glob(filepath.Join(sysRoot, "devices", "system", "node", "node[0-9]*")); err == nil && len(only) == 1 {
			if v, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(only[0]), "node")); err == nil {
				src := n.From + " says -1"
				if n.From == "" {
					src = strings.Join(why, "; ")
				}
				n.Node, n.From = v, "the machine's only NUMA node ("+src+")"
			}
		}
	}
	switch {
	case n.From == "":
		n.Note = "the GPU's NUMA node is unknown: " + strings.Join(why, "; ")
		return n
	case n.Node < 0:
		n.Note = "the machine reports no NUMA node for this GPU (" + n.From + " says -1: a machine with one memory node, or firmware that gives no affinity), so the program is not bound"
		return n
	}
	if cpus, err := readSysfs(filepath.Join(sysRoot, "devices", "system", "node", fmt.Sprintf("node%d", n.Node), "cpulist")); err == nil {
		n.CPUs = strings.TrimSpace(string(cpus))
	}
	return n
}

func errShort(err error) string {
	var nr *regular.NotRegularError
	if errors.As(err, &nr) {
		return nr.What
	}
	var tl *regular.TooLargeError
	if errors.As(err, &tl) {
		return fmt.Sprintf("more than %d KiB", tl.Max>>10)
	}
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

func countNodes(sysRoot string) int {
	m, _ := filepath.Glob(filepath.Join(sysRoot, "devices", "system", "node", "node[0-9]*"))
	return len(m)
}

var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// topoNUMA asks `nvidia-smi topo -m` for GPU index's NUMA and CPU affinity.
func topoNUMA(ctx context.Context, index int) (int, string, error) {
	smi, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return -1, "", fmt.Errorf("nvidia-smi topo -m: nvidia-smi not found")
	}
	out, err := askTool(ctx, smi, "topo", "-m")
	if err != nil {
		return -1, "", fmt.Errorf("nvidia-smi topo -m failed (%v): %s", err, firstLine(string(out), ""))
	}
	return parseTopo(string(out), index)
}

// parseTopo reads the NUMA Affinity and CPU Affinity columns of GPU index's
// row in the matrix `nvidia-smi topo -m` prints.
func parseTopo(out string, index int) (int, string, error) {
	split := func(line string) []string {
		line = ansiEscape.ReplaceAllString(line, "")
		var f []string
		if strings.Contains(line, "\t") {
			f = strings.Split(line, "\t")
		} else {
			f = regexp.MustCompile(`\s{2,}`).Split(line, -1)
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		return f
	}
	lines := strings.Split(out, "\n")
	numaCol, cpuCol := -1, -1
	var head []string
	for _, l := range lines {
		h := split(l)
		for i, name := range h {
			switch name {
			case "NUMA Affinity":
				numaCol = i
			case "CPU Affinity":
				cpuCol = i
			}
		}
		if numaCol >= 0 {
			head = h
			break
		}
	}
	if numaCol < 0 {
		return -1, "", fmt.Errorf("nvidia-smi topo -m has no NUMA Affinity column")
	}
	// The header has one field fewer than the rows when it does not start
	// with the (empty) row-label column.
	shift := 0
	if head[0] != "" {
		shift = 1
	}
	label := fmt.Sprintf("GPU%d", index)
	for _, l := range lines {
		f := split(l)
		if len(f) == 0 || f[0] != label || len(f) <= numaCol+shift {
			continue
		}
		v := f[numaCol+shift]
		node, err := strconv.Atoi(v)
		if err != nil {
			return -1, "", fmt.Errorf("nvidia-smi topo -m gives %s the NUMA affinity %q", label, v)
		}
		cpus := ""
		if cpuCol >= 0 && len(f) > cpuCol+shift {
			cpus = f[cpuCol+shift]
		}
		return node, cpus, nil
	}
	return -1, "", fmt.Errorf("nvidia-smi topo -m has no row for %s", label)
}

// Bind chooses how to bind a program to the node n names and returns the
// argument-list prefix that does it (nil for none), recording the choice
// in n: numactl --cpunodebind --membind where numactl is installed and
// allowed, else taskset -c with the node's CPUs, else nothing with a note.
func Bind(ctx context.Context, n *runinfo.NUMA) []string {
	if n.Node < 0 {
		n.Binding = "none"
		return nil
	}
	var tried []string
	if p, err := exec.LookPath("numactl"); err == nil {
		node := strconv.Itoa(n.Node)
		prefix := []string{p, "--cpunodebind=" + node, "--membind=" + node}
		if err := probe(ctx, prefix); err == nil {
			n.Binding, n.Command = "numactl", commandLine(prefix[0], prefix[1:]...)
			n.Note = singleNodeNote(n)
			return prefix
		} else {
			tried = append(tried, "numactl refused ("+err.Error()+")")
		}
	} else {
		tried = append(tried, "numactl is not installed")
	}
	if n.CPUs == "" {
		n.Binding = "none"
		n.Note = strings.Join(append(tried, "the node's CPU list is unknown, so taskset cannot stand in"), "; ")
		return nil
	}
	if p, err := exec.LookPath("taskset"); err == nil {
		prefix := []string{p, "-c", n.CPUs}
		if err := probe(ctx, prefix); err == nil {
			n.Binding, n.Command = "taskset", commandLine(prefix[0], prefix[1:]...)
			n.Note = strings.Join(append(tried, "CPUs only: pinned buffers land on the node by first touch from its CPUs"), "; ")
			if s := singleNodeNote(n); s != "" {
				n.Note += "; " + s
			}
			return prefix
		} else {
			tried = append(tried, "taskset refused ("+err.Error()+")")
		}
	} else {
		tried = append(tried, "taskset is not installed")
	}
	n.Binding = "none"
	n.Note = strings.Join(tried, "; ") + ": the program ran unbound (install numactl to bind it)"
	return nil
}

func singleNodeNote(n *runinfo.NUMA) string {
	if n.Nodes == 1 {
		return "this machine has one NUMA node, so binding cannot move memory closer"
	}
	return ""
}

// probe runs prefix with `true` to see that the binding is allowed here.
func probe(ctx context.Context, prefix []string) error {
	out, err := askTool(ctx, prefix[0], append(prefix[1:], "true")...)
	if err != nil {
		return fmt.Errorf("%s", firstLine(string(out), err.Error()))
	}
	return nil
}
