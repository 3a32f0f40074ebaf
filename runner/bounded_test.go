package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nsyscheck/nsyscheck/runinfo"
)

// within fails the test when f takes more than 5 seconds: a FIFO read
// would block for ever.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no answer in 5 s", what)
	}
}

// A FIFO planted at a GPU lock's path is refused at once, naming it; a
// huge file there is neither read whole nor trusted as a record, and the
// lock is still taken (and its record written).
func TestLockPathFIFOAndHugeFile(t *testing.T) {
	ctx := context.Background()
	g := runinfo.GPU{Index: 0, UUID: "GPU-aaaa"}
	path := LockPath(t.TempDir(), g)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o666); err != nil {
		t.Skip(err)
	}
	within(t, "a FIFO lock", func() {
		_, _, err := acquireLock(ctx, path, g, runinfo.LockInfo{PID: 1}, true, nil)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "a FIFO (named pipe)") ||
			!strings.Contains(err.Error(), LockDirEnv) {
			t.Errorf("a FIFO at the lock path: %v", err)
		}
	})
	if li := readLockInfo(path); li != nil {
		t.Errorf("a FIFO read as a lock record: %+v", li)
	}

	huge := LockPath(t.TempDir(), g)
	writeFile(t, huge, `{"pid": 444, "dir": "/runs/killed"}`+strings.Repeat(" ", 100))
	if err := os.Truncate(huge, 2<<30); err != nil {
		t.Fatal(err)
	}
	within(t, "a 2 GiB lock file", func() {
		if li := readLockInfo(huge); li != nil {
			t.Errorf("a 2 GiB file read as a lock record: %+v", li)
		}
		h, rec, err := acquireLock(ctx, huge, g, runinfo.LockInfo{PID: 555}, true, nil)
		if err != nil {
			t.Fatalf("a 2 GiB stale lock file: %v", err)
		}
		defer h.release()
		if li := readLockInfo(huge); li == nil || li.PID != 555 {
			t.Errorf("the lock's record after taking it over: %+v (%+v)", li, rec)
		}
	})
}

// A FIFO or a huge file planted at a sysfs path LocateNUMA reads is not
// read: the node is unknown and the note says what the file is.
func TestLocateNUMAOddSysfsFiles(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no nvidia-smi
	ctx := context.Background()
	root := t.TempDir()
	node := filepath.Join(root, "bus/pci/devices/0000:9a:00.0/numa_node")
	writeFile(t, filepath.Join(root, "devices/system/node/node0/cpulist"), "0-7\n")
	writeFile(t, filepath.Join(root, "devices/system/node/node1/cpulist"), "8-15\n")
	if err := os.MkdirAll(filepath.Dir(node), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(node, 0o644); err != nil {
		t.Skip(err)
	}
	within(t, "a FIFO numa_node", func() {
		n := LocateNUMA(ctx, runinfo.GPU{BusID: "00000000:9A:00.0"}, root)
		if n.Node != -1 || !strings.Contains(n.Note, "a FIFO (named pipe)") {
			t.Errorf("a FIFO numa_node: %+v", n)
		}
	})
	if err := os.Remove(node); err != nil {
		t.Fatal(err)
	}
	writeFile(t, node, "1\n")
	if err := os.Truncate(node, 1<<30); err != nil {
		t.Fatal(err)
	}
	within(t, "a 1 GiB numa_node", func() {
		n := LocateNUMA(ctx, runinfo.GPU{BusID: "00000000:9A:00.0"}, root)
		if n.Node != -1 || !strings.Contains(n.Note, "more than 64 KiB") {
			t.Errorf("a 1 GiB numa_node: %+v", n)
		}
	})
	// A FIFO cpulist: the node is known, its CPUs are not, and nothing hangs.
	writeFile(t, node, "1\n")
	cpus := filepath.Join(root, "devices/system/node/node1/cpulist")
	if err := os.Remove(cpus); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(cpus, 0o644); err != nil {
		t.Fatal(err)
	}
	within(t, "a FIFO cpulist", func() {
		n := LocateNUMA(ctx, runinfo.GPU{BusID: "00000000:9A:00.0"}, root)
		if n.Node != 1 || n.CPUs != "" {
			t.Errorf("a FIFO cpulist: %+v", n)
		}
	})
}
