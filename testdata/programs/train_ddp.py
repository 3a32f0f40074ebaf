"""One rank of a small data-parallel training job, for captures of a
distributed job: one capture per rank (nsys profile -o report.%q{RANK}).
Every rank trains the same image classifier under DistributedDataParallel
(gloo, which all-reduces the gradients of CUDA tensors through host memory),
fed by a DataLoader of its own shard. The ranks named in --pinned-ranks
load with pin_memory=True; the others load from pageable memory, as a job
does when one launch configuration differs. The rank, world size and
rendezvous come from the environment (RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT), as torchrun sets them. It prints every step's host time and
their median."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from capseries import print_series
from trainloop import classifier, train_epoch


def ranks(text):
    """The ranks a comma-separated list names ("" names none)."""
    return {int(r) for r in text.split(",") if r.strip()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pinned-ranks", type=ranks, default=set(),
                    help="ranks that load with pin_memory=True, e.g. 0,1,3")
    ap.add_argument("--batches", type=int, default=40, help="batches per rank")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", rank=rank, world_size=world)
    pin = rank in args.pinned_ranks
    torch.manual_seed(0)
    n = args.batches * args.batch_size * world
    ds = TensorDataset(torch.randn(n, 3, 64, 64), torch.randint(0, 10, (n,)))
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(ds, batch_size=args.batch_size, sampler=sampler,
                        num_workers=args.workers, pin_memory=pin)
    dev = torch.device("cuda", 0)
    model = DistributedDataParallel(classifier(dev))
    times, steps, loss = train_epoch(loader, model, dev)
    dist.barrier()
    print_series("step", times)
    print(f"rank {rank} of {world} pin_memory={pin} batches={steps} mean loss {loss:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
