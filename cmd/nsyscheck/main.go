// Command nsyscheck checks, from an Nsight Systems capture, the four
// predictions a CUDA lesson makes about pinned memory: pageable vs pinned
// copies, cudaMemcpyAsync blocking, zero-copy kernels, and what the capture's
// API trace shows. `nsyscheck run` makes a capture on a GPU machine;
// `nsyscheck verify` checks any capture offline.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"time"
)

// cpuProfileEnv names the environment variable that, set to a file name,
// makes nsyscheck write a CPU profile of the whole command there (for `go
// tool pprof`; docs/performance.md says how it is used).
const cpuProfileEnv = "NSYSCHECK_CPUPROFILE"

// memProfileEnv names the environment variable that, set to a file name,
// makes nsyscheck write there, when the command ends, the heap profile
// taken at its peak (for `go tool pprof -sample_index=inuse_space` or
// `alloc_space`; docs/performance.md says how it is used). One allocation per 64 KiB is
// sampled while it is set (Go's default is one per 512 KiB).
const memProfileEnv = "NSYSCHECK_MEMPROFILE"

// traceEnv names the environment variable that, set to a file name, makes
// nsyscheck write an execution trace of the whole command there (for `go
// tool trace`): the audit's stages are its regions, each on the goroutine
// that runs it, so the trace shows what runs beside what and what waits
// (docs/performance.md says how it is read).
const traceEnv = "NSYSCHECK_TRACE"

func main() {
	os.Exit(command())
}

// command runs nsyscheck as a process does, with os.Args, the standard
// streams, the soft memory limit and the profiles its environment asks
// for, and returns its exit status (the test binary's scripts run it too).
func command() int {
	stopLimit := func() {}
	if os.Getenv("GOMEMLIMIT") == "" {
		stopLimit = followLiveHeap()
	}
	stop := startCPUProfile(os.Getenv(cpuProfileEnv))
	stopMem := startMemProfile(os.Getenv(memProfileEnv))
	stopTrace := startTrace(os.Getenv(traceEnv))
	code := Main(os.Args[1:], Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stopTrace()
	stopMem()
	stop()
	stopLimit()
	return code
}

// startCPUProfile starts a CPU profile written to path (none when path is
// empty) and returns what stops it. A profile that cannot be started is
// said on stderr; the command runs on without it.
func startCPUProfile(path string) (stop func()) {
	return startWriting(cpuProfileEnv, path, "CPU profile", pprof.StartCPUProfile, pprof.StopCPUProfile)
}

// startTrace starts an execution trace written to path (none when path is
// empty) and returns what stops it. A trace that cannot be started is said
// on stderr; the command runs on without it.
func startTrace(path string) (stop func()) {
	return startWriting(traceEnv, path, "trace", trace.Start, trace.Stop)
}

// startWriting creates path, which the environment variable env named,
// and starts what writes into it (start); the returned function ends it
// (end) and closes the file. Nothing is started when path is empty; a
// file that cannot be made or written is said on stderr, naming what (a
// CPU profile, a trace) it was to hold.
func startWriting(env, path, what string, start func(io.Writer) error, end func()) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = start(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "nsyscheck: %s=%s: no %s: %v\n", env, path, what, err)
		if f != nil {
			f.Close()
		}
		return func() {}
	}
	return func() {
		end()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "nsyscheck: %s=%s: %v\n", env, path, err)
		}
	}
}

// startMemProfile samples the heap for a profile written to path when the
// returned function is called (nothing when path is empty). The profile is
// the one taken when the heap's live bytes were highest (looked at every
// 50 ms, a profile taken each time they pass the highest seen by a tenth),
// so that its in-use figures are those of the peak, and its alloc_space
// everything allocated until then. A profile that cannot be written is said
// on stderr.
func startMemProfile(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	runtime.MemProfileRate = 64 << 10
	// take runs on the watcher's goroutine, and once more after it stopped.
	var peak bytes.Buffer
	take := func() {
		peak.Reset()
		pprof.Lookup("heap").WriteTo(&peak, 0)
	}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var highest uint64
	stopLooking := every(50*time.Millisecond, func() {
		metrics.Read(sample)
		if live := sample[0].Value.Uint64(); live > highest+highest/10 {
			highest = live
			take()
		}
	})
	return func() {
		stopLooking()
		if peak.Len() == 0 {
			take()
		}
		err := os.WriteFile(path, peak.Bytes(), 0o644)
		if err != nil {
			fmt.Fprintf(os.Stderr, "nsyscheck: %s=%s: no heap profile: %v\n", memProfileEnv, path, err)
		}
	}
}
