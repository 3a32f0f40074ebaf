// many_copies.cu: many small cudaMemcpyAsync calls, half from pageable and
// half from pinned memory, for captures of many copies. The copies go in
// batches of --batch calls on one stream, each batch from one kind of host
// memory and in one direction, in the repeating order pageable
// host-to-device, pinned host-to-device, pageable device-to-host, pinned
// device-to-host; the stream is synchronized after every batch.
//
// Usage: many_copies [--copies N] [--batch N] [--kib N]
// Each batch sits in an NVTX range "batch-pageable" or "batch-pinned". The
// program prints the median batch time of each kind and the whole run's.
// Exit status: 0 ok, 1 usage, 2 CUDA error, 3 wrong results.

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include "cap_common.h"

const char* capProgram = "many_copies";

int main(int argc, char** argv) {
    long copies = intFlag(argc, argv, "--copies", 600000);
    long batch = intFlag(argc, argv, "--batch", 1000);
    size_t each = size_t(intFlag(argc, argv, "--kib", 4)) << 10;
    if (copies % (4 * batch) != 0) {
        std::fprintf(stderr, "many_copies: --copies must be a multiple of 4 x --batch\n");
        return 1;
    }
    const size_t slots = 1024;
    size_t bytes = slots * each;

    CUDA_CHECK(cudaSetDevice(0));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    unsigned char* host[2];  // [0] pageable, [1] pinned
    host[0] = static_cast<unsigned char*>(std::malloc(bytes));
    if (!host[0]) {
        std::fprintf(stderr, "many_copies: malloc of %zu bytes failed\n", bytes);
        return 2;
    }
    CUDA_CHECK(cudaMallocHost(&host[1], bytes));
    std::memset(host[0], 7, bytes);
    std::memset(host[1], 7, bytes);
    unsigned char* dev = nullptr;
    CUDA_CHECK(cudaMalloc(&dev, bytes));
    CUDA_CHECK(cudaMemset(dev, 7, bytes));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::printf("many copies on %s: %ld cudaMemcpyAsync calls of %zu KiB in batches of %ld, "
                "half pageable, half pinned, half each direction\n",
                prop.name, copies, each >> 10, batch);

    std::vector<double> t[2];
    double t0 = hostMs();
    for (long b = 0, done = 0; done < copies; ++b, done += batch) {
        int kind = int(b % 2);
        bool toDevice = (b / 2) % 2 == 0;
        double b0 = hostMs();
        nvtxRangePushA(kind ? "batch-pinned" : "batch-pageable");
        for (long i = 0; i < batch; ++i) {
            size_t off = size_t((done + i) % slots) * each;
            if (toDevice) {
                CUDA_CHECK(cudaMemcpyAsync(dev + off, host[kind] + off, each, cudaMemcpyHostToDevice, s));
            } else {
                CUDA_CHECK(cudaMemcpyAsync(host[kind] + off, dev + off, each, cudaMemcpyDeviceToHost, s));
            }
        }
        CUDA_CHECK(cudaStreamSynchronize(s));
        nvtxRangePop();
        t[kind].push_back(hostMs() - b0);
    }
    double total = hostMs() - t0;
    printSeries("batch-pageable", t[0]);
    printSeries("batch-pinned", t[1]);
    std::printf("all %ld copies: %.3f ms\n", copies, total);
    bool ok = host[0][0] == 7 && host[1][bytes - 1] == 7;
    std::printf("results %s\n", ok ? "right" : "WRONG");
    CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaFree(dev));
    CUDA_CHECK(cudaFreeHost(host[1]));
    std::free(host[0]);
    return ok ? 0 : 3;
}
