package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/nsyscheck/nsyscheck/internal/regular"
	"github.com/nsyscheck/nsyscheck/runinfo"
)

// LockDirEnv names the variable that moves the per-GPU lock files (default
// nsyscheck-locks in the system's temporary folder). Runs that should queue
// for a GPU must see the same folder.
const LockDirEnv = "NSYSCHECK_LOCK_DIR"

// BusyError is a GPU whose lock another run holds, with --no-wait.
type BusyError struct {
	GPU    int
	Path   string
	Holder *runinfo.LockInfo
}

func (e *BusyError) Error() string {
	who := "another nsyscheck run"
	if e.Holder != nil {
		who = e.Holder.String()
	}
	return fmt.Sprintf("GPU %d is in use by %s (lock %s); --no-wait does not queue: run again later, or without --no-wait to wait for it",
		e.GPU, who, e.Path)
}

// heldLock is an acquired lock; release it when the GPU is free again.
type heldLock struct{ f *os.File }

func (h *heldLock) release() {
	if h == nil || h.f == nil {
		return
	}
	// Empty the file first, so that content left after an unclean exit
	// marks a stale lock.
	_ = h.f.Truncate(0)
	_ = syscall.Flock(int(h.f.Fd()), syscall.LOCK_UN)
	_ = h.f.Close()
	h.f = nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// LockPath is the lock file of a GPU: named after its UUID, or bus id, or
// index, in dir (LockDirEnv's folder when dir is empty).
func LockPath(dir string, g runinfo.GPU) string {
	if dir == "" {
		dir = os.Getenv(LockDirEnv)
	}
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "nsyscheck-locks")
	}
	id := g.UUID
	if id == "" {
		id = g.BusID
	}
	if id == "" {
		id = strconv.Itoa(g.Index)
	}
	return filepath.Join(dir, "gpu-"+unsafeName.ReplaceAllString(id, "_")+".lock")
}

// acquireLock takes the GPU's lock, an flock on its lock file, which the
// kernel releases however the process ends. With wait it waits for the
// holder (telling warn once who that is); without, it fails at once with a
// *BusyError. Content left in a free lock file is a stale lock from a run
// that ended uncleanly: it is noted and taken over.
func acquireLock(ctx context.Context, path string, g runinfo.GPU, me runinfo.LockInfo, wait bool, warn io.Writer) (*heldLock, runinfo.Lock, error) {
	rec := runinfo.Lock{Path: path}
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return nil, rec, fmt.Errorf("create the lock folder %s: %w (set %s to a writable folder shared by the runs)", filepath.Dir(path), err, LockDirEnv)
	}
	// Let every user's runs queue on the same files.
	_ = os.Chmod(filepath.Dir(path), 0o1777)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NONBLOCK, 0o666)
	if err != nil {
		return nil, rec, fmt.Errorf("open the GPU lock %s: %w (set %s to a writable folder shared by the runs)", path, err, LockDirEnv)
	}
	// A FIFO, device or folder planted at the lock's path is no lock: its
	// record could be neither written nor read back.
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		what := "not a regular file"
		if err == nil {
			what = regular.Describe(st.Mode())
		}
		return nil, rec, fmt.Errorf("the GPU lock %s is %s (remove it, or set %s to another folder)", path, what, LockDirEnv)
	}
	_ = f.Chmod(0o666)
	start := time.Now()
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, rec, fmt.Errorf("lock %s: %w", path, err)
		}
		holder := readLockInfo(path)
		if rec.WaitedFor == nil {
			rec.WaitedFor = holder
		}
		if !wait {
			f.Close()
			return nil, rec, &BusyError{GPU: g.Index, Path: path, Holder: holder}
		}
		if !told && warn != nil {
			who := "another nsyscheck run"
			if holder != nil {
				who = holder.String()
			}
			fmt.Fprintf(warn, "nsyscheck: GPU %d is in use by %s: waiting for it (--no-wait fails instead)\n", g.Index, who)
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			rec.WaitedSeconds = time.Since(start).Seconds()
			return nil, rec, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	rec.WaitedSeconds = time.Since(start).Seconds()
	if prev := readLockInfo(path); prev != nil {
		rec.Stale = fmt.Sprintf("the lock held a record of %s, which ended without releasing it (killed, or its machine restarted); taken over", prev)
		if warn != nil {
			fmt.Fprintf(warn, "nsyscheck: warning: stale GPU lock %s: %s\n", path, rec.Stale)
		}
	}
	data, _ := json.Marshal(me)
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(append(data, '\n'), 0)
	}
	return &heldLock{f: f}, rec, nil
}

// readLockInfo reads a lock file's record, or nil when it holds none.
func readLockInfo(path string) *runinfo.LockInfo {
	data, err := regular.ReadFile(path, maxLockRecord)
	if err != nil || len(data) == 0 {
		return nil
	}
	var li runinfo.LockInfo
	if json.Unmarshal(data, &li) != nil || li.PID == 0 {
		return nil
	}
	return &li
}
