"""What the DataLoader training programs of this folder share: the small
image classifier they train and one epoch of its training loop, each step
in an NVTX range "step" inside one "epoch", the batches moved with
.to(device, non_blocking=True)."""
import time

import torch
from torch import nn


def classifier(dev):
    """The classifier the programs train, on device dev."""
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(64, 10)).to(dev)


def train_epoch(loader, model, dev):
    """Train model for one epoch of loader on dev. Returns every step's host
    time in ms (step start to the next step's start, the last to the end of
    its GPU work), the number of steps and the mean loss."""
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    torch.cuda.nvtx.range_push("epoch")
    total = 0.0
    starts = []
    step = -1
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
    steps = step + 1
    return [(b - a) * 1e3 for a, b in zip(starts, starts[1:])], steps, total / max(steps, 1)
