// Command nsyscheck checks, from an Nsight Systems capture, the four
// predictions a CUDA lesson makes about pinned memory: pageable vs pinned
// copies, cudaMemcpyAsync blocking, zero-copy kernels, and what the capture's
// API trace shows. `nsyscheck run` makes a capture on a GPU machine;
// `nsyscheck verify` checks any capture offline.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"runtime/pprof"
)

// softMemoryLimit is the heap size past which Go's collector works harder
// rather than let the heap grow to twice what is live (GOGC's default): on
// the 600,000-copy capture it keeps verify and audit near 230 MiB instead of
// 290-300 MiB, at the same CPU time. It is soft: a larger live heap still
// gets the memory it needs, the collector's share of the CPU capped by Go.
// GOMEMLIMIT in the environment replaces it.
const softMemoryLimit = 200 << 20

// cpuProfileEnv names the environment variable that, set to a file name,
// makes nsyscheck write a CPU profile of the whole command there (for `go
// tool pprof`; docs/performance.md says how it is used).
const cpuProfileEnv = "NSYSCHECK_CPUPROFILE"

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimit)
	}
	stop := startCPUProfile(os.Getenv(cpuProfileEnv))
	code := Main(os.Args[1:], Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}

// startCPUProfile starts a CPU profile written to path (none when path is
// empty) and returns what stops it. A profile that cannot be started is
// said on stderr; the command runs on without it.
func startCPUProfile(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "nsyscheck: %s=%s: no CPU profile: %v\n", cpuProfileEnv, path, err)
		if f != nil {
			f.Close()
		}
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "nsyscheck: %s=%s: %v\n", cpuProfileEnv, path, err)
		}
	}
}
