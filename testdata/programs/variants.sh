#!/usr/bin/env bash
# Derive two variants of kernels/pinned.cu for captures of programs that follow
# the lesson but not nsyscheck's exact shape:
#   other-counts.cu  2 warm-ups + 7 timed runs, and three small device-to-host
#                    cudaMemcpyAsync calls (a readback) before part 2;
#   broken-pin.cu    its "pinned" buffer comes from malloc, not cudaMallocHost.
# usage: variants.sh path/to/pinned.cu OUTDIR
set -euo pipefail
src=$1 out=$2
mkdir -p "$out"
sed -e 's/constexpr int kWarmups = 3;/constexpr int kWarmups = 2;/' \
    -e 's/constexpr int kTimedRuns = 10;/constexpr int kTimedRuns = 7;/' \
    -e 's|^    cudaStream_t stream;$|    cudaStream_t stream;\n    {\n        cudaStream_t rb;\n        CUDA_CHECK(cudaStreamCreate(\&rb));\n        for (int i = 0; i < 3; ++i) CUDA_CHECK(cudaMemcpyAsync(check, dBuf, 4096, cudaMemcpyDeviceToHost, rb));\n        CUDA_CHECK(cudaStreamSynchronize(rb));\n        CUDA_CHECK(cudaStreamDestroy(rb));\n    }|' \
    "$src" > "$out/other-counts.cu"
sed -e 's|CUDA_CHECK(cudaMallocHost(&pinned, kMaxBytes));|pinned = static_cast<unsigned char*>(std::malloc(kMaxBytes));|' \
    -e 's|CUDA_CHECK(cudaFreeHost(pinned));|std::free(pinned);|' \
    "$src" > "$out/broken-pin.cu"
grep -q 'kTimedRuns = 7' "$out/other-counts.cu"
grep -q 'cudaStreamCreate(&rb)' "$out/other-counts.cu"
grep -q 'pinned = static_cast<unsigned char\*>(std::malloc' "$out/broken-pin.cu"
