"""The lesson's opening scenario in PyTorch: while the model trains on the
default stream, the next batch is copied to the device on a side stream
with .to(device, non_blocking=True); the default stream waits on an event of
the side stream before it uses the batch. The host batches are ordinary
(pageable) tensors or, with --pinned, tensors from .pin_memory() made once
before the loop, or, with --pin-each, pinned again by .pin_memory() every
time they are copied (a new pinned copy of the batch each step).
Each step sits in an NVTX range "step"; warm-up steps in ranges "warmup".
The program prints every step's host time (step start to the next step's
start), their median, and the time of all steps to the end of the last
kernel (torch.cuda.synchronize)."""
import argparse
import time

import torch
from torch import nn

from capseries import print_series


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pinned", action="store_true", help="pin the host batches once, before the loop")
    ap.add_argument("--pin-each", action="store_true", help="pin each batch again, every time it is copied")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmups", type=int, default=5)
    ap.add_argument("--rows", type=int, default=8192)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--batches", type=int, default=4, help="distinct host batches, used in turn")
    args = ap.parse_args()
    torch.manual_seed(0)
    dev = torch.device("cuda", 0)
    xs = [torch.randn(args.rows, args.width) for _ in range(args.batches)]
    ys = [torch.randint(0, 10, (args.rows,)) for _ in range(args.batches)]
    if args.pinned:
        xs = [x.pin_memory() for x in xs]
        ys = [y.pin_memory() for y in ys]
    model = nn.Sequential(
        nn.Linear(args.width, args.width), nn.ReLU(),
        nn.Linear(args.width, args.width), nn.ReLU(),
        nn.Linear(args.width, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    side = torch.cuda.Stream(device=dev)
    main_stream = torch.cuda.current_stream(dev)
    mib = xs[0].numel() * 4 / (1 << 20)
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(dev)}: {args.steps} steps, "
          f"batch {args.rows}x{args.width} float32 ({mib:.0f} MiB) from "
          f"{'pinned (.pin_memory())' if args.pinned else 'pinned each step' if args.pin_each else 'pageable'} tensors, copied on a side stream")

    def prefetch(i):
        x, y = xs[i % args.batches], ys[i % args.batches]
        if args.pin_each:
            x, y = x.pin_memory(), y.pin_memory()
        with torch.cuda.stream(side):
            x = x.to(dev, non_blocking=True)
            y = y.to(dev, non_blocking=True)
            ready = torch.cuda.Event()
            ready.record(side)
        return x, y, ready

    def run(steps, name, starts):
        nxt = prefetch(0)
        for i in range(steps):
            starts.append(time.perf_counter())
            torch.cuda.nvtx.range_push(name)
            x, y, ready = nxt
            main_stream.wait_event(ready)
            x.record_stream(main_stream)
            y.record_stream(main_stream)
            if i + 1 < steps:
                nxt = prefetch(i + 1)
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            torch.cuda.nvtx.range_pop()
        return loss

    run(args.warmups, "warmup", [])
    torch.cuda.synchronize()
    starts = []
    t0 = time.perf_counter()
    loss = run(args.steps, "step", starts)
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    starts.append(t1)
    print_series("step", [(b - a) * 1e3 for a, b in zip(starts, starts[1:])])
    print(f"all {args.steps} steps: {(t1 - t0) * 1e3:.3f} ms")
    print(f"last loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
