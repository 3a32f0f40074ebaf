"""A small image-classification training loop fed by a DataLoader, for
captures of an application whose host-to-device copies are pageable or
pinned depending on one switch (--pin-memory). It prints every step's host
time (step start to the next step's start, the last to the end of its GPU
work) and their median."""
import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from capseries import print_series


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pin-memory", action="store_true")
    ap.add_argument("--batches", type=int, default=67)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    torch.manual_seed(0)
    n = args.batches * args.batch_size
    ds = TensorDataset(torch.randn(n, 3, 64, 64), torch.randint(0, 10, (n,)))
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers, pin_memory=args.pin_memory)
    dev = torch.device("cuda", 0)
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(64, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    torch.cuda.nvtx.range_push("epoch")
    total = 0.0
    starts = []
    for step, (x, y) in enumerate(loader):
        starts.append(time.perf_counter())
        torch.cuda.nvtx.range_push("step")
        x = x.to(dev, non_blocking=True)
        y = y.to(dev, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        total += loss.item()
        torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    starts.append(time.perf_counter())
    print_series("step", [(b - a) * 1e3 for a, b in zip(starts, starts[1:])])
    print(f"pin_memory={args.pin_memory} batches={step + 1} mean loss {total / (step + 1):.4f}")


if __name__ == "__main__":
    main()
