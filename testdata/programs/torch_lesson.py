"""The pinned-memory lesson ported to PyTorch, used to make a capture of a
program that follows the lesson without being nsyscheck's own.

Differences from kernels/pinned.cu that a checker must cope with:
  - part 1's copies are Tensor.copy_ (cudaMemcpyAsync + stream synchronize),
    not blocking cudaMemcpy;
  - part 3's kernels are PyTorch's own elementwise kernels, and the zero-copy
    input is a pinned host tensor the GPU reads through its mapped address;
  - the output lines are this script's own format.
"""
import time

import cupy
import torch

MIB = 1 << 20
SIZES = [1, 4, 16, 64, 256]
WARMUPS, TIMED = 3, 10
PROBE = 64 * MIB
KERNEL_BYTES = 64 * MIB


def timed(fn, n):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(n):
        fn()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) / n


def main():
    dev = torch.device("cuda", 0)
    print(f"gpu {torch.cuda.get_device_name(dev)} torch {torch.__version__}")
    pageable = torch.full((256 * MIB,), 7, dtype=torch.uint8)
    pinned = torch.full((256 * MIB,), 7, dtype=torch.uint8).pin_memory()
    assert pinned.is_pinned() and not pageable.is_pinned()
    dbuf = torch.empty(256 * MIB, dtype=torch.uint8, device=dev)
    nvtx = torch.cuda.nvtx

    for direction in ("h2d", "d2h"):
        for name, host in (("pageable", pageable), ("pinned", pinned)):
            nvtx.range_push(f"{direction}-{name}")
            for size in SIZES:
                n = size * MIB
                h, d = host[:n], dbuf[:n]
                if direction == "h2d":
                    op = lambda: d.copy_(h)
                else:
                    op = lambda: h.copy_(d)
                for _ in range(WARMUPS):
                    op()
                ms = timed(op, TIMED)
                print(f"{direction} {name:8s} {size:4d} MiB {ms:9.4f} ms {n / ms / 1e6:7.2f} GB/s")
            nvtx.range_pop()

    stream = torch.cuda.Stream(device=dev)
    with torch.cuda.stream(stream):
        for name, host in (("pageable", pageable), ("pinned", pinned)):
            src, dst = host[:PROBE], dbuf[:PROBE]
            dst.copy_(src, non_blocking=True)
            stream.synchronize()
            nvtx.range_push(f"async-{name}")
            call = done = 0.0
            for _ in range(TIMED):
                t0 = time.perf_counter()
                dst.copy_(src, non_blocking=True)
                t1 = time.perf_counter()
                stream.synchronize()
                t2 = time.perf_counter()
                call += t1 - t0
                done += t2 - t0
            nvtx.range_pop()
            print(f"async {name:8s} call {call / TIMED * 1e3:8.3f} ms completion {done / TIMED * 1e3:8.3f} ms")

    n = KERNEL_BYTES // 4
    host_in = torch.arange(n, dtype=torch.float32).remainder_(4099).mul_(0.25).pin_memory()
    # The GPU reads pinned host memory through its mapped (unified) address.
    mem = cupy.cuda.UnownedMemory(host_in.data_ptr(), KERNEL_BYTES, host_in, device_id=0)
    mapped = torch.from_dlpack(cupy.ndarray((n,), cupy.float32, cupy.cuda.MemoryPointer(mem, 0)))
    resident = host_in.to(dev)
    out = torch.empty(n, dtype=torch.float32, device=dev)
    want = host_in * 2.0
    for name, src in (("device-resident", resident), ("zero-copy", mapped)):
        torch.mul(src, 2.0, out=out)  # gate
        if not torch.equal(out.cpu(), want):
            raise SystemExit(f"gate failed for {name}")
        nvtx.range_push(f"kernel-{name}")
        for _ in range(WARMUPS):
            torch.mul(src, 2.0, out=out)
        ms = timed(lambda: torch.mul(src, 2.0, out=out), TIMED)
        nvtx.range_pop()
        print(f"kernel {name:16s} {ms:8.3f} ms {2 * KERNEL_BYTES / ms / 1e6:8.1f} GB/s")


if __name__ == "__main__":
    main()
