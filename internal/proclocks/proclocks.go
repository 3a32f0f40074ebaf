// Package proclocks reads the kernel's list of file locks (/proc/locks on
// Linux): which processes hold an flock on a file, and which are blocked
// waiting for it. The GPU lock asks it who holds a GPU, and tests ask it
// whether a run is queued, instead of sleeping for a guess.
package proclocks

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nsyscheck/nsyscheck/internal/regular"
)

// listFile is the kernel's list of locks.
const listFile = "/proc/locks"

// maxList bounds the list read, a line per lock on the machine.
const maxList = 16 << 20

// Flocks returns the processes holding an flock on the file st describes
// and those blocked waiting for one. A process outside this one's PID
// namespace is listed as 0 or less. It fails where the kernel's list
// cannot be read (not Linux, no /proc).
func Flocks(st os.FileInfo) (holders, waiters []int, err error) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, nil, fmt.Errorf("no device and inode for %s", st.Name())
	}
	data, err := regular.ReadFile(listFile, maxList)
	if err != nil {
		return nil, nil, err
	}
	// The kernel prints the device as major:minor in hex, then the inode.
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(sys.Dev)), unix.Minor(uint64(sys.Dev)), sys.Ino)
	for line := range strings.Lines(string(data)) {
		// 1: FLOCK  ADVISORY  WRITE 4242 00:2f:1234 0 EOF
		// 1: -> FLOCK  ADVISORY  WRITE 4243 00:2f:1234 0 EOF   (a waiter)
		f := strings.Fields(line)
		waiting := len(f) > 1 && f[1] == "->"
		if waiting {
			f = append(f[:1], f[2:]...)
		}
		if len(f) < 6 || f[1] != "FLOCK" || f[5] != want {
			continue
		}
		pid, err := strconv.Atoi(f[4])
		if err != nil {
			continue
		}
		if waiting {
			waiters = append(waiters, pid)
		} else {
			holders = append(holders, pid)
		}
	}
	return holders, waiters, nil
}

// AwaitWaiter returns once a process is blocked waiting for an flock on the
// file at path, or fails after within.
func AwaitWaiter(path string, within time.Duration) error {
	for deadline := time.Now().Add(within); ; time.Sleep(time.Millisecond) {
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		_, waiters, err := Flocks(st)
		if err != nil {
			return err
		}
		if len(waiters) > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no process waited for the lock on %s within %s", path, within)
		}
	}
}
