"""A long PyTorch training run for captures of scale: a deep, narrow MLP
trained with Adam (foreach=False, so every parameter's update is its own
kernels) on batches copied from pageable host tensors with
.to(device, non_blocking=True), the loss read back every 100 steps. About
180 CUDA API calls a step. Each step sits in an NVTX range "step"."""
import argparse
import statistics
import time

import torch
from torch import nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--rows", type=int, default=256)
    args = ap.parse_args()
    torch.manual_seed(0)
    dev = torch.device("cuda", 0)
    layers = []
    for _ in range(args.layers - 1):
        layers += [nn.Linear(args.width, args.width), nn.ReLU()]
    model = nn.Sequential(*layers, nn.Linear(args.width, 10)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)
    loss_fn = nn.CrossEntropyLoss()
    xs = [torch.randn(args.rows, args.width) for _ in range(8)]
    ys = [torch.randint(0, 10, (args.rows,)) for _ in range(8)]
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(dev)}: {args.steps} steps of a "
          f"{args.layers}-layer MLP (width {args.width}, batch {args.rows}), Adam foreach=False, pageable batches")
    losses, starts = [], []
    t0 = time.perf_counter()
    for i in range(args.steps):
        starts.append(time.perf_counter())
        torch.cuda.nvtx.range_push("step")
        x = xs[i % 8].to(dev, non_blocking=True)
        y = ys[i % 8].to(dev, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if i % 100 == 99:
            losses.append(loss.item())
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    starts.append(t1)
    steps = [(b - a) * 1e3 for a, b in zip(starts, starts[1:])]
    print(f"step median {statistics.median(steps):.3f} ms (min {min(steps):.3f}, max {max(steps):.3f}, n {len(steps)})")
    print(f"all {args.steps} steps: {(t1 - t0) * 1e3:.3f} ms")
    print("loss every 100 steps: " + " ".join(f"{v:.4f}" for v in losses))


if __name__ == "__main__":
    main()
