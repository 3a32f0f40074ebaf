// managed.cu: unified (managed) memory moving both ways, by prefetch and by
// page faults. A buffer from cudaMallocManaged is written by the host; then,
// each round: its first half is prefetched to the GPU (cudaMemPrefetchAsync),
// a kernel touches the whole buffer (the second half migrates on GPU page
// faults), the first half is prefetched back to the host, and the host
// touches the whole buffer (the second half migrates back on CPU faults).
//
// Usage: managed [--mib N] [--rounds N]
// Each phase sits in an NVTX range: "prefetch-to-device", "kernel",
// "prefetch-to-host", "host-touch"; each round in a range "round". The
// program prints each phase's host time per round and the medians.
// Exit status: 0 ok, 1 usage, 2 CUDA error, 3 wrong results.

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include "cap_common.h"

const char* capProgram = "managed";

namespace {

__global__ void touch(float* x, size_t n) {
    size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) x[i] += 1.0f;
}

// prefetch moves count bytes at p to the device (toDevice) or to the host.
void prefetch(const void* p, size_t count, bool toDevice, cudaStream_t s) {
    cudaMemLocation loc{};
    loc.type = toDevice ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
    loc.id = 0;
#if CUDART_VERSION >= 13000
    CUDA_CHECK(cudaMemPrefetchAsync(p, count, loc, 0, s));
#else
    CUDA_CHECK(cudaMemPrefetchAsync_v2(p, count, loc, 0, s));
#endif
}

}  // namespace

int main(int argc, char** argv) {
    size_t bytes = size_t(intFlag(argc, argv, "--mib", 256)) << 20;
    int rounds = int(intFlag(argc, argv, "--rounds", 3));
    size_t n = bytes / sizeof(float), half = bytes / 2;

    CUDA_CHECK(cudaSetDevice(0));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    int concurrent = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, 0));
    float* x = nullptr;
    CUDA_CHECK(cudaMallocManaged(&x, bytes));
    for (size_t i = 0; i < n; ++i) x[i] = 1.0f;
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::printf("managed memory on %s: %zu MiB from cudaMallocManaged, %d rounds, "
                "concurrentManagedAccess %d; half prefetched each way, half left to page faults\n",
                prop.name, bytes >> 20, rounds, concurrent);

    const char* names[4] = {"prefetch-to-device", "kernel", "prefetch-to-host", "host-touch"};
    std::vector<double> t[4];
    for (int r = 0; r < rounds; ++r) {
        nvtxRangePushA("round");
        for (int ph = 0; ph < 4; ++ph) {
            double t0 = hostMs();
            nvtxRangePushA(names[ph]);
            switch (ph) {
                case 0: prefetch(x, half, true, s); break;
                case 1:
                    touch<<<unsigned((n + 255) / 256), 256, 0, s>>>(x, n);
                    CUDA_CHECK(cudaGetLastError());
                    break;
                case 2: prefetch(x, half, false, s); break;
                case 3:
                    for (size_t i = 0; i < n; ++i) x[i] += 1.0f;
                    break;
            }
            CUDA_CHECK(cudaStreamSynchronize(s));
            nvtxRangePop();
            t[ph].push_back(hostMs() - t0);
        }
        nvtxRangePop();
    }
    for (int ph = 0; ph < 4; ++ph) printSeries(names[ph], t[ph]);
    float want = 1.0f + 2.0f * rounds;
    bool ok = x[0] == want && x[n / 2] == want && x[n - 1] == want;
    std::printf("results %s (%.1f, want %.1f)\n", ok ? "right" : "WRONG", x[n - 1], want);
    CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaFree(x));
    return ok ? 0 : 3;
}
