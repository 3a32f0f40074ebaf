// graph.cu: a CUDA graph of copy in + kernel + copy back (captured from a
// stream, pinned host buffers) launched 30 times, beside 10 eager
// cudaMemcpyAsync copies from pageable memory outside any graph.
//
// Usage: graph [--launches N] [--eager N] [--mib N] [--work N]
// Each graph launch (and the stream synchronize after it) sits in an NVTX
// range "launch", each eager copy in a range "eager". The program prints
// every launch's and every eager copy's host time and their medians.
// Profile it with nsys's default --cuda-graph-trace=graph (the graph is
// traced whole) and with --cuda-graph-trace=node (each copy and kernel of
// every launch is traced). Exit status: 0 ok, 1 usage, 2 CUDA error,
// 3 wrong results.

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include "cap_common.h"
#include "cap_kernels.cuh"

const char* capProgram = "graph";

int main(int argc, char** argv) {
    int launches = int(intFlag(argc, argv, "--launches", 30));
    int eager = int(intFlag(argc, argv, "--eager", 10));
    size_t bytes = size_t(intFlag(argc, argv, "--mib", 4)) << 20;
    int work = int(intFlag(argc, argv, "--work", 100));
    size_t n = bytes / sizeof(float);

    CUDA_CHECK(cudaSetDevice(0));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    float *in = nullptr, *out = nullptr, *d = nullptr;
    CUDA_CHECK(cudaMallocHost(&in, bytes));
    CUDA_CHECK(cudaMallocHost(&out, bytes));
    CUDA_CHECK(cudaMalloc(&d, bytes));
    float* pageable = static_cast<float*>(std::malloc(bytes));
    if (!pageable) {
        std::fprintf(stderr, "graph: malloc of %zu bytes failed\n", bytes);
        return 2;
    }
    for (size_t i = 0; i < n; ++i) in[i] = pageable[i] = 1.0f;
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CUDA_CHECK(cudaMemcpyAsync(d, in, bytes, cudaMemcpyHostToDevice, s));
    process<<<unsigned((n + 255) / 256), 256, 0, s>>>(d, n, work);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpyAsync(out, d, bytes, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    size_t nodes = 0;
    CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CUDA_CHECK(cudaGraphUpload(exec, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    std::printf("graph on %s: %zu nodes (copy in, kernel, copy back; %zu MiB, pinned), %d launches, "
                "%d eager %zu MiB host-to-device copies from pageable memory\n",
                prop.name, nodes, bytes >> 20, launches, eager, bytes >> 20);

    std::vector<double> launch, copy;
    for (int i = 0; i < launches; ++i) {
        double t0 = hostMs();
        nvtxRangePushA("launch");
        CUDA_CHECK(cudaGraphLaunch(exec, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
        nvtxRangePop();
        launch.push_back(hostMs() - t0);
    }
    for (int i = 0; i < eager; ++i) {
        double t0 = hostMs();
        nvtxRangePushA("eager");
        CUDA_CHECK(cudaMemcpyAsync(d, pageable, bytes, cudaMemcpyHostToDevice, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
        nvtxRangePop();
        copy.push_back(hostMs() - t0);
    }
    printSeries("launch", launch);
    printSeries("eager", copy);
    // One launch from 1.0 gives the same value everywhere: check a few.
    bool ok = out[0] > 0.0f && out[0] < 2.0f && out[n - 1] == out[0] && out[n / 2] == out[0];
    std::printf("results %s\n", ok ? "in range" : "OUT OF RANGE");

    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaFree(d));
    CUDA_CHECK(cudaFreeHost(in));
    CUDA_CHECK(cudaFreeHost(out));
    std::free(pageable);
    return ok ? 0 : 3;
}
