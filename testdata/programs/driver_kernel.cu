// driver_kernel.cu: the kernel driver.cu loads as a cubin through the driver
// API (nvcc -cubin -arch=sm_90 -o driver_kernel.cubin driver_kernel.cu).
// It applies x = x*0.999 + 0.001 work times to every element.
extern "C" __global__ void scale_steps(float* x, unsigned long long n, int work) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        float v = x[i];
        for (int k = 0; k < work; ++k) v = fmaf(v, 0.999f, 0.001f);
        x[i] = v;
    }
}
