package runner

import (
	"github.com/nsyscheck/nsyscheck/internal/regular"
)

// Bounds on the small files a run reads: its own run.json, a GPU lock's
// record and a sysfs value. A FIFO or device planted at one of these paths
// is refused without blocking (regular.ReadFile), a huge file without
// reading it whole.
const (
	// maxLockRecord bounds a lock file's record, one line of JSON.
	maxLockRecord = 64 << 10
	// maxSysfsValue bounds a sysfs attribute (numa_node, cpulist).
	maxSysfsValue = 64 << 10
)

// readSysfs reads a sysfs attribute as a regular file of at most
// maxSysfsValue bytes.
func readSysfs(path string) ([]byte, error) {
	return regular.ReadFile(path, maxSysfsValue)
}
