// Package leftover tells the temporary files and folders that runs killed
// before their cleanup left behind from those of runs still at work. Every
// temporary name nsyscheck makes carries its owner's process id after a
// fixed prefix ("PREFIX<pid>-..."), so a later run can remove what a dead
// owner left.
package leftover

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// OwnerGone reports whether a temporary file whose name, after its prefix,
// is rest ("PID-...") was left by a process that is no longer running. A
// name without a process id (an older release's) or a file more than a day
// old counts as left behind once it is an hour old.
func OwnerGone(rest string, mod time.Time) bool {
	age := time.Since(mod)
	if age > 24*time.Hour {
		return true
	}
	pidText, _, ok := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(pidText)
	if !ok || err != nil || pid <= 0 {
		return age > time.Hour
	}
	if pid == os.Getpid() {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
