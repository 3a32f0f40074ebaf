// nullstream.cu: the legacy default (NULL) stream's order, as a capture
// shows it. Each step copies a host buffer in on a side stream, runs a long
// kernel there, runs a short kernel on the NULL stream and waits for the
// NULL stream alone (cudaStreamSynchronize(0)); then the host works for a
// while outside CUDA and copies a small result back on the side stream.
// Where the side stream is blocking (cudaStreamCreate) the short kernel,
// and so the wait, waits for the long kernel: the host's work comes after
// it. Where it is non-blocking (cudaStreamNonBlocking) the wait returns at
// once and the host's work runs beside the long kernel. The per-thread
// default stream (cudaStreamPerThread) is blocking too.
//
// Usage: nullstream [--pinned] [--steps N] [--mib N] [--long-us N] [--host-us N]
//   default   the host buffer comes from malloc (pageable);
//   --pinned  it comes from cudaMallocHost.
// Steps sit in NVTX ranges named after their side stream: "blocking",
// "nonblocking", "per-thread"; one step of each runs first in "warmup".
// The program prints every step's host time and the median per range.
// Exit status: 0 ok, 1 usage, 2 CUDA error.

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <string>

#include "cap_common.h"

const char* capProgram = "nullstream";

namespace {

constexpr size_t kMiB = size_t(1) << 20;

// spin holds one GPU thread for about ns nanoseconds of the GPU's clock.
__global__ void spin(long long ns, int* out) {
    long long t0 = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    long long t = t0;
    while (t - t0 < ns) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    *out = int(t - t0);
}

// hostWork keeps the host busy for us microseconds without a CUDA call.
void hostWork(long us) {
    double until = hostMs() + double(us) / 1000;
    while (hostMs() < until) {
    }
}

struct Steps {
    size_t bytes;
    long longUs, hostUs;
    char* host;
    char* dev;
    int* flag;
    char* back;

    // step runs one step with side stream s inside range and returns its
    // host time in ms.
    double step(cudaStream_t s, const char* range) {
        double t0 = hostMs();
        nvtxRangePushA(range);
        CUDA_CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s));
        spin<<<1, 1, 0, s>>>(longUs * 1000, flag);
        CUDA_CHECK(cudaGetLastError());
        spin<<<1, 1, 0, 0>>>(20 * 1000, flag + 1);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaStreamSynchronize(0));
        hostWork(hostUs);
        CUDA_CHECK(cudaMemcpyAsync(back, dev, 4096, cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
        nvtxRangePop();
        return hostMs() - t0;
    }
};

}  // namespace

int main(int argc, char** argv) {
    bool pinned = hasFlag(argc, argv, "--pinned");
    int steps = int(intFlag(argc, argv, "--steps", 20));
    Steps st{};
    st.bytes = size_t(intFlag(argc, argv, "--mib", 32)) * kMiB;
    st.longUs = intFlag(argc, argv, "--long-us", 3000);
    st.hostUs = intFlag(argc, argv, "--host-us", 1000);

    CUDA_CHECK(cudaSetDevice(0));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    cudaStream_t blocking, nonBlocking;
    CUDA_CHECK(cudaStreamCreate(&blocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&nonBlocking, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc(&st.dev, st.bytes));
    CUDA_CHECK(cudaMalloc(&st.flag, 2 * sizeof(int)));
    CUDA_CHECK(cudaMallocHost(&st.back, 4096));
    if (pinned) {
        CUDA_CHECK(cudaMallocHost(&st.host, st.bytes));
    } else {
        st.host = static_cast<char*>(std::malloc(st.bytes));
        if (!st.host) {
            std::fprintf(stderr, "nullstream: malloc of %zu bytes failed\n", st.bytes);
            return 2;
        }
    }
    std::memset(st.host, 1, st.bytes);
    std::printf("nullstream on %s: memory %s, %zu MiB copied in a step, long kernel %ld us, host work %ld us, %d steps a range\n",
                prop.name, pinned ? "pinned" : "pageable", st.bytes / kMiB, st.longUs, st.hostUs, steps);

    struct Side {
        cudaStream_t s;
        const char* name;
    } sides[] = {{blocking, "blocking"}, {nonBlocking, "nonblocking"}, {cudaStreamPerThread, "per-thread"}};
    for (const Side& side : sides) st.step(side.s, "warmup");
    std::vector<double> times[3];
    for (int i = 0; i < steps; ++i)
        for (int k = 0; k < 3; ++k) times[k].push_back(st.step(sides[k].s, sides[k].name));
    for (int k = 0; k < 3; ++k) printSeries(sides[k].name, times[k]);

    CUDA_CHECK(cudaStreamDestroy(blocking));
    CUDA_CHECK(cudaStreamDestroy(nonBlocking));
    CUDA_CHECK(cudaFree(st.dev));
    CUDA_CHECK(cudaFree(st.flag));
    CUDA_CHECK(cudaFreeHost(st.back));
    if (pinned) {
        CUDA_CHECK(cudaFreeHost(st.host));
    } else {
        std::free(st.host);
    }
    return 0;
}
