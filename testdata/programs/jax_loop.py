"""A JAX loop: each step puts a host array on the device (jax.device_put)
and runs a jitted reduction over it, then waits for the result. The host
arrays are NumPy arrays (XLA copies them into its own staging buffers
before the host-to-device copy) or, with --pinned, JAX arrays in
memory_kind="pinned_host" memory made once before the loop.
Each step sits in an NVTX range "step" through libcapnvtx.so
(nvtx_shim.c, loaded with ctypes; --nvtx-lib names it); warm-up steps in
ranges "warmup". The program prints every step's host time, the median,
and the whole loop's time.

XLA_PYTHON_CLIENT_PREALLOCATE=false is set here, before JAX starts, rather
than in the environment nsys records. With --compile-cache DIR, compiled
programs are kept in JAX's persistent cache: a first run outside nsys fills
it, so that the profiled run compiles nothing and starts no ptxas
processes (nsys records every child process with its environment)."""
import argparse
import ctypes
import os
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax  # noqa: E402  (after the variable above)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from capseries import print_series  # noqa: E402


class Ranges:
    """NVTX push/pop through the shim, or nothing when it cannot be loaded."""

    def __init__(self, path):
        self.lib = None
        if path and os.path.exists(path):
            self.lib = ctypes.CDLL(path)
            self.lib.cap_range_push.argtypes = [ctypes.c_char_p]

    def push(self, name):
        if self.lib:
            self.lib.cap_range_push(name.encode())

    def pop(self):
        if self.lib:
            self.lib.cap_range_pop()


@jax.jit
def work(x):
    return jnp.sum(jnp.sin(x) * 2.0 + 1.0)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--pinned", action="store_true")
    ap.add_argument("--mib", type=int, default=32)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warmups", type=int, default=3)
    ap.add_argument("--buffers", type=int, default=4)
    ap.add_argument("--nvtx-lib", default=os.path.join(here, "libcapnvtx.so"))
    ap.add_argument("--compile-cache", help="folder of JAX's persistent compilation cache")
    args = ap.parse_args()
    if args.compile_cache:
        jax.config.update("jax_compilation_cache_dir", args.compile_cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    ranges = Ranges(args.nvtx_lib)
    dev = jax.devices()[0]
    on_device = jax.sharding.SingleDeviceSharding(dev, memory_kind="device")
    n = args.mib * (1 << 20) // 4
    rng = np.random.default_rng(0)
    hosts = [rng.random(n, dtype=np.float32) for _ in range(args.buffers)]
    if args.pinned:
        pinned = jax.sharding.SingleDeviceSharding(dev, memory_kind="pinned_host")
        hosts = [jax.device_put(h, pinned) for h in hosts]
        jax.block_until_ready(hosts)
    kind = 'memory_kind="pinned_host" arrays' if args.pinned else "NumPy arrays"
    print(f"jax {jax.__version__} on {dev.device_kind} ({jax.default_backend()}): {args.steps} steps, "
          f"{args.mib} MiB from {kind}, {args.buffers} of them in turn; NVTX ranges "
          f"{'on' if ranges.lib else 'off (no shim)'}")

    def step(i, name):
        t0 = time.perf_counter()
        ranges.push(name)
        x = jax.device_put(hosts[i % len(hosts)], on_device)
        r = work(x).block_until_ready()
        ranges.pop()
        return (time.perf_counter() - t0) * 1e3, float(r)

    for i in range(args.warmups):
        step(i, "warmup")
    t0 = time.perf_counter()
    out = [step(i, "step") for i in range(args.steps)]
    total = (time.perf_counter() - t0) * 1e3
    print_series("step", [t for t, _ in out])
    print(f"all {args.steps} steps: {total:.3f} ms")
    print(f"last sum {out[-1][1]:.1f}")


if __name__ == "__main__":
    main()
