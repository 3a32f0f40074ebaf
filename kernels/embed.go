// Package kernels ships the CUDA source of the program nsyscheck profiles,
// so that `nsyscheck run` works from any folder.
package kernels

import _ "embed"

// PinnedSource is the text of pinned.cu.
//
//go:embed pinned.cu
var PinnedSource []byte

// PinnedFile is the file name PinnedSource is written under before nvcc builds it.
const PinnedFile = "pinned.cu"
