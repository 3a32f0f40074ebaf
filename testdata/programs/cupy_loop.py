"""A CuPy loop: each step copies a host array to the device on a stream
(ndarray.set with a stream: cudaMemcpyAsync) and runs an elementwise kernel
on it; the stream is synchronized at the end of the step. The host arrays
are NumPy arrays (pageable) or, with --pinned, cupyx.empty_pinned arrays.
Each step sits in an NVTX range "step" (cupy.cuda.nvtx); warm-up steps in
ranges named "warmup"."""
import argparse
import time

import cupy as cp
import cupyx
import numpy as np
from cupy.cuda import nvtx

from capseries import print_series

WORK = cp.ElementwiseKernel(
    "float32 x", "float32 y",
    "float v = x; for (int k = 0; k < 200; ++k) v = fmaf(v, 0.999f, 0.001f); y = v;",
    "work_steps")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pinned", action="store_true")
    ap.add_argument("--mib", type=int, default=32)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmups", type=int, default=3)
    ap.add_argument("--buffers", type=int, default=4)
    args = ap.parse_args()
    n = args.mib * (1 << 20) // 4
    rng = np.random.default_rng(0)
    arrays = [rng.random(n, dtype=np.float32) for _ in range(args.buffers)]
    if args.pinned:
        pinned = []
        for a in arrays:
            p = cupyx.empty_pinned(a.shape, a.dtype)
            p[...] = a
            pinned.append(p)
        arrays = pinned
    stream = cp.cuda.Stream(non_blocking=True)
    dev = cp.empty(n, cp.float32)
    out = cp.empty_like(dev)
    kind = "pinned (cupyx.empty_pinned)" if args.pinned else "pageable (NumPy)"
    print(f"cupy {cp.__version__} numpy {np.__version__} on {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}: "
          f"{args.steps} steps, {args.mib} MiB host arrays {kind}, {args.buffers} of them in turn")

    def step(i, name):
        t0 = time.perf_counter()
        nvtx.RangePush(name)
        dev.set(arrays[i % len(arrays)], stream=stream)
        with stream:
            WORK(dev, out)
        stream.synchronize()
        nvtx.RangePop()
        return (time.perf_counter() - t0) * 1e3

    for i in range(args.warmups):
        step(i, "warmup")
    t0 = time.perf_counter()
    times = [step(i, "step") for i in range(args.steps)]
    total = (time.perf_counter() - t0) * 1e3
    print_series("step", times)
    print(f"all {args.steps} steps: {total:.3f} ms")
    v = float(out[::4097].max().get())
    print(f"results {'in range' if 0.0 < v < 2.0 else 'OUT OF RANGE'}")
    if not 0.0 < v < 2.0:
        raise SystemExit(3)


if __name__ == "__main__":
    main()
