// pipeline.cu: a host array streamed through two device buffers on two
// streams, chunk by chunk: copy in, a processing kernel, copy back. Each
// buffer belongs to one stream, so stream order keeps a chunk's three steps
// in line; at the end of a pass the first stream waits on an event of the
// second (cudaStreamWaitEvent) and the host waits on an event of the first.
//
// Usage: pipeline [--pinned | --mixed] [--total-mib N] [--chunk-mib N]
//                 [--passes N] [--work N]
//   default   the host array comes from malloc (pageable);
//   --pinned  it comes from cudaMallocHost;
//   --mixed   both arrays exist and the passes alternate between them.
// Each pass sits in an NVTX range: "pass", or with --mixed "pass-pageable"
// and "pass-pinned"; one warm-up pass per kind of memory runs first, in a
// range named "warmup". The program prints every pass's host time and the
// median. Exit status: 0 ok, 1 usage, 2 CUDA error, 3 wrong results.

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cmath>
#include <string>

#include "cap_common.h"
#include "cap_kernels.cuh"

const char* capProgram = "pipeline";

namespace {

constexpr size_t kMiB = size_t(1) << 20;

struct Pipeline {
    size_t total, chunk;
    int work;
    float* dev[2];
    cudaStream_t stream[2];
    cudaEvent_t lastOfSecond, passDone;

    // pass streams the whole host array once and returns its host time in ms.
    double pass(float* host, const char* range) {
        size_t n = chunk / sizeof(float);
        unsigned grid = unsigned((n + 255) / 256);
        double t0 = hostMs();
        nvtxRangePushA(range);
        for (size_t off = 0, i = 0; off < total; off += chunk, ++i) {
            int s = int(i & 1);
            char* h = reinterpret_cast<char*>(host) + off;
            CUDA_CHECK(cudaMemcpyAsync(dev[s], h, chunk, cudaMemcpyHostToDevice, stream[s]));
            process<<<grid, 256, 0, stream[s]>>>(dev[s], n, work);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaMemcpyAsync(h, dev[s], chunk, cudaMemcpyDeviceToHost, stream[s]));
        }
        CUDA_CHECK(cudaEventRecord(lastOfSecond, stream[1]));
        CUDA_CHECK(cudaStreamWaitEvent(stream[0], lastOfSecond, 0));
        CUDA_CHECK(cudaEventRecord(passDone, stream[0]));
        CUDA_CHECK(cudaEventSynchronize(passDone));
        nvtxRangePop();
        return hostMs() - t0;
    }

    // kernelMs times one kernel over one chunk with events, outside any range.
    double kernelMs() {
        size_t n = chunk / sizeof(float);
        cudaEvent_t a, b;
        CUDA_CHECK(cudaEventCreate(&a));
        CUDA_CHECK(cudaEventCreate(&b));
        CUDA_CHECK(cudaEventRecord(a, stream[0]));
        process<<<unsigned((n + 255) / 256), 256, 0, stream[0]>>>(dev[0], n, work);
        CUDA_CHECK(cudaEventRecord(b, stream[0]));
        CUDA_CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
        CUDA_CHECK(cudaEventDestroy(a));
        CUDA_CHECK(cudaEventDestroy(b));
        return ms;
    }
};

// fill writes 1.0 into every element, so every page is touched before timing.
void fill(float* h, size_t bytes) {
    size_t n = bytes / sizeof(float);
    for (size_t i = 0; i < n; ++i) h[i] = 1.0f;
}

// sane checks that every 4097th element stayed inside (0, 2).
bool sane(const float* h, size_t bytes) {
    size_t n = bytes / sizeof(float);
    for (size_t i = 0; i < n; i += 4097)
        if (!(h[i] > 0.0f && h[i] < 2.0f) || std::isnan(h[i])) return false;
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    bool pinned = hasFlag(argc, argv, "--pinned");
    bool mixed = hasFlag(argc, argv, "--mixed");
    if (pinned && mixed) {
        std::fprintf(stderr, "pipeline: --pinned and --mixed exclude each other\n");
        return 1;
    }
    Pipeline p{};
    p.total = size_t(intFlag(argc, argv, "--total-mib", 1024)) * kMiB;
    p.chunk = size_t(intFlag(argc, argv, "--chunk-mib", 64)) * kMiB;
    int passes = int(intFlag(argc, argv, "--passes", 5));
    p.work = int(intFlag(argc, argv, "--work", 1000));
    if (p.total % p.chunk != 0 || p.total / p.chunk < 2) {
        std::fprintf(stderr, "pipeline: --total-mib must be a multiple of --chunk-mib, at least twice it\n");
        return 1;
    }

    CUDA_CHECK(cudaSetDevice(0));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    for (int s = 0; s < 2; ++s) {
        CUDA_CHECK(cudaMalloc(&p.dev[s], p.chunk));
        CUDA_CHECK(cudaStreamCreateWithFlags(&p.stream[s], cudaStreamNonBlocking));
    }
    CUDA_CHECK(cudaEventCreateWithFlags(&p.lastOfSecond, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&p.passDone, cudaEventDisableTiming));

    float* pageable = nullptr;
    float* locked = nullptr;
    if (!pinned) {
        pageable = static_cast<float*>(std::malloc(p.total));
        if (!pageable) {
            std::fprintf(stderr, "pipeline: malloc of %zu bytes failed\n", p.total);
            return 2;
        }
        fill(pageable, p.total);
    }
    if (pinned || mixed) {
        CUDA_CHECK(cudaMallocHost(&locked, p.total));
        fill(locked, p.total);
    }
    const char* memory = mixed ? "pageable and pinned, alternating" : pinned ? "pinned" : "pageable";
    std::printf("pipeline on %s: memory %s, %zu MiB host array, 2 x %zu MiB device buffers on 2 streams, "
                "%zu chunks a pass, kernel %d iterations\n",
                prop.name, memory, p.total / kMiB, p.chunk / kMiB, p.total / p.chunk, p.work);
    std::printf("kernel ms per chunk: %.3f\n", p.kernelMs());

    if (pageable) p.pass(pageable, "warmup");
    if (locked) p.pass(locked, "warmup");
    std::vector<double> times[2];  // [0] pageable, [1] pinned
    for (int i = 0; i < passes; ++i) {
        if (pageable) times[0].push_back(p.pass(pageable, mixed ? "pass-pageable" : "pass"));
        if (locked) times[1].push_back(p.pass(locked, mixed ? "pass-pinned" : "pass"));
    }
    double moved = 2.0 * double(p.total);
    for (int k = 0; k < 2; ++k) {
        if (times[k].empty()) continue;
        std::string label = mixed ? (k ? "pass-pinned" : "pass-pageable") : "pass";
        printSeries(label.c_str(), times[k]);
        std::printf("%s GB/s (both directions, median pass): %.2f\n", label.c_str(),
                    moved / (spreadOf(times[k]).median * 1e-3) / 1e9);
    }
    bool ok = (!pageable || sane(pageable, p.total)) && (!locked || sane(locked, p.total));
    std::printf("results %s\n", ok ? "in range" : "OUT OF RANGE");

    for (int s = 0; s < 2; ++s) {
        CUDA_CHECK(cudaFree(p.dev[s]));
        CUDA_CHECK(cudaStreamDestroy(p.stream[s]));
    }
    CUDA_CHECK(cudaEventDestroy(p.lastOfSecond));
    CUDA_CHECK(cudaEventDestroy(p.passDone));
    std::free(pageable);
    if (locked) CUDA_CHECK(cudaFreeHost(locked));
    return ok ? 0 : 3;
}
