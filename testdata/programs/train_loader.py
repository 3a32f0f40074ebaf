"""A small image-classification training loop fed by a DataLoader, for
captures of an application whose host-to-device copies are pageable or
pinned depending on one switch (--pin-memory). It prints every step's host
time (step start to the next step's start, the last to the end of its GPU
work) and their median."""
import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset

from capseries import print_series
from trainloop import classifier, train_epoch


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
    times, steps, loss = train_epoch(loader, classifier(dev), dev)
    print_series("step", times)
    print(f"pin_memory={args.pin_memory} batches={steps} mean loss {loss:.4f}")


if __name__ == "__main__":
    main()
