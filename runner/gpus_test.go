package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nsyscheck/nsyscheck/internal/proclocks"
	"github.com/nsyscheck/nsyscheck/runinfo"
)

func TestParseGPUListAndSelect(t *testing.T) {
	out := "NVIDIA H200, 580.65.06, 9.0, 5, 5, 16, 16, 0, 00000000:19:00.0, GPU-aaaa\n" +
		"NVIDIA H200, 580.65.06, 9.0, 4, 5, 16, 16, 1, 00000000:9A:00.0, GPU-bbbb\n"
	gpus, err := parseGPUList(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(gpus) != 2 || gpus[1].Index != 1 || gpus[1].BusID != "00000000:9A:00.0" || gpus[1].UUID != "GPU-bbbb" || gpus[1].PCIe.GenCurrent != 4 {
		t.Fatalf("got %+v", gpus)
	}
	if v := gpus[1].VisibleDevice(); v != "GPU-bbbb" {
		t.Errorf("VisibleDevice = %q, want the UUID", v)
	}
	// An nvidia-smi answering only the first seven fields: index by line.
	old, err := parseGPUList("NVIDIA H200, 580.65.06, 9.0, 5, 5, 16, 16\nNVIDIA H200, 580.65.06, 9.0, 5, 5, 16, 16\n")
	if err != nil || len(old) != 2 || old[1].Index != 1 || old[1].VisibleDevice() != "1" {
		t.Fatalf("seven fields: %+v, %v", old, err)
	}
	sel, err := SelectGPUs(gpus, "1")
	if err != nil || len(sel) != 1 || sel[0].UUID != "GPU-bbbb" {
		t.Errorf("--gpu 1: %+v, %v", sel, err)
	}
	if sel, err := SelectGPUs(gpus, "all"); err != nil || len(sel) != 2 {
		t.Errorf("--gpu all: %+v, %v", sel, err)
	}
	if _, err := SelectGPUs(gpus, "2"); err == nil || !strings.Contains(err.Error(), "nvidia-smi lists 0, 1") {
		t.Errorf("--gpu 2: %v", err)
	}
	if _, err := SelectGPUs(gpus, "-1"); err == nil {
		t.Error("--gpu -1 accepted")
	}
	if _, err := parseGPUList("\n"); err == nil {
		t.Error("an empty list accepted")
	}
	// Two GPUs of one index: --gpu all once ran the second into the
	// first's run folder, and asked for another --out.
	twice := "NVIDIA H200, 580.65.06, 9.0, 5, 5, 16, 16, 0, 00000000:19:00.0, GPU-aaaa\n" +
		"NVIDIA H200, 580.65.06, 9.0, 5, 5, 16, 16, 0, 00000000:9A:00.0, GPU-bbbb\n"
	if _, err := parseGPUList(twice); err == nil || !strings.Contains(err.Error(), "it lists GPU index 0 twice (bus 00000000:19:00.0 and bus 00000000:9A:00.0)") {
		t.Errorf("one index twice: %v", err)
	}
}

func TestSysfsBusID(t *testing.T) {
	for in, want := range map[string]string{
		"00000000:19:00.0": "0000:19:00.0",
		"00000000:9A:00.0": "0000:9a:00.0",
		"0001:3B:00.0":     "0001:3b:00.0",
		"00:06.0":          "0000:06.0",
	} {
		if got := sysfsBusID(in); got != want {
			t.Errorf("sysfsBusID(%q) = %q, want %q", in, got, want)
		}
	}
}

// The matrix as nvidia-smi topo -m printed it on the H200 machine (with its
// underline escapes), and one of two GPUs on two nodes.
func TestParseTopo(t *testing.T) {
	real := "\t\x1b[4mGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\nGPU0\t X \t0-15\t0\t\tN/A\n\nLegend:\n\n  X    = Self\n"
	node, cpus, err := parseTopo(real, 0)
	if err != nil || node != 0 || cpus != "0-15" {
		t.Errorf("H200 machine: node %d cpus %q err %v", node, cpus, err)
	}
	two := "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \tSYS\t0-23,48-71\t0\t\tN/A\nGPU1\tSYS\t X \t24-47,72-95\t1\t\tN/A\n"
	node, cpus, err = parseTopo(two, 1)
	if err != nil || node != 1 || cpus != "24-47,72-95" {
		t.Errorf("two nodes: node %d cpus %q err %v", node, cpus, err)
	}
	if _, _, err := parseTopo(two, 2); err == nil || !strings.Contains(err.Error(), "no row for GPU2") {
		t.Errorf("missing row: %v", err)
	}
	if _, _, err := parseTopo("\tGPU0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t0-15\tN/A\n", 0); err == nil {
		t.Error("N/A affinity accepted as a node")
	}
	if _, _, err := parseTopo("GPU0 X\n", 0); err == nil {
		t.Error("a matrix without NUMA Affinity accepted")
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLocateNUMA(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no nvidia-smi: sysfs alone
	ctx := context.Background()
	two := t.TempDir()
	writeFile(t, filepath.Join(two, "bus/pci/devices/0000:9a:00.0/numa_node"), "1\n")
	writeFile(t, filepath.Join(two, "devices/system/node/node0/cpulist"), "0-7\n")
	writeFile(t, filepath.Join(two, "devices/system/node/node1/cpulist"), "8-15\n")
	n := LocateNUMA(ctx, runinfo.GPU{Index: 1, BusID: "00000000:9A:00.0"}, two)
	if n.Node != 1 || n.CPUs != "8-15" || n.Nodes != 2 || !strings.HasSuffix(n.From, "0000:9a:00.0/numa_node") {
		t.Errorf("two nodes: %+v", n)
	}
	// The H200 machine: numa_node -1 and one node, which is then the GPU's.
	one := t.TempDir()
	writeFile(t, filepath.Join(one, "bus/pci/devices/0000:00:06.0/numa_node"), "-1\n")
	writeFile(t, filepath.Join(one, "devices/system/node/node0/cpulist"), "0-15\n")
	n = LocateNUMA(ctx, runinfo.GPU{BusID: "00000000:00:06.0"}, one)
	if n.Node != 0 || n.CPUs != "0-15" || !strings.Contains(n.From, "only NUMA node") || !strings.Contains(n.From, "says -1") {
		t.Errorf("one node: %+v", n)
	}
	// -1 on a machine of two nodes: unknown, unbound, and said why.
	writeFile(t, filepath.Join(two, "bus/pci/devices/0000:19:00.0/numa_node"), "-1\n")
	n = LocateNUMA(ctx, runinfo.GPU{BusID: "00000000:19:00.0"}, two)
	if n.Node != -1 || n.Binding != "none" || !strings.Contains(n.Note, "says -1") {
		t.Errorf("-1 of two: %+v", n)
	}
	if prefix := Bind(ctx, &n); prefix != nil || n.Binding != "none" {
		t.Errorf("bound an unknown node: %v %+v", prefix, n)
	}
	// Nothing to read at all.
	n = LocateNUMA(ctx, runinfo.GPU{}, t.TempDir())
	if n.Node != -1 || !strings.Contains(n.Note, "no PCI bus id") || !strings.Contains(n.Note, "nvidia-smi not found") {
		t.Errorf("nothing: %+v", n)
	}
}

func TestParseComputeApps(t *testing.T) {
	out := "1549, /usr/bin/python3, 776, GPU-aaaa\n77, ./other, 10, GPU-bbbb\n"
	procs, bad := parseComputeApps(out, "GPU-aaaa")
	if bad != "" || len(procs) != 1 || procs[0].PID != 1549 || procs[0].Name != "python3" || procs[0].UsedMiB != 776 {
		t.Errorf("got %+v %q", procs, bad)
	}
	if procs, bad := parseComputeApps("", "GPU-aaaa"); bad != "" || len(procs) != 0 {
		t.Errorf("idle: %+v %q", procs, bad)
	}
	if _, bad := parseComputeApps("NVIDIA H200, 580.65.06, 9.0", ""); bad == "" {
		t.Error("a line without a pid accepted")
	}
	a := &runinfo.GPUActivity{Utilization: []int{0, 3, 0}}
	if a.Busy() {
		t.Error("3% counted as busy")
	}
	a.Utilization[1] = 40
	if !a.Busy() {
		t.Error("40% not busy")
	}
	if !(&runinfo.GPUActivity{Processes: procs}).Busy() {
		t.Error("a compute process not busy")
	}
}

// Two holders of one GPU lock: the second waits in the kernel until the
// first releases, says for whom it waits, and records it; with no wait it
// fails at once with the holder named. A record a killed holder left is
// overwritten by the next holder, and not taken for the holder's while
// another process holds the lock.
func TestLockQueueNoWait(t *testing.T) {
	ctx := context.Background()
	g := runinfo.GPU{Index: 0, UUID: "GPU-aaaa/../x"}
	path := LockPath(t.TempDir(), g)
	if strings.Contains(filepath.Base(path), "/") || !strings.HasPrefix(filepath.Base(path), "gpu-GPU-aaaa") {
		t.Fatalf("lock path %s", path)
	}
	first := runinfo.LockInfo{PID: os.Getpid(), Dir: "/runs/a", Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	h1, rec, err := acquireLock(ctx, path, g, first, true, nil)
	if err != nil || rec.WaitedFor != nil {
		t.Fatalf("first: %+v %v", rec, err)
	}

	_, _, err = acquireLock(ctx, path, g, runinfo.LockInfo{PID: 222}, false, nil)
	var busy *BusyError
	if !errors.As(err, &busy) || busy.Holder == nil || busy.Holder.PID != os.Getpid() ||
		!strings.Contains(err.Error(), "run folder /runs/a, since 03:04:05") || !strings.Contains(err.Error(), "--no-wait") {
		t.Fatalf("no-wait: %v", err)
	}

	var warn bytes.Buffer
	done := make(chan runinfo.Lock)
	go func() {
		h2, rec, err := acquireLock(ctx, path, g, runinfo.LockInfo{PID: 333, Dir: "/runs/c"}, true, &warn)
		if err != nil {
			t.Error(err)
		}
		h2.release()
		done <- rec
	}()
	awaitLockWaiter(t, path)
	select {
	case <-done:
		t.Fatal("the second run did not wait")
	default:
	}
	h1.release()
	rec = <-done
	if rec.WaitedFor == nil || rec.WaitedFor.Dir != "/runs/a" || rec.WaitedSeconds <= 0 {
		t.Errorf("waited: %+v", rec)
	}
	if !strings.Contains(warn.String(), "GPU 0 is in use by nsyscheck run pid "+strconv.Itoa(os.Getpid())+" (run folder /runs/a") {
		t.Errorf("waiting said %q", warn.String())
	}
	if data, _ := os.ReadFile(path); len(data) != 0 {
		t.Errorf("a released lock keeps %q", data)
	}

	// A record left by a run that was killed, while another holder (here
	// another open file of this process) has not written its own yet: the
	// kernel's holder is named, not the dead run.
	writeFile(t, path, `{"pid": 444, "dir": "/runs/killed", "started": "2026-01-02T03:04:05Z"}`+"\n")
	other, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	_, _, err = acquireLock(ctx, path, g, runinfo.LockInfo{PID: 555}, false, nil)
	if !errors.As(err, &busy) || busy.Holder == nil || busy.Holder.PID != os.Getpid() || strings.Contains(err.Error(), "killed") {
		t.Errorf("a dead run's record while another holds the lock: %v", err)
	}
	other.Close()
	// Free again: the next holder overwrites the dead run's record.
	h3, rec, err := acquireLock(ctx, path, g, runinfo.LockInfo{PID: 555}, true, nil)
	if err != nil || rec.WaitedFor != nil {
		t.Errorf("taking a lock with a dead run's record: %+v %v", rec, err)
	}
	if li := readLockInfo(path); li == nil || li.PID != 555 {
		t.Errorf("the record after taking the lock: %+v", li)
	}
	h3.release()

	// Waiting ends with the context.
	h4, _, _ := acquireLock(ctx, path, g, runinfo.LockInfo{PID: 666}, true, nil)
	defer h4.release()
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error)
	go func() {
		_, _, err := acquireLock(cctx, path, g, runinfo.LockInfo{PID: 777}, true, nil)
		errc <- err
	}()
	awaitLockWaiter(t, path)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v", err)
	}
}

// lockHelperEnv makes the test binary a process that takes the GPU lock at
// the path it names, says "locked" on stdout, and holds it until killed.
const lockHelperEnv = "NSYSCHECK_TEST_LOCK_HOLDER"

func TestLockHolderProcess(t *testing.T) {
	path := os.Getenv(lockHelperEnv)
	if path == "" {
		t.Skip("run by TestLockReleasedOnKill as the holding process")
	}
	_, _, err := acquireLock(context.Background(), path, runinfo.GPU{UUID: "GPU-kill"}, runinfo.LockInfo{PID: os.Getpid(), Dir: "/runs/holder", Started: time.Now()}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("locked")
	select {}
}

// TestLockReleasedOnKill: another process holds the GPU lock; --no-wait
// fails at once naming it (its pid and run folder), a waiting run queues
// in the kernel, and when the holder is killed with SIGKILL (no chance to
// clean up) the kernel releases the lock and the waiting run gets it.
func TestLockReleasedOnKill(t *testing.T) {
	ctx := context.Background()
	g := runinfo.GPU{UUID: "GPU-kill"}
	path := LockPath(t.TempDir(), g)
	holder := exec.Command(os.Args[0], "-test.run=^TestLockHolderProcess$")
	holder.Env = append(os.Environ(), lockHelperEnv+"="+path)
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("the holding process said %q, %v", line, err)
	}

	_, _, err = acquireLock(ctx, path, g, runinfo.LockInfo{PID: os.Getpid()}, false, nil)
	var busy *BusyError
	if !errors.As(err, &busy) || busy.Holder == nil || busy.Holder.PID != holder.Process.Pid || busy.Holder.Dir != "/runs/holder" {
		t.Fatalf("no-wait while another process holds the lock: %v", err)
	}
	t.Logf("--no-wait: %v", err)

	type got struct {
		h   *heldLock
		rec runinfo.Lock
		err error
	}
	done := make(chan got)
	go func() {
		h, rec, err := acquireLock(ctx, path, g, runinfo.LockInfo{PID: os.Getpid(), Dir: "/runs/next"}, true, nil)
		done <- got{h, rec, err}
	}()
	awaitLockWaiter(t, path)
	killed := time.Now()
	if err := holder.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.h.release()
	t.Logf("the waiting run got the lock %s after the holder was killed with SIGKILL, having waited %.3f s for %s",
		time.Since(killed).Round(time.Microsecond), r.rec.WaitedSeconds, r.rec.WaitedFor)
	if r.rec.WaitedFor == nil || r.rec.WaitedFor.PID != holder.Process.Pid {
		t.Errorf("the wait names %+v, want the killed holder", r.rec.WaitedFor)
	}
	if li := readLockInfo(path); li == nil || li.Dir != "/runs/next" {
		t.Errorf("the record after the killed holder: %+v", li)
	}
}

// awaitLockWaiter returns once the kernel lists a process blocked on the
// lock file at path, so that a test knows a run is queued without
// sleeping for a guess.
func awaitLockWaiter(t *testing.T, path string) {
	t.Helper()
	if err := proclocks.AwaitWaiter(path, 10*time.Second); err != nil {
		t.Fatal(err)
	}
}

// Nothing planted in the shared lock folder is followed: a link at a
// lock file's path is refused and what it points at is left as it was,
// and a lock folder that is a link to another folder is used but not
// opened to every user.
func TestLockRefusesLinks(t *testing.T) {
	ctx := context.Background()
	g := runinfo.GPU{UUID: "GPU-link"}
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "notes.txt")
	writeFile(t, victim, "the user's notes\n")
	path := LockPath(dir, g)
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	_, _, err := acquireLock(ctx, path, g, runinfo.LockInfo{PID: 1}, false, nil)
	if err == nil || !strings.Contains(err.Error(), "is a link") || !strings.Contains(err.Error(), LockDirEnv) {
		t.Errorf("a link at the lock path: %v", err)
	}
	if data, _ := os.ReadFile(victim); string(data) != "the user's notes\n" {
		t.Errorf("the link's target was written: %q", data)
	}

	private := t.TempDir()
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(t.TempDir(), "locks")
	if err := os.Symlink(private, linked); err != nil {
		t.Fatal(err)
	}
	h, _, err := acquireLock(ctx, LockPath(linked, g), g, runinfo.LockInfo{PID: 1}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.release()
	if st, err := os.Stat(private); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the folder a linked lock folder leads to: %v %v", st.Mode(), err)
	}
	// A lock folder of its own making is shared, sticky.
	fresh := filepath.Join(t.TempDir(), "new", "locks")
	if h, _, err = acquireLock(ctx, LockPath(fresh, g), g, runinfo.LockInfo{PID: 1}, false, nil); err != nil {
		t.Fatal(err)
	}
	h.release()
	if st, err := os.Stat(fresh); err != nil || st.Mode()&os.ModeSticky == 0 || st.Mode().Perm() != 0o777 {
		t.Errorf("a new lock folder: %v %v", st.Mode(), err)
	}
}
