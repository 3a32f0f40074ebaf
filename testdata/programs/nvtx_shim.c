/* nvtx_shim.c: NVTX push/pop ranges for Python programs that have no NVTX
 * module of their own (jax_loop.py loads it with ctypes). NVTX 3 is
 * header-only; under nsys the calls reach its injection library.
 * Build: gcc -shared -fPIC -O2 -I/usr/local/cuda/include -o libcapnvtx.so nvtx_shim.c -ldl */
#include <nvtx3/nvToolsExt.h>

int cap_range_push(const char* name) { return nvtxRangePushA(name); }
int cap_range_pop(void) { return nvtxRangePop(); }
