// driver.cu: copy in, a kernel, copy back, through the CUDA driver API alone:
// cuMemAlloc, cuMemcpyHtoDAsync / cuMemcpyDtoHAsync on a non-blocking
// stream, the kernel of driver_kernel.cubin launched with cuLaunchKernel
// (loaded with cuModuleLoad), cuStreamSynchronize at the end of each step.
//
// Usage: driver --module driver_kernel.cubin [--pinned] [--mib N] [--steps N] [--work N]
//   default   the host buffer comes from malloc (pageable);
//   --pinned  it comes from cuMemHostAlloc.
// Each step sits in an NVTX range "step"; two warm-up steps run first in
// ranges named "warmup". The program prints every step's host time and the
// median. Exit status: 0 ok, 1 usage, 2 CUDA error, 3 wrong results.

#include <cuda.h>
#include <nvtx3/nvToolsExt.h>

#include <cmath>

#include "cap_common.h"

const char* capProgram = "driver";

int main(int argc, char** argv) {
    const char* module = strFlag(argc, argv, "--module", "driver_kernel.cubin");
    bool pinned = hasFlag(argc, argv, "--pinned");
    size_t bytes = size_t(intFlag(argc, argv, "--mib", 64)) << 20;
    int steps = int(intFlag(argc, argv, "--steps", 20));
    int work = int(intFlag(argc, argv, "--work", 1000));

    CU_CHECK(cuInit(0));
    CUdevice dev;
    CU_CHECK(cuDeviceGet(&dev, 0));
    char name[256] = {0};
    CU_CHECK(cuDeviceGetName(name, sizeof name, dev));
    CUcontext ctx;
    CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CU_CHECK(cuCtxSetCurrent(ctx));
    CUmodule mod;
    CUresult loaded = cuModuleLoad(&mod, module);
    if (loaded != CUDA_SUCCESS) {
        const char* why = "?";
        cuGetErrorName(loaded, &why);
        std::fprintf(stderr, "driver: cannot load module %s (%s); build it with "
                             "nvcc -cubin -arch=sm_90 -o driver_kernel.cubin driver_kernel.cu\n",
                     module, why);
        return 2;
    }
    CUfunction fn;
    CU_CHECK(cuModuleGetFunction(&fn, mod, "scale_steps"));
    CUstream stream;
    CU_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CUdeviceptr dbuf;
    CU_CHECK(cuMemAlloc(&dbuf, bytes));

    float* host = nullptr;
    if (pinned) {
        void* p = nullptr;
        CU_CHECK(cuMemHostAlloc(&p, bytes, 0));
        host = static_cast<float*>(p);
    } else {
        host = static_cast<float*>(std::malloc(bytes));
        if (!host) {
            std::fprintf(stderr, "driver: malloc of %zu bytes failed\n", bytes);
            return 2;
        }
    }
    unsigned long long n = bytes / sizeof(float);
    for (unsigned long long i = 0; i < n; ++i) host[i] = 1.0f;
    unsigned grid = unsigned((n + 255) / 256);
    void* args[] = {&dbuf, &n, &work};

    std::printf("driver API on %s: memory %s (%s), %zu MiB copied in and back a step, kernel %d iterations\n",
                name, pinned ? "pinned" : "pageable", pinned ? "cuMemHostAlloc" : "malloc", bytes >> 20, work);
    auto step = [&](const char* range) {
        double t0 = hostMs();
        nvtxRangePushA(range);
        CU_CHECK(cuMemcpyHtoDAsync(dbuf, host, bytes, stream));
        CU_CHECK(cuLaunchKernel(fn, grid, 1, 1, 256, 1, 1, 0, stream, args, nullptr));
        CU_CHECK(cuMemcpyDtoHAsync(host, dbuf, bytes, stream));
        CU_CHECK(cuStreamSynchronize(stream));
        nvtxRangePop();
        return hostMs() - t0;
    };
    step("warmup");
    step("warmup");
    std::vector<double> times;
    for (int i = 0; i < steps; ++i) times.push_back(step("step"));
    printSeries("step", times);
    std::printf("step GB/s (both directions, median step): %.2f\n",
                2.0 * double(bytes) / (spreadOf(times).median * 1e-3) / 1e9);
    bool ok = true;
    for (unsigned long long i = 0; i < n; i += 4097)
        if (!(host[i] > 0.0f && host[i] < 2.0f) || std::isnan(host[i])) ok = false;
    std::printf("results %s\n", ok ? "in range" : "OUT OF RANGE");

    CU_CHECK(cuMemFree(dbuf));
    if (pinned) {
        CU_CHECK(cuMemFreeHost(host));
    } else {
        std::free(host);
    }
    CU_CHECK(cuStreamDestroy(stream));
    CU_CHECK(cuModuleUnload(mod));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));
    return ok ? 0 : 3;
}
