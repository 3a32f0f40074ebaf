// Package proctest holds the process check shared by the tests that
// interrupt an nsys export and then make sure nothing it started lives on.
package proctest

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Gone reports whether the process pid has ended within wait: it no longer
// exists, or it is a zombie (ended, not yet reaped by its parent, which
// still answers kill 0; /proc/PID/stat then says Z).
func Gone(pid int, wait time.Duration) bool {
	for deadline := time.Now().Add(wait); ; {
		stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) || strings.Contains(string(stat), ") Z ") {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}
