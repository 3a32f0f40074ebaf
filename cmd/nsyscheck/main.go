// Command nsyscheck checks, from an Nsight Systems capture, the four
// predictions a CUDA lesson makes about pinned memory: pageable vs pinned
// copies, cudaMemcpyAsync blocking, zero-copy kernels, and what the capture's
// API trace shows. `nsyscheck run` makes a capture on a GPU machine;
// `nsyscheck verify` checks any capture offline.
package main

import (
	"os"
	"runtime/debug"
)

// softMemoryLimit is the heap size past which Go's collector works harder
// rather than let the heap grow to twice what is live (GOGC's default): on
// the 600,000-copy capture it keeps verify and audit near 230 MiB instead of
// 290-300 MiB, at the same CPU time. It is soft: a larger live heap still
// gets the memory it needs, the collector's share of the CPU capped by Go.
// GOMEMLIMIT in the environment replaces it.
const softMemoryLimit = 200 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimit)
	}
	os.Exit(Main(os.Args[1:], Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
}
