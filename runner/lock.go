package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/nsyscheck/nsyscheck/internal/proclocks"
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
	return fmt.Sprintf("GPU %d is in use by %s (lock %s); --no-wait does not queue: run again later, or without --no-wait to wait for it",
		e.GPU, holderName(e.Holder), e.Path)
}

// holderName names the run holding a lock, as far as it is known.
func holderName(h *runinfo.LockInfo) string {
	if h == nil {
		return "another nsyscheck run"
	}
	return h.String()
}

// heldLock is an acquired lock; release it when the GPU is free again.
type heldLock struct{ f *os.File }

func (h *heldLock) release() {
	if h == nil || h.f == nil {
		return
	}
	// Empty the record first: a free lock holds none.
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

// acquireLock takes the GPU's lock: an flock on its lock file, which the
// kernel releases however the process ends (killed with -9 included: the
// file is opened close-on-exec, so no child of the run keeps it either).
// With wait it blocks in the kernel until the holder lets go, telling warn
// once who that is; without, it fails at once with a *BusyError naming
// the holder. Once it holds the lock it writes its record (me) into the
// file; a record a killed holder left there is simply overwritten.
func acquireLock(ctx context.Context, path string, g runinfo.GPU, me runinfo.LockInfo, wait bool, warn io.Writer) (*heldLock, runinfo.Lock, error) {
	rec := runinfo.Lock{Path: path}
	f, err := openLockFile(path)
	if err != nil {
		return nil, rec, err
	}
	start := time.Now()
	err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		rec.WaitedFor = lockHolder(f, path)
		if !wait {
			f.Close()
			return nil, rec, &BusyError{GPU: g.Index, Path: path, Holder: rec.WaitedFor}
		}
		if warn != nil {
			fmt.Fprintf(warn, "nsyscheck: GPU %d is in use by %s: waiting for it (--no-wait fails instead)\n", g.Index, holderName(rec.WaitedFor))
		}
		err = waitLock(ctx, f) // on ctx's end, f is closed once the wait returns
		rec.WaitedSeconds = time.Since(start).Seconds()
		if ctx.Err() != nil {
			return nil, rec, ctx.Err()
		}
	}
	if err != nil {
		f.Close()
		return nil, rec, fmt.Errorf("lock %s: %w", path, err)
	}
	data, _ := json.Marshal(me)
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(append(data, '\n'), 0)
	}
	return &heldLock{f: f}, rec, nil
}

// openLockFile opens (creating) a GPU's lock file, readable and writable
// by every user's runs so that they queue on the same file. The lock folder
// lies in a folder every user may write to, so nothing planted there is
// followed: a link at the lock file's path is refused (opening it would
// truncate whatever it points at), and only a folder this run made itself
// is opened to every user (sticky, like /tmp), never one a link leads to.
func openLockFile(path string) (*os.File, error) {
	dir := filepath.Dir(path)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o777); err != nil {
			return nil, fmt.Errorf("create the lock folder %s: %w (set %s to a writable folder shared by the runs)", dir, err, LockDirEnv)
		}
		if err := os.Mkdir(dir, 0o777); err == nil {
			_ = os.Chmod(dir, os.ModeSticky|0o777)
		} else if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create the lock folder %s: %w (set %s to a writable folder shared by the runs)", dir, err, LockDirEnv)
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0o666)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("the GPU lock %s is a link, which a lock never is (remove it, or set %s to another folder)", path, LockDirEnv)
	}
	if err != nil {
		return nil, fmt.Errorf("open the GPU lock %s: %w (set %s to a writable folder shared by the runs)", path, err, LockDirEnv)
	}
	// A FIFO, device or folder planted at the lock's path is no lock: its
	// record could be neither written nor read back.
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		what := "not a regular file"
		if err == nil {
			what = regular.Describe(st.Mode())
		}
		return nil, fmt.Errorf("the GPU lock %s is %s (remove it, or set %s to another folder)", path, what, LockDirEnv)
	}
	_ = f.Chmod(0o666)
	return f, nil
}

// flock applies how to f, again when a signal interrupts it.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// waitLock blocks until the kernel grants f's lock, or ctx ends. When ctx
// ends first, the blocked call is left to return on its own and f is
// closed then, which lets go of the lock if it was granted meanwhile.
func waitLock(ctx context.Context, f *os.File) error {
	done := make(chan error, 1)
	go func() { done <- flock(f, syscall.LOCK_EX) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		go func() {
			<-done
			f.Close()
		}()
		return ctx.Err()
	}
}

// lockHolder says who holds the lock on f: the record in the file when the
// kernel's list of locks (/proc/locks) names the same process as holding
// it, or the kernel's holder alone when the record is another's (left by a
// run that was killed, and the holder has not written its own yet); the
// record as it is where the kernel's list cannot be read. nil when neither
// says.
func lockHolder(f *os.File, path string) *runinfo.LockInfo {
	rec := readLockInfo(path)
	pid, ok := flockHolder(f)
	switch {
	case !ok:
		return rec
	case rec != nil && rec.PID == pid:
		return rec
	case pid > 0:
		return &runinfo.LockInfo{PID: pid}
	}
	return nil
}

// flockHolder returns the process holding an flock on f's file, from the
// kernel's list of locks; ok is false where that cannot be read.
func flockHolder(f *os.File) (pid int, ok bool) {
	st, err := f.Stat()
	if err != nil {
		return 0, false
	}
	holders, _, err := proclocks.Flocks(st)
	if err != nil {
		return 0, false
	}
	if len(holders) == 0 {
		return 0, true
	}
	return holders[0], true
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
