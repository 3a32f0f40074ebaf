// pinned.cu: measures what pinned (page-locked) host memory changes about
// host<->device copies, asynchronous copies and zero-copy kernels.
//
// Part 1   blocking cudaMemcpy host-to-device, pageable vs pinned source,
//          1/4/16/64/256 MiB, 3 warm-ups and 10 timed copies per size.
// Part 1b  the same sweep device-to-host.
// Part 2   64 MiB cudaMemcpyAsync on a non-default stream: how long the call
//          holds the calling thread vs how long until the copy is done.
// Part 3   a scaleCopy kernel over 64 MiB reading device-resident memory vs
//          mapped (zero-copy) pinned host memory.
// Also     device-to-device cudaMemcpy bandwidth, the yardstick for part 3.
//
// Each timed phase sits in an NVTX push/pop range so a capture can find it.
// Usage: pinned [--json FILE]    (FILE receives the results as JSON)
// Exit status: 0 ok, 1 usage, 2 CUDA error, 3 a correctness gate failed.

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CUDA_CHECK(expr)                                                      \
    do {                                                                      \
        cudaError_t err_ = (expr);                                            \
        if (err_ != cudaSuccess) {                                            \
            std::fprintf(stderr, "pinned: CUDA error %s (%d) at %s:%d in %s\n", \
                         cudaGetErrorName(err_), static_cast<int>(err_),      \
                         __FILE__, __LINE__, #expr);                          \
            std::fprintf(stderr, "pinned: %s\n", cudaGetErrorString(err_));   \
            std::exit(2);                                                     \
        }                                                                     \
    } while (0)

namespace {

constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kSizes[] = {1 * kMiB, 4 * kMiB, 16 * kMiB, 64 * kMiB, 256 * kMiB};
constexpr size_t kMaxBytes = 256 * kMiB;
constexpr size_t kProbeBytes = 64 * kMiB;   // part 2
constexpr size_t kKernelBytes = 64 * kMiB;  // part 3, per buffer
constexpr int kWarmups = 3;
constexpr int kTimedRuns = 10;
const char* const kSourceNames[2] = {"pageable", "pinned"};

double hostMs() {
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

double gbps(double bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }

struct CopyRow {
    const char* direction;
    const char* source;
    size_t bytes;
    double ms;
};
struct AsyncRow {
    const char* source;
    double callMs;
    double completionMs;
};
struct KernelRow {
    const char* variant;
    double ms;
};
struct GateRow {
    std::string name;
    bool passed;
    std::string detail;
};

std::vector<CopyRow> gCopies;
std::vector<AsyncRow> gAsync;
std::vector<KernelRow> gKernels;
std::vector<GateRow> gGates;
double gDeviceCopyGBps = 0.0;

// Pattern that differs at every 32-bit word, so a short or shifted copy shows.
void fillPattern(unsigned char* p, size_t bytes, uint32_t seed) {
    uint32_t* w = reinterpret_cast<uint32_t*>(p);
    for (size_t i = 0; i < bytes / 4; ++i) w[i] = static_cast<uint32_t>(i) * 2654435761u + seed;
}

// Compares two buffers; on mismatch records where and returns false.
bool sameBytes(const unsigned char* want, const unsigned char* got, size_t bytes, std::string* detail) {
    if (std::memcmp(want, got, bytes) == 0) return true;
    size_t first = 0;
    while (first < bytes && want[first] == got[first]) ++first;
    size_t count = 0;
    for (size_t i = first; i < bytes; ++i) count += want[i] != got[i];
    char buf[160];
    std::snprintf(buf, sizeof(buf),
                  "%zu of %zu bytes differ; first at offset %zu (want 0x%02x, got 0x%02x)", count,
                  bytes, first, want[first], got[first]);
    *detail = buf;
    return false;
}

void gate(const std::string& name, bool ok, const std::string& detail) {
    gGates.push_back({name, ok, detail});
    if (ok) {
        std::printf("gate %-28s ok\n", name.c_str());
        return;
    }
    std::printf("gate %-28s FAILED: %s\n", name.c_str(), detail.c_str());
    std::fprintf(stderr, "pinned: correctness gate %s failed: %s\n", name.c_str(), detail.c_str());
    std::fflush(stdout);
    std::exit(3);
}

// Full round trip for both host sources in both directions, before timing.
void gateCopies(unsigned char* srcs[2], unsigned char* check, unsigned char* dBuf) {
    for (int s = 0; s < 2; ++s) {
        std::string detail;
        std::memset(check, 0, kMaxBytes);
        CUDA_CHECK(cudaMemcpy(dBuf, srcs[s], kMaxBytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(check, dBuf, kMaxBytes, cudaMemcpyDeviceToHost));
        bool ok = sameBytes(srcs[s], check, kMaxBytes, &detail);
        gate(std::string("h2d-") + kSourceNames[s] + " copy-back", ok, detail);
    }
    // Device-to-host into each destination kind, compared with a pinned reference.
    fillPattern(check, kMaxBytes, 0x5eedu);
    CUDA_CHECK(cudaMemcpy(dBuf, check, kMaxBytes, cudaMemcpyHostToDevice));
    for (int s = 0; s < 2; ++s) {
        std::string detail;
        std::memset(srcs[s], 0, kMaxBytes);
        CUDA_CHECK(cudaMemcpy(srcs[s], dBuf, kMaxBytes, cudaMemcpyDeviceToHost));
        bool ok = sameBytes(check, srcs[s], kMaxBytes, &detail);
        gate(std::string("d2h-") + kSourceNames[s] + " copy-back", ok, detail);
    }
    // Restore identical contents in both sources for the timed parts.
    fillPattern(srcs[0], kMaxBytes, 0x1234u);
    fillPattern(srcs[1], kMaxBytes, 0x1234u);
}

void sweep(const char* direction, cudaMemcpyKind kind, unsigned char* hosts[2], unsigned char* dBuf,
           cudaEvent_t start, cudaEvent_t stop) {
    for (int s = 0; s < 2; ++s) {
        char label[64];
        std::snprintf(label, sizeof(label), "%s-%s", direction, kSourceNames[s]);
        nvtxRangePushA(label);
        for (size_t bytes : kSizes) {
            void* dst = kind == cudaMemcpyHostToDevice ? static_cast<void*>(dBuf) : hosts[s];
            const void* src = kind == cudaMemcpyHostToDevice ? static_cast<void*>(hosts[s]) : dBuf;
            for (int w = 0; w < kWarmups; ++w) CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
            CUDA_CHECK(cudaEventRecord(start));
            for (int r = 0; r < kTimedRuns; ++r) CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
            CUDA_CHECK(cudaEventRecord(stop));
            CUDA_CHECK(cudaEventSynchronize(stop));
            float total = 0.0f;
            CUDA_CHECK(cudaEventElapsedTime(&total, start, stop));
            const double ms = total / kTimedRuns;
            gCopies.push_back({direction, kSourceNames[s], bytes, ms});
            std::printf("%9s %4zu MiB %9.3f ms %7.1f GB/s\n", kSourceNames[s], bytes / kMiB, ms,
                        gbps(static_cast<double>(bytes), ms));
        }
        nvtxRangePop();
    }
}

// Reads in[], writes out[] = scale * in[], 16 bytes per thread per step.
__global__ void scaleCopy(float4* __restrict__ out, const float4* __restrict__ in, size_t n4,
                          float scale) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 v = in[i];
        v.x *= scale;
        v.y *= scale;
        v.z *= scale;
        v.w *= scale;
        out[i] = v;
    }
}

double timeKernel(const char* label, float4* out, const float4* in, size_t n4, int blocks,
                  int threads, cudaEvent_t start, cudaEvent_t stop) {
    nvtxRangePushA(label);
    for (int w = 0; w < kWarmups; ++w) scaleCopy<<<blocks, threads>>>(out, in, n4, 2.0f);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(start));
    for (int r = 0; r < kTimedRuns; ++r) scaleCopy<<<blocks, threads>>>(out, in, n4, 2.0f);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    nvtxRangePop();
    float total = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&total, start, stop));
    return total / kTimedRuns;
}

void gateKernel(const char* variant, float4* dOut, const float4* in, size_t n4, int blocks,
                int threads, const float* hostIn, float* hostCheck) {
    const size_t n = n4 * 4;
    CUDA_CHECK(cudaMemset(dOut, 0, n * sizeof(float)));
    scaleCopy<<<blocks, threads>>>(dOut, in, n4, 2.0f);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hostCheck, dOut, n * sizeof(float), cudaMemcpyDeviceToHost));
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; ++i) {
        if (hostCheck[i] != 2.0f * hostIn[i]) {
            if (first == n) first = i;
            ++bad;
        }
    }
    std::string detail;
    if (bad) {
        char buf[160];
        std::snprintf(buf, sizeof(buf), "%zu of %zu outputs wrong; first at index %zu (want %g, got %g)",
                      bad, n, first, 2.0f * hostIn[first], hostCheck[first]);
        detail = buf;
    }
    gate(std::string("kernel-") + variant, bad == 0, detail);
}

std::string jsonEscape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            out += buf;
        } else {
            out += c;
        }
    }
    return out;
}

bool writeJSON(const char* path, const cudaDeviceProp& prop, int driver, int runtime) {
    FILE* f = std::fopen(path, "w");
    if (!f) {
        std::fprintf(stderr, "pinned: cannot write results to %s: %s\n", path, std::strerror(errno));
        return false;
    }
    std::fprintf(f, "{\n  \"schema\": \"nsyscheck.measurements/v1\",\n");
    std::fprintf(f, "  \"source\": \"pinned.cu results\",\n");
    std::fprintf(f, "  \"gpu\": \"%s\",\n", jsonEscape(prop.name).c_str());
    std::fprintf(f, "  \"driver\": \"%d\",\n  \"cuda\": \"%d\",\n", driver, runtime);
    std::fprintf(f, "  \"copies\": [\n");
    for (size_t i = 0; i < gCopies.size(); ++i) {
        const CopyRow& c = gCopies[i];
        std::fprintf(f,
                     "    {\"direction\": \"%s\", \"source\": \"%s\", \"bytes\": %zu, \"ms\": %.6f, "
                     "\"gbps\": %.4f, \"runs\": %d}%s\n",
                     c.direction, c.source, c.bytes, c.ms, gbps(static_cast<double>(c.bytes), c.ms),
                     kTimedRuns, i + 1 < gCopies.size() ? "," : "");
    }
    std::fprintf(f, "  ],\n  \"async\": [\n");
    for (size_t i = 0; i < gAsync.size(); ++i) {
        const AsyncRow& a = gAsync[i];
        std::fprintf(f,
                     "    {\"source\": \"%s\", \"bytes\": %zu, \"callMs\": %.6f, \"completionMs\": %.6f, "
                     "\"runs\": %d}%s\n",
                     a.source, kProbeBytes, a.callMs, a.completionMs, kTimedRuns,
                     i + 1 < gAsync.size() ? "," : "");
    }
    std::fprintf(f, "  ],\n  \"kernels\": [\n");
    for (size_t i = 0; i < gKernels.size(); ++i) {
        const KernelRow& k = gKernels[i];
        const double bytes = 2.0 * kKernelBytes;
        std::fprintf(f,
                     "    {\"variant\": \"%s\", \"bytes\": %zu, \"msPerLaunch\": %.6f, \"gbps\": %.4f, "
                     "\"runs\": %d}%s\n",
                     k.variant, 2 * kKernelBytes, k.ms, gbps(bytes, k.ms), kTimedRuns,
                     i + 1 < gKernels.size() ? "," : "");
    }
    std::fprintf(f, "  ],\n  \"deviceCopyGBps\": %.4f,\n  \"gates\": [\n", gDeviceCopyGBps);
    for (size_t i = 0; i < gGates.size(); ++i) {
        std::fprintf(f, "    {\"name\": \"%s\", \"passed\": %s, \"detail\": \"%s\"}%s\n",
                     jsonEscape(gGates[i].name).c_str(), gGates[i].passed ? "true" : "false",
                     jsonEscape(gGates[i].detail).c_str(), i + 1 < gGates.size() ? "," : "");
    }
    std::fprintf(f, "  ]\n}\n");
    if (std::fclose(f) != 0) {
        std::fprintf(stderr, "pinned: cannot finish writing %s: %s\n", path, std::strerror(errno));
        return false;
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    const char* jsonPath = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
            jsonPath = argv[++i];
        } else {
            std::fprintf(stderr, "usage: %s [--json FILE]\n", argv[0]);
            return 1;
        }
    }

    int device = 0, driver = 0, runtime = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    std::printf("device: %s (sm_%d%d, %d SMs), driver %d, runtime %d\n", prop.name, prop.major,
                prop.minor, prop.multiProcessorCount, driver, runtime);

    unsigned char* pageable = static_cast<unsigned char*>(std::malloc(kMaxBytes));
    unsigned char* check = nullptr;
    unsigned char* pinned = nullptr;
    if (!pageable) {
        std::fprintf(stderr, "pinned: malloc of %zu bytes failed\n", kMaxBytes);
        return 2;
    }
    CUDA_CHECK(cudaMallocHost(&pinned, kMaxBytes));
    CUDA_CHECK(cudaMallocHost(&check, kMaxBytes));
    unsigned char* dBuf = nullptr;
    unsigned char* dOther = nullptr;
    CUDA_CHECK(cudaMalloc(&dBuf, kMaxBytes));
    CUDA_CHECK(cudaMalloc(&dOther, kMaxBytes));
    fillPattern(pageable, kMaxBytes, 0x1234u);
    fillPattern(pinned, kMaxBytes, 0x1234u);
    unsigned char* hosts[2] = {pageable, pinned};

    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));

    gateCopies(hosts, check, dBuf);

    std::printf("Part 1: blocking H2D\n");
    sweep("h2d", cudaMemcpyHostToDevice, hosts, dBuf, start, stop);
    std::printf("Part 1b: blocking D2H\n");
    sweep("d2h", cudaMemcpyDeviceToHost, hosts, dBuf, start, stop);

    std::printf("Part 2: async call vs completion (%zu MiB)\n", kProbeBytes / kMiB);
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (int s = 0; s < 2; ++s) {
        CUDA_CHECK(cudaMemcpyAsync(dBuf, hosts[s], kProbeBytes, cudaMemcpyHostToDevice, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));  // warm-up, outside the range
        char label[64];
        std::snprintf(label, sizeof(label), "async-%s", kSourceNames[s]);
        nvtxRangePushA(label);
        double callSum = 0.0, completionSum = 0.0;
        for (int r = 0; r < kTimedRuns; ++r) {
            const double t0 = hostMs();
            CUDA_CHECK(cudaMemcpyAsync(dBuf, hosts[s], kProbeBytes, cudaMemcpyHostToDevice, stream));
            const double t1 = hostMs();  // the call has returned
            CUDA_CHECK(cudaStreamSynchronize(stream));
            const double t2 = hostMs();  // the copy has completed
            callSum += t1 - t0;
            completionSum += t2 - t0;
        }
        nvtxRangePop();
        AsyncRow row{kSourceNames[s], callSum / kTimedRuns, completionSum / kTimedRuns};
        gAsync.push_back(row);
        std::printf("%9s call %8.3f ms completion %8.3f ms call is %5.1f%%\n", row.source,
                    row.callMs, row.completionMs, 100.0 * row.callMs / row.completionMs);
    }
    CUDA_CHECK(cudaStreamDestroy(stream));

    // Part 3: zero-copy vs device-resident.
    const size_t n4 = kKernelBytes / sizeof(float4);
    float* hIn = nullptr;     // mapped pinned input
    float4* dMapped = nullptr;
    CUDA_CHECK(cudaHostAlloc(&hIn, kKernelBytes, cudaHostAllocMapped));
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dMapped), hIn, 0));
    for (size_t i = 0; i < kKernelBytes / sizeof(float); ++i) hIn[i] = static_cast<float>(i % 4099) * 0.25f;
    float4* dIn = reinterpret_cast<float4*>(dOther);
    float4* dOut = reinterpret_cast<float4*>(dBuf);
    CUDA_CHECK(cudaMemcpy(dIn, hIn, kKernelBytes, cudaMemcpyHostToDevice));
    const int threads = 256;
    int perSM = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSM, scaleCopy, threads, 0));
    const size_t wanted = (n4 + threads - 1) / threads;
    const size_t resident = static_cast<size_t>(perSM) * prop.multiProcessorCount;
    // One element per thread where that fits in a few waves; grid-stride otherwise.
    const int blocks = static_cast<int>(wanted < resident * 8 ? wanted : resident * 8);
    float* hCheck = reinterpret_cast<float*>(check);

    std::printf("Part 3: zero-copy\n");
    const char* variants[2] = {"device-resident", "zero-copy"};
    const float4* inputs[2] = {dIn, dMapped};
    for (int v = 0; v < 2; ++v) {
        gateKernel(variants[v], dOut, inputs[v], n4, blocks, threads, hIn, hCheck);
        char label[64];
        std::snprintf(label, sizeof(label), "kernel-%s", variants[v]);
        const double ms = timeKernel(label, dOut, inputs[v], n4, blocks, threads, start, stop);
        gKernels.push_back({variants[v], ms});
        std::printf("%16s %8.3f ms/launch %7.1f GB/s\n", variants[v], ms,
                    gbps(2.0 * kKernelBytes, ms));
    }

    // Device-to-device copy bandwidth: what the card's memory sustains.
    nvtxRangePushA("d2d-reference");
    for (int w = 0; w < kWarmups; ++w)
        CUDA_CHECK(cudaMemcpy(dOther, dBuf, kMaxBytes, cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaEventRecord(start));
    for (int r = 0; r < kTimedRuns; ++r)
        CUDA_CHECK(cudaMemcpy(dOther, dBuf, kMaxBytes, cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    nvtxRangePop();
    float d2dTotal = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&d2dTotal, start, stop));
    const double d2dMs = d2dTotal / kTimedRuns;
    gDeviceCopyGBps = gbps(2.0 * kMaxBytes, d2dMs);
    std::printf("Reference: device-to-device cudaMemcpy %zu MiB %8.3f ms %7.1f GB/s (read + write)\n",
                kMaxBytes / kMiB, d2dMs, gDeviceCopyGBps);

    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFreeHost(hIn));
    CUDA_CHECK(cudaFree(dBuf));
    CUDA_CHECK(cudaFree(dOther));
    CUDA_CHECK(cudaFreeHost(check));
    CUDA_CHECK(cudaFreeHost(pinned));
    std::free(pageable);

    if (jsonPath && !writeJSON(jsonPath, prop, driver, runtime)) return 2;
    std::fflush(stdout);
    return 0;
}
