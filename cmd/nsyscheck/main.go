// Command nsyscheck checks, from an Nsight Systems capture, the four
// predictions a CUDA lesson makes about pinned memory: pageable vs pinned
// copies, cudaMemcpyAsync blocking, zero-copy kernels, and what the capture's
// API trace shows. `nsyscheck run` makes a capture on a GPU machine;
// `nsyscheck verify` checks any capture offline.
package main

import (
	"os"
)

func main() {
	os.Exit(Main(os.Args[1:], Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
}
